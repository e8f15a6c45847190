"""Every link in the docs resolves inside the repository.

A reader who follows a link in README.md, docs/ or bench/README.md must land on a file of this
repository, and on the heading a ``#fragment`` names (GitHub's slug of it); the only links that
leave the repository are http(s) links to public sources. The docs must not send a reader to a
design page that is not in the repository either.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)"
)
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
AUTOLINK = re.compile(r"<([a-zA-Z][a-zA-Z0-9+.-]*:[^>\s]+)>")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)
PRIVATE_HOSTS = re.compile(r"^(localhost|127\.|0\.0\.0\.0|10\.|192\.168\.|\[::1\])")


def doc_files(root: Path = ROOT) -> list[Path]:
    """README.md, every Markdown page under docs/, and bench/README.md when there is one."""
    files = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    bench = root / "bench" / "README.md"
    return files + [bench] if bench.is_file() else files


def prose_lines(text: str) -> list[tuple[int, str]]:
    """Numbered lines outside fenced code blocks."""
    lines: list[tuple[int, str]] = []
    fenced = False
    for n, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((n, line))
    return lines


def links(text: str) -> list[tuple[int, str]]:
    """Every link target in a page: inline links and images, reference definitions, autolinks."""
    found: list[tuple[int, str]] = []
    for n, raw in prose_lines(text):
        line = CODE_SPAN.sub("", raw)
        targets = [m.group(1) for m in INLINE_LINK.finditer(line)]
        targets += [m.group(1) for m in REFERENCE_DEF.finditer(line)]
        targets += [m.group(1) for m in AUTOLINK.finditer(line)]
        found += [(n, t.strip("<>")) for t in targets]
    return found


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text lower-cased, punctuation dropped, spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "").lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The fragments a page answers to: its headings' slugs (repeats numbered) and HTML ids."""
    text = path.read_text(encoding="utf-8")
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line in prose_lines(text):
        found.update(HTML_ANCHOR.findall(line))
        m = HEADING.match(line)
        if m is None:
            continue
        base = slug(m.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def problem(page: Path, target: str, root: Path = ROOT) -> str | None:
    """Why a link from ``page`` does not resolve inside the repository, or None when it does."""
    parts = urlsplit(target)
    if parts.scheme in ("http", "https"):
        host = parts.hostname or ""
        return f"points at a private host ({host})" if PRIVATE_HOSTS.match(host) else None
    if parts.scheme or parts.netloc:
        return "leaves the repository (only http(s) links to public sources may)"
    if target.startswith("/"):
        return "is an absolute path, which leaves the repository"
    dest = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
    if not dest.is_relative_to(root):
        return "points outside the repository"
    if not dest.exists():
        return f"points at {dest.relative_to(root)}, which does not exist"
    if parts.fragment and dest.suffix == ".md":
        if dest.is_dir() or unquote(parts.fragment).lower() not in anchors(dest):
            return f"names #{parts.fragment}, which is no heading of {dest.relative_to(root)}"
    return None


def broken_links(root: Path = ROOT) -> list[str]:
    """Every link in the docs that does not resolve, as ``file:line: target: why``."""
    found: list[str] = []
    for page in doc_files(root):
        for n, target in links(page.read_text(encoding="utf-8")):
            why = problem(page, target, root)
            if why is not None:
                found.append(f"{page.relative_to(root)}:{n}: {target}: {why}")
    return found


def test_every_link_in_the_docs_resolves_inside_the_repository() -> None:
    assert broken_links() == []


def test_no_page_sends_a_reader_to_a_design_page_outside_the_repository() -> None:
    mentions = [
        f"{page.relative_to(ROOT)}:{n}"
        for page in doc_files()
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1)
        if "DESIGN.md" in line or re.search(r"DESIGN §", line)
    ]
    assert mentions == []


def test_the_docs_have_links_to_check() -> None:
    pages = doc_files()
    assert ROOT / "README.md" in pages
    assert ROOT / "docs" / "decisions" / "README.md" in pages
    assert sum(len(links(p.read_text(encoding="utf-8"))) for p in pages) > 50


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        (
            "3. Corrections win, until outcomes refute them",
            "3-corrections-win-until-outcomes-refute-them",
        ),
        ("`elfmem sync [REMOTE]`", "elfmem-sync-remote"),
        ("Merging memory", "merging-memory"),
        ("The inbox is searched", "the-inbox-is-searched"),
        ("Tiers and the score shown", "tiers-and-the-score-shown"),
        ("[ranking](ranking.md): the *rules*", "ranking-the-rules"),
        (
            "A named time lifts a block by at most 0.15 of the top",
            "a-named-time-lifts-a-block-by-at-most-015-of-the-top",
        ),
    ],
)
def test_slugs_follow_github(heading: str, expected: str) -> None:
    assert slug(heading) == expected


def test_a_broken_link_is_reported(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## Some part\n", encoding="utf-8")
    (tmp_path / "README.md").write_text(
        "\n".join(
            [
                "[fine](docs/a.md) [fine](docs/a.md#some-part) [web](https://example.org/x)",
                "[missing file](docs/b.md)",
                "[missing heading](docs/a.md#another-part)",
                "[outside](../elsewhere.md)",
                "[absolute](/work/shared/DESIGN.md)",
                "[local](http://localhost:8000/)",
                "[mail](mailto:someone@example.org)",
                "`[in code](docs/nothing.md)`",
                "```",
                "[in a fence](docs/nothing.md)",
                "```",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    reported = broken_links(tmp_path)
    assert [r.split(": ")[0] for r in reported] == [f"README.md:{n}" for n in range(2, 8)]
