"""MCP results carry the file problems a call worked around as a ``warnings`` list."""

from __future__ import annotations

from pathlib import Path

from elfmem.api import MemorySystem
from tests.conftest import arun, git
from tests.mcp.test_server import call, connected, ok


def _two_copies(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    folder = repo / ".elfmem" / "memory" / "notes" / "knowledge"
    folder.mkdir(parents=True, exist_ok=True)
    for month, body in (("2026-01", "first copy"), ("2026-02", "second copy")):
        (folder / f"{month}.md").write_text(
            f"## {body}\n<!-- id: 00000000000000aa  cls: knowledge  tags: [] -->\n\n{body}\n"
        )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one id in two files")


def test_reads_warn_and_a_refused_write_names_both_files(repo: Path) -> None:
    _two_copies(repo)

    async def scenario() -> None:
        async with connected(repo) as client:
            listed = await ok(client, "elfmem_ls")
            assert [b["content"] for b in listed["blocks"] if b["id"] == "00000000000000aa"] == [
                "first copy"
            ]
            [warning] = [w for w in listed["warnings"] if "00000000000000aa" in w]
            assert "2026-01.md" in warning and "2026-02.md" in warning
            is_error, body = await call(
                client, "elfmem_edit", block_id="00000000000000aa", content="changed"
            )
            assert is_error and "2026-02.md" in body["error"] and body["recovery"]
            assert body["warnings"]

    arun(scenario())
