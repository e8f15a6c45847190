"""visualise: the graph is collected from the index, embedded inertly, and the page really draws it.

The browser tests drive Debian's headless Chromium against the written file and read back what the
page's own script wrote into the DOM, what it logged, and the pixels it painted.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.api import MemorySystem
from elfmem.care import visualise as vis
from elfmem.cli import cli
from elfmem.errors import InvalidInput
from tests.conftest import arun, git

CHROMIUM = "/usr/bin/chromium"
needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists() and not os.environ.get("CI"),
    reason="Debian's chromium is not installed (apt-get install -y chromium); .ci/run installs it",
)
"""Skipped on a developer's machine without Chromium; in CI (CI set) a missing one fails."""
HOSTILE = "Tricky </script><script>document.title='pwned'</script> & <b>bold</b>"
SEEDED = 10


def make_memory(repo: Path) -> dict[str, str]:
    """Seeded identity, three dreamed blocks, one in the inbox, one hand-declared relation."""

    async def build() -> dict[str, str]:
        system, _ = await MemorySystem.init(repo, seed=True)
        a = await system.remember(
            "Use Redis for session caching", cue="session cache", tags=["db/redis"]
        )
        b = await system.remember(
            "Redis needs a maxmemory-policy or it never evicts",
            cue="redis memory",
            tags=["db/redis"],
        )
        c = await system.remember(HOSTILE, cue="escaping </ in a cue")
        await system.dream(no_llm=True)
        d = await system.remember("The staging box is slow today", category="observation")
        await system.close()
        return {"a": a.block_id, "b": b.block_id, "c": c.block_id, "d": d.block_id}

    ids = arun(build())
    bucket = next((repo / ".elfmem/memory/notes/knowledge").glob("*.md"))
    text = bucket.read_text()
    header_end = text.index("\n", text.index(f"<!-- id: {ids['a']} "))
    bucket.write_text(
        text[: header_end + 1] + f"supports:: [[{ids['b']}]]\n" + text[header_end + 1 :]
    )
    git(repo, "commit", "-q", "-am", "Declare that the session-cache note supports the Redis note")
    return ids


def draw(
    repo: Path, out: Path | None = None, archived: bool = False, max_nodes: int = 100
) -> vis.VisualiseResult:
    async def go() -> vis.VisualiseResult:
        system = await MemorySystem.from_config(repo)
        try:
            return vis.visualise(system._core, out, archived, max_nodes)
        finally:
            await system.close()

    return arun(go())


def page_data(path: Path) -> dict[str, object]:
    html = path.read_text()
    m = re.search(r'<script type="application/json" id="graph-data">(.*?)</script>', html, re.S)
    assert m is not None
    return json.loads(m.group(1))  # type: ignore[no-any-return]


def test_graph_holds_every_live_block_and_the_declared_edge_with_direction(repo: Path) -> None:
    ids = make_memory(repo)
    result = draw(repo)
    assert (result.nodes, result.omitted) == (SEEDED + 4, 0)
    assert result.edge_kinds is not None and result.edge_kinds["declared"] == 1
    data = page_data(Path(result.path))
    declared = [e for e in data["edges"] if e["family"] == "declared"]  # type: ignore[attr-defined]
    assert declared == [
        {
            "source": ids["a"],
            "kind": "supports",
            "target": ids["b"],
            "family": "declared",
            "weight": 1.0,
        }
    ]
    nodes = {n["id"]: n for n in data["nodes"]}  # type: ignore[attr-defined]
    assert nodes[ids["d"]]["status"] == "inbox" and nodes[ids["d"]]["tier"] == "ephemeral"
    assert (
        nodes[ids["c"]]["content"] == HOSTILE and nodes[ids["c"]]["cue"] == "escaping </ in a cue"
    )
    identity = [n for n in nodes.values() if n["identity"]]
    assert len(identity) == SEEDED and {n["tier"] for n in identity} == {"permanent"}
    assert {n["confidence"] for n in nodes.values()} == {0.5}


def test_default_page_lives_in_the_git_dir_and_nothing_is_committed(repo: Path) -> None:
    make_memory(repo)
    head = git(repo, "rev-parse", "HEAD")
    result = draw(repo)
    assert Path(result.path) == repo / ".git" / "elfmem" / "graph.html"
    assert git(repo, "status", "--porcelain") == "" and git(repo, "rev-parse", "HEAD") == head


def test_max_nodes_keeps_identity_then_the_connected(repo: Path) -> None:
    ids = make_memory(repo)
    result = draw(repo, max_nodes=SEEDED + 2)
    kept = {n["id"] for n in page_data(Path(result.path))["nodes"]}  # type: ignore[attr-defined]
    assert result.omitted == 2 and result.edge_kinds and result.edge_kinds["declared"] == 1
    assert ids["a"] in kept and ids["b"] in kept and ids["c"] not in kept and ids["d"] not in kept
    assert draw(repo, max_nodes=SEEDED).edges == 0


def test_archived_blocks_appear_only_when_asked(repo: Path) -> None:
    ids = make_memory(repo)

    async def forget() -> None:
        system = await MemorySystem.from_config(repo)
        await system.forget(ids["c"])
        await system.close()

    arun(forget())
    assert draw(repo).nodes == SEEDED + 3
    with_archived = draw(repo, archived=True)
    nodes = {n["id"]: n for n in page_data(Path(with_archived.path))["nodes"]}  # type: ignore[attr-defined]
    assert with_archived.nodes == SEEDED + 4 and nodes[ids["c"]]["status"] == "archived"


