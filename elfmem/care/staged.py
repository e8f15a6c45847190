"""The pre-commit check: memory files as git's index holds them must be valid before they commit.

libgit2 runs no hooks and elfmem validates its own writes in-process, but a person's ``git commit``
of a hand edit passes only through this. Files are read with the git binary, not libgit2, because
only git knows the ``GIT_INDEX_FILE`` that ``commit -a`` and ``commit <path>`` stage into. Every
staged file under ``.elfmem/`` (the config, the roster, a file a person adds) is read for
credentials; the memory's Markdown files are also parsed and checked for markers and duplicates.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elfmem.block.damage import OPEN_RE, conflict_recovery, find_conflicts
from elfmem.block.layout import MEMORY_DIR, SELF_FILE
from elfmem.block.parse import FRONTMATTER_OPEN, parse_bytes
from elfmem.errors import BlockFormatError
from elfmem.gitprogram import run_git
from elfmem.rhythms.results import Result

_OPENER = FRONTMATTER_OPEN.encode()
_ID_RE = re.compile(rb"^" + re.escape(_OPENER) + rb"(\S+)", re.M)
"""A block's id, scanned without a parse: files not staged are only looked through for ids."""
SELF_PATH = f"{MEMORY_DIR}/{SELF_FILE}"
ELFMEM_DIR = ".elfmem"
JOURNAL = "elfmem/journal.json"
"""The intent journal of elfmem's writer, in the git dir (``store/journal.py``)."""


@dataclass(frozen=True)
class StagedCheck(Result):
    files: list[str]
    problems: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def summary(self) -> str:
        if self.ok:
            return f"OK: {len(self.files)} staged file(s) under .elfmem/ are valid."
        lines = [
            f"elfmem: commit refused: {len(self.problems)} problem(s) in staged .elfmem/ files."
        ]
        for p in self.problems:
            lines += [f"{p['path']}:{p['line']}: {p['message']}", f"    fix: {p['recovery']}"]
        lines.append(
            "Fix the file(s), `git add` them and commit again (`elfmem index check` "
            "checks the working tree; `git commit --no-verify` skips this check)."
        )
        return "\n".join(lines)


def _problem(path: str, line: int, message: str, recovery: str) -> dict[str, Any]:
    return {"path": path, "line": line, "message": message, "recovery": recovery}


def _staged_paths(root: Path) -> list[str]:
    out = run_git(
        root,
        "diff",
        "--cached",
        "--name-only",
        "-z",
        "--no-renames",
        "--diff-filter=ACMRT",
        "--",
        f":(top){ELFMEM_DIR}",
    )
    return [p for p in out.decode().split("\0") if p]


def _is_memory_file(path: str) -> bool:
    return path.startswith(f"{MEMORY_DIR}/") and path.endswith(".md")


def _index_blobs(root: Path) -> dict[str, str]:
    """Every file under ``.elfmem/`` in git's index (the one this commit uses): path → blob oid."""
    out = run_git(root, "ls-files", "--stage", "-z", "--", f":(top){ELFMEM_DIR}")
    blobs: dict[str, str] = {}
    for record in out.decode().split("\0"):
        meta, _, path = record.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[0].startswith("100"):
            blobs[path] = parts[1]
    return blobs


def _read_blobs(root: Path, oids: Sequence[str]) -> dict[str, bytes]:
    out = run_git(root, "cat-file", "--batch", stdin="".join(f"{o}\n" for o in oids).encode())
    data: dict[str, bytes] = {}
    pos = 0
    while pos < len(out):
        header_end = out.index(b"\n", pos)
        oid, _, size = out[pos:header_end].decode().split(" ")
        data[oid] = out[header_end + 1 : header_end + 1 + int(size)]
        pos = header_end + 1 + int(size) + 1
    return data


def _id_line(data: bytes, block_id: bytes) -> int:
    match = re.search(rb"^" + re.escape(_OPENER + block_id) + rb"\s", data, re.M)
    return data.count(b"\n", 0, match.start()) + 1 if match else 0


def _markers(path: str, lines: list[str]) -> list[dict[str, Any]]:
    """Each conflict region, as the reader finds it, and any ``<<<<<<<`` line left over from
    a resolution (elfmem escapes one in a body; a lone ``=======`` or ``>>>>>>>`` is content)."""
    regions = find_conflicts(lines)
    inside = {i for c in regions for i in range(c.open, c.close + 1)}
    leftover = [i for i, line in enumerate(lines) if OPEN_RE.match(line) and i not in inside]
    found = [(c.open, f"lines {c.open + 1}-{c.close + 1}") for c in regions]
    found += [(i, "a leftover `<<<<<<<` line") for i in leftover]
    return [
        _problem(
            path,
            i + 1,
            f"merge conflict markers (<<<<<<< / ======= / >>>>>>>): {what}",
            conflict_recovery(path),
        )
        for i, what in sorted(found)
    ]


