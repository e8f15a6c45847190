"""The MCP remember tools take ``supersedes``: the correction and its link in one commit, an
unknown id an error envelope with a recovery. A real MCP client over the SDK."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import arun, git
from tests.mcp.test_server import connected, fails, memory, ok

__all__ = ["memory"]  # the fixture, used by name


def test_remember_and_remember_many_declare_what_they_supersede(memory: Path) -> None:
    async def scenario() -> None:
        async with connected(memory) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "supersedes" in tools["elfmem_remember"].input_schema["properties"]
            old = await ok(client, "elfmem_remember", content="The API allows 100 req/min")
            new = await ok(
                client,
                "elfmem_remember",
                content="The API allows 1000 req/min since March",
                supersedes=[old["block_id"]],
            )
            assert f"supersedes:: [[{old['block_id']}]]" in git(memory, "show", new["commit_id"])
            many = await ok(client, "elfmem_remember_many", items=[
                {"content": "The API allows 2000 req/min", "supersedes": [new["block_id"]]},
            ])  # fmt: skip
            assert f"supersedes:: [[{new['block_id']}]]" in git(memory, "show", many["commit_id"])
            head = git(memory, "rev-parse", "HEAD")
            body = await fails(
                client, "elfmem_remember", content="Other text", supersedes=["0123456789abcdef"]
            )
            assert "0123456789abcdef" in body["error"]
            assert git(memory, "rev-parse", "HEAD") == head

    arun(scenario())