def test_max_nodes_below_one_is_refused_with_a_recovery(repo: Path) -> None:
    arun(MemorySystem.init(repo))
    with pytest.raises(InvalidInput) as err:
        draw(repo, max_nodes=0)
    assert "--max-nodes" in err.value.recovery


def test_embedded_json_cannot_close_its_script_and_round_trips() -> None:
    value = {"content": HOSTILE + " <!-- x --> ]]>", "cue": "\u2028"}
    text = vis.page_json(value)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == value


def test_page_is_self_contained(repo: Path, tmp_path: Path) -> None:
    make_memory(repo)
    html = Path(draw(repo, out=tmp_path / "g.html").path).read_text()
    for needle in ("http://", "https://", "<link", " src=", "@import", "url(", "@font-face"):
        assert needle not in html
    assert "<script>document.title" not in html and "innerHTML" not in html
    assert html.count("</script>") == 3  # the error sink, the data block, the page script


def test_cli_writes_the_page_and_prints_its_path(repo: Path, tmp_path: Path) -> None:
    make_memory(repo)
    out = tmp_path / "nested" / "graph.html"
    runner = CliRunner()
    res = runner.invoke(cli, ["-C", str(repo), "visualise", "-o", str(out), "--json"])
    assert res.exit_code == 0, res.stderr
    payload = json.loads(res.stdout)
    assert payload["path"] == str(out) and payload["nodes"] == SEEDED + 4 and out.exists()
    res = runner.invoke(cli, ["-C", str(repo), "visualise"])
    assert res.exit_code == 0 and str(repo / ".git" / "elfmem" / "graph.html") in res.stdout
    assert runner.invoke(cli, ["-C", str(repo), "visualise", "--max-nodes", "0"]).exit_code == 2


# ---- the page in a real browser ----------------------------------------------------------------


def chromium(tmp: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    assert Path(CHROMIUM).exists(), "Chromium is missing: .ci/run installs it (apt-get install)"
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp / 'chromium-profile'}",
        "--enable-logging=stderr",
        "--v=0",
        *extra,
        url,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)


def body_attrs(dom: str) -> dict[str, str]:
    m = re.search(r"<body([^>]*)>", dom)
    assert m is not None, dom[:500]
    return dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(1)))


@pytest.mark.slow
@needs_chromium
def test_page_lays_out_every_block_opens_the_panel_as_text_and_paints(
    repo: Path, tmp_path: Path
) -> None:
    ids = make_memory(repo)
    result = draw(repo, out=tmp_path / "graph.html")
    shot = tmp_path / "shot.png"
    url = f"{Path(result.path).as_uri()}#select={ids['c']}"
    run = chromium(
        tmp_path,
        url,
        "--dump-dom",
        f"--screenshot={shot}",
        "--window-size=1200,800",
        "--hide-scrollbars",
    )
    attrs = body_attrs(run.stdout)
    assert attrs["data-ready"] == "1", run.stderr[-2000:]
    assert attrs["data-node-count"] == str(result.nodes) == str(SEEDED + 4)
    assert attrs["data-edge-count"] == str(result.edges) and attrs["data-error-count"] == "0"
    assert "Uncaught" not in run.stderr
    # The hostile block reached the panel as text: escaped by the DOM, and it ran nothing.
    assert attrs["data-selected"] == ids["c"]
    panel = run.stdout[run.stdout.index('<aside id="panel"') :]
    assert "&lt;/script&gt;&lt;script&gt;document.title='pwned'" in panel
    assert "<title>elfmem memory graph</title>" in run.stdout and "<b>bold</b>" not in run.stdout
    colours = png_colours(shot.read_bytes())
    assert len(colours) > 50
    for hex_colour in ("6a3fd4", "34a56f"):  # permanent identity, standard knowledge
        assert bytes.fromhex(hex_colour) in colours, hex_colour


@pytest.mark.slow
@needs_chromium
def test_search_counts_the_blocks_it_highlights(repo: Path, tmp_path: Path) -> None:
    make_memory(repo)
    result = draw(repo, out=tmp_path / "graph.html")
    run = chromium(tmp_path, f"{Path(result.path).as_uri()}#q=REDIS%20memory", "--dump-dom")
    attrs = body_attrs(run.stdout)
    assert attrs["data-error-count"] == "0" and attrs["data-match-count"] == "1"
    assert "1 of 14 match" in run.stdout


@pytest.mark.slow
@needs_chromium
def test_a_script_error_is_caught_and_shown_in_the_page(tmp_path: Path) -> None:
    broken = vis.PAGE_FILE.read_text().replace(vis.DATA_SLOT, "{not json")
    page = tmp_path / "broken.html"
    page.write_text(broken)
    run = chromium(tmp_path, page.as_uri(), "--dump-dom")
    attrs = body_attrs(run.stdout)
    assert attrs["data-ready"] == "0" and attrs["data-error-count"] == "1"
    assert "SyntaxError" in run.stdout[run.stdout.index('<div id="errors"') :]


def png_colours(data: bytes) -> set[bytes]:
    """Every distinct RGB value in an 8-bit, non-interlaced RGB or RGBA PNG (stdlib only)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    width = height = bpp = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, chunk = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and interlace == 0 and colour in (2, 6)
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
    raw, stride = zlib.decompress(idat), width * bpp
    prev, colours = bytearray(stride), set[bytes]()
    for y in range(height):
        start = y * (stride + 1)
        kind_byte, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind_byte == 1:
                line[i] = (line[i] + left) & 255
            elif kind_byte == 2:
                line[i] = (line[i] + up) & 255
            elif kind_byte == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind_byte == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 255
        colours.update(bytes(line[x : x + 3]) for x in range(0, stride, bpp))
        prev = line
    return colours