def _secrets(path: str, text: str) -> list[dict[str, Any]]:
    """Credentials in a staged file, by line and kind; the value is never shown."""
    from elfmem.block.credentials import hits  # the patterns load for a commit's check only

    return [
        _problem(
            path,
            text.count("\n", 0, hit.start) + 1,
            f"looks like a secret ({hit.kind}; the value is not shown)",
            "Remove the credential and `git add` the file again (git history is forever); "
            "if it is a false positive, commit with `git commit --no-verify`.",
        )
        for hit in hits(text)
    ]


def _check_file(path: str, data: bytes) -> list[dict[str, Any]]:
    text = data.decode("utf-8", "replace")
    if not _is_memory_file(path):
        return [] if b"\0" in data else _secrets(path, text)
    lines = text.replace("\r\n", "\n").split("\n")
    problems = _markers(path, lines) + _secrets(path, text)
    if problems or path == SELF_PATH:
        return problems
    try:
        parse_bytes(data, path)
    except BlockFormatError as exc:
        message = exc.message.removeprefix(f"{exc.path}:{exc.line}: ")
        problems.append(_problem(exc.path or path, exc.line, message, exc.recovery))
    return problems


def _duplicates(files: dict[str, bytes], checked: set[str]) -> list[dict[str, Any]]:
    """Block ids found in two files (repeats inside one file are the parser's to report)."""
    first: dict[bytes, str] = {}
    clashes: dict[bytes, list[str]] = {}
    for path, data in files.items():
        for block_id in set(_ID_RE.findall(data)):
            other = first.setdefault(block_id, path)
            if other != path:
                clashes.setdefault(block_id, [other]).append(path)
    problems = []
    for block_id, paths in sorted(clashes.items()):
        here = next((p for p in paths if p in checked), paths[0])
        others = ", ".join(f"{p}:{_id_line(files[p], block_id)}" for p in paths if p != here)
        problems.append(
            _problem(
                here,
                _id_line(files[here], block_id),
                f"block id {block_id.decode(errors='replace')} is also used at {others}",
                "A block lives in one file: delete the copy, or give one of them "
                "a new id (16 lowercase hex digits).",
            )
        )
    return problems


def _journal(root: Path) -> dict[str, Any] | None:
    """The intent journal of an elfmem write in progress or interrupted (``store/journal.py``),
    read as JSON: importing the store would load pygit2 into every commit."""
    where = run_git(root, "rev-parse", "--git-path", JOURNAL).decode().strip()
    try:
        raw = json.loads((root / where).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return raw if isinstance(raw, dict) and isinstance(raw.get("paths"), dict) else None


def _interrupted(root: Path) -> list[dict[str, Any]]:
    """Part, but not all, of an interrupted elfmem write staged for this commit.

    A write changes its files one by one; killed in between, ``git add -A`` or ``commit -a``
    would commit the files it already wrote with those it had not, which can leave a moving
    block in two files. The journal names every path and the blob each was to hold."""
    journal = _journal(root)
    if journal is None:
        return []
    states = {p: s for p, s in journal["paths"].items() if s.get("after") != s.get("before")}
    if not states:
        return []
    specs = [f":(top,literal){p}" for p in states]
    out = run_git(root, "ls-files", "--stage", "-z", "--", *specs).decode()
    staged = {
        path: meta.split()[1]
        for meta, _, path in (r.partition("\t") for r in out.split("\0") if r)
        if len(meta.split()) == 3
    }
    taken = sorted(p for p, s in states.items() if staged.get(p) == s.get("after"))
    left = sorted(p for p in states if p not in taken)
    if not taken or not left:
        return []
    return [
        _problem(
            left[0],
            1,
            f"an elfmem write (process {journal.get('pid', '?')}) was interrupted, and this "
            f"commit would take only part of it: {', '.join(taken)} as it wrote them but "
            f"{', '.join(left)} as before, which can put a block in two files or none",
            "Run any elfmem command (e.g. `elfmem status`): it finishes or undoes the write. "
            "Then `git add` your own files and commit again.",
        )
    ]


def check_staged(root: Path, paths: Sequence[str] = ()) -> StagedCheck:
    """Validate the files under ``.elfmem/`` as git's index holds them (``paths``, or those staged).

    None may carry a credential; each memory file must parse and carry no conflict markers, and no
    block id may appear in two files of the index. With nothing under ``.elfmem`` staged it costs
    one ``git diff``.
    """
    wanted = [p for p in paths if p.startswith(f"{ELFMEM_DIR}/")] if paths else _staged_paths(root)
    if not wanted:
        return StagedCheck([])
    interrupted = _interrupted(root)
    blobs = _index_blobs(root)
    checked = sorted(p for p in set(wanted) if p in blobs)
    contents = _read_blobs(root, sorted(set(blobs.values())))
    problems: list[dict[str, Any]] = []
    parsed: dict[str, bytes] = {}
    for path, oid in sorted(blobs.items()):
        found = _check_file(path, contents[oid]) if path in checked else []
        problems += found
        if not found and path != SELF_PATH and _is_memory_file(path):
            parsed[path] = contents[oid]
    return StagedCheck(checked, interrupted + problems + _duplicates(parsed, set(checked)))
