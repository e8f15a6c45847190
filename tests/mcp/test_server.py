"""The MCP server through the SDK's in-memory client: every tool, its annotations, its envelopes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from elfmem.api import MemorySystem
from elfmem.mcp import build_server
from elfmem.mcp.binding import mismatch
from elfmem.mcp.spec import Param, ToolSpec
from elfmem.mcp.tools import TOOLS
from elfmem.store.notes import clock_anchor
from tests.conftest import arun, git

REQUIRED = {
    f"elfmem_{m}"
    for m in (
        "remember remember_many recall frame dream edit forget undo ls inbox show block_history "
        "ledger history index_check index_status should_dream"
    ).split()
}
READS = {
    "elfmem_recall", "elfmem_frame", "elfmem_should_dream", "elfmem_ls", "elfmem_inbox",
    "elfmem_show", "elfmem_block_history", "elfmem_ledger", "elfmem_history",
    "elfmem_index_check", "elfmem_index_status", "elfmem_status", "elfmem_guide",
    "elfmem_lookalikes",
}  # fmt: skip
DESTRUCTIVE = {
    "elfmem_forget", "elfmem_undo", "elfmem_curate", "elfmem_disconnect",
    "elfmem_resolve_lookalike",
}  # fmt: skip
READS |= {
    "elfmem_review_constitutional", "elfmem_list_amendments", "elfmem_mind_list",
    "elfmem_mind_show",
}  # fmt: skip
DESTRUCTIVE |= {"elfmem_review_corpus", "elfmem_revert_amendment"}
READS |= {"elfmem_peer_list", "elfmem_peer_inbox_status"}
NOT_DESTRUCTIVE_WRITES = {"elfmem_remember", "elfmem_remember_many", "elfmem_edit", "elfmem_dream"}
NOT_DESTRUCTIVE_WRITES |= {"elfmem_sync"}


@pytest.fixture
def memory(repo: Path) -> Path:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    return repo


@asynccontextmanager
async def connected(root: Path) -> AsyncIterator[Client]:
    async with Client(build_server(await MemorySystem.from_config(root))) as client:
        yield client


async def call(client: Client, tool: str, /, **arguments: Any) -> tuple[bool, dict[str, Any]]:
    """(is_error, body); the text block and the structured content must carry the same JSON."""
    result = await client.call_tool(tool, arguments)
    assert len(result.content) == 1 and result.content[0].type == "text"
    body = json.loads(result.content[0].text)
    assert result.structured_content == body
    return bool(result.is_error), body


async def ok(client: Client, tool: str, /, **arguments: Any) -> dict[str, Any]:
    is_error, body = await call(client, tool, **arguments)
    assert not is_error, body
    return body


async def remember(client: Client, content: str) -> str:
    return str((await ok(client, "elfmem_remember", content=content, cue=content[:20]))["block_id"])


async def fails(client: Client, tool: str, /, **arguments: Any) -> dict[str, Any]:
    is_error, body = await call(client, tool, **arguments)
    assert is_error and body["error"] and body["recovery"], body
    assert "Traceback" not in json.dumps(body)
    return body


def test_tool_list_is_the_table_with_its_annotations(memory: Path) -> None:
    async def scenario() -> None:
        async with connected(memory) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
        assert REQUIRED <= tools.keys()
        assert tools.keys() == {s.name for s in TOOLS if hasattr(MemorySystem, s.method)}
        for name, tool in tools.items():
            hints = tool.annotations
            assert hints is not None and hints.open_world_hint is False
            assert hints.read_only_hint is (name in READS), name
            assert hints.destructive_hint is (name in DESTRUCTIVE), name
            assert "Example:" in (tool.description or ""), name
        for name in NOT_DESTRUCTIVE_WRITES:
            assert not tools[name].annotations.read_only_hint  # type: ignore[union-attr]
        remember = tools["elfmem_remember"].input_schema
        assert set(remember["properties"]) == {
            "content", "cue", "tags", "category", "pinned", "allow_secret", "when", "supersedes"
        }  # fmt: skip
        assert remember["required"] == ["content"]
        assert remember["properties"]["category"]["default"] == "knowledge"
        assert set(tools["elfmem_recall"].input_schema["properties"]) == {
            "query", "frame", "top_k", "at"
        }  # fmt: skip
        assert tools["elfmem_should_dream"].input_schema["properties"] == {}

    arun(scenario())


def test_every_row_whose_method_exists_fits_it() -> None:
    for spec in TOOLS:
        if hasattr(MemorySystem, spec.method):
            assert mismatch(spec) is None, (spec.name, mismatch(spec))
    drifted = ToolSpec("show", "read", True, "x", (Param("id", str, "the id"),))
    assert "no parameter id" in (mismatch(drifted) or "")
    assert "requires block_id" in (mismatch(ToolSpec("show", "read", True, "x")) or "")


def test_a_row_lights_up_when_its_method_lands(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def guide(self: MemorySystem, operation: str | None = None) -> dict[str, str]:
        return {"operation": operation or "overview", "text": "Call elfmem_recall first."}

    async def names() -> set[str]:
        async with connected(memory) as client:
            return {t.name for t in (await client.list_tools()).tools}

    monkeypatch.delattr(MemorySystem, "guide", raising=False)
    assert "elfmem_guide" not in arun(names())
    monkeypatch.setattr(MemorySystem, "guide", guide, raising=False)

    async def scenario() -> None:
        async with connected(memory) as client:
            body = await ok(client, "elfmem_guide", operation="recall")
            assert body == {"operation": "recall", "text": "Call elfmem_recall first."}

    arun(scenario())


def test_capture_edit_forget_undo_and_their_history(memory: Path) -> None:
    async def scenario() -> None:
        async with connected(memory) as client:
            made = await ok(
                client,
                "elfmem_remember",
                content="Postgres needs pgbouncer above 100 clients",
                cue="choosing a pooling strategy",
                tags=["db/postgres"],
            )
            block_id = made["block_id"]
            assert made["status"] == "created" and made["commit_id"]
            again = await ok(
                client, "elfmem_remember", content="Postgres needs pgbouncer above 100 clients"
            )
            assert again["status"] == "duplicate" and again["block_id"] == block_id
            many = await ok(client, "elfmem_remember_many", items=[
                {"content": "Deploys freeze on Fridays", "cue": "planning a release"},
                {"content": "Staging mirrors prod nightly", "tags": ["env/staging"]},
            ])  # fmt: skip
            assert len(many["created"]) == 2 and many["commit_id"]
            shown = await ok(client, "elfmem_show", block_id=block_id)
            assert shown["cue"] == "choosing a pooling strategy" and shown["tags"] == [
                "db/postgres"
            ]
            edited = await ok(
                client,
                "elfmem_edit",
                block_id=block_id,
                content="Postgres needs pgbouncer above 100 concurrent clients",
            )
            assert edited["changed"]
            assert (await ok(client, "elfmem_forget", block_id=block_id))["commit_id"]
            undone = await ok(client, "elfmem_undo")
            assert undone["block_ids"] == [block_id]
            shown = await ok(client, "elfmem_show", block_id=block_id)
            assert shown["content"] == "Postgres needs pgbouncer above 100 concurrent clients"
            assert shown["status"] == "inbox"
            history = await ok(client, "elfmem_block_history", block_id=block_id)
            assert [c["op"] for c in history["commits"]] == ["undo", "forget", "edit", "remember"]
            ledger = await ok(client, "elfmem_ledger", block_id=block_id)
            assert [e["kind"] for e in ledger["events"]][:3] == ["birth", "edit", "forget"]
            recent = await ok(client, "elfmem_history", limit=3)
            assert [c["op"] for c in recent["commits"]] == ["undo", "forget", "edit"]
            inbox = await ok(client, "elfmem_inbox")
            assert inbox["count"] == 3 and block_id in [b["id"] for b in inbox["blocks"]]
            listed = await ok(client, "elfmem_ls", tag="env/%")
            assert [b["content"] for b in listed["blocks"]] == ["Staging mirrors prod nightly"]

    arun(scenario())
    subjects = git(memory, "log", "--format=%s").splitlines()
    assert subjects[0].startswith('Revert "forget:') and git(memory, "status", "--porcelain") == ""


def test_should_dream_follows_the_live_inbox_then_dream_and_recall(memory: Path) -> None:
    async def scenario() -> None:
        async with connected(memory) as client:
            items = [{"content": f"Service {n} listens on port {8000 + n}"} for n in range(9)]
            await ok(client, "elfmem_remember_many", items=items)
            assert await ok(client, "elfmem_should_dream") == {"should_dream": False}
            await ok(
                client,
                "elfmem_remember",
                content="Shard the events table by tenant once it passes 500 million rows",
                cue="database scaling",
            )
            assert await ok(client, "elfmem_should_dream") == {"should_dream": True}
            dreamt = await ok(client, "elfmem_dream", max_blocks=20, no_llm=True)
            assert dreamt["processed"] == 10 and dreamt["inbox_remaining"] == 0
            assert await ok(client, "elfmem_should_dream") == {"should_dream": False}
            recalled = await ok(client, "elfmem_recall", query="database scaling", top_k=3)
            assert "Shard the events table" in recalled["blocks"][0]["content"]
            assert "Shard the events table" in recalled["text"]
            framed = await ok(client, "elfmem_frame", name="attention", query="port 8003")
            assert any("port 8003" in b["content"] for b in framed["blocks"])
            me = await ok(client, "elfmem_frame", name="self")
            assert me["frame"] == "self" and me["query"] is None and me["text"]

    arun(scenario())


def test_index_feedback_graph_and_status_tools(memory: Path) -> None:
    async def scenario() -> None:
        async with connected(memory) as client:
            a = await remember(client, "Redis caching uses cache-aside with a five minute TTL")
            b = await remember(client, "Postgres vacuum runs nightly at three in the morning")
            check = await ok(client, "elfmem_index_check")
            assert check["blocks"] == 2 and check["errors"] == []
            status = await ok(client, "elfmem_index_status")
            assert status["fresh"] and status["details"]["counts"]["inbox"] == 2
            await ok(client, "elfmem_dream", no_llm=True)
            scored = await ok(client, "elfmem_outcome", block_ids=[a], signal=0.9, source="test")
            assert [u["id"] for u in scored["updated"]] == [a]
            edge = {"source": a, "target": b, "relation": "supports"}
            assert (await ok(client, "elfmem_connect", **edge))["edges"] == [edge]
            assert (await ok(client, "elfmem_disconnect", **edge))["edges"] == [edge]
            linked = await ok(
                client,
                "elfmem_connect_by_query",
                query_a="Redis cache-aside TTL",
                query_b="Postgres vacuum nightly",
                min_confidence=0.0,
            )
            assert {linked["edges"][0]["source"], linked["edges"][0]["target"]} == {a, b}
            curated = await ok(client, "elfmem_curate")
            assert curated["archived"] == []
            health = await ok(client, "elfmem_status")
            assert health["active"] == 2 and health["should_dream"] is False

    arun(scenario())


def test_errors_are_envelopes_with_a_recovery(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        async with connected(memory) as client:
            missing = await fails(client, "elfmem_show", block_id="0123456789abcdef")
            assert missing["type"] == "BlockNotFound" and "0123456789abcdef" in missing["error"]
            assert (await fails(client, "elfmem_forget", block_id="nope"))[
                "type"
            ] == "BlockNotFound"
            empty = await fails(client, "elfmem_remember", content="   ")
            assert empty["type"] == "InvalidInput"
            off_schema = await fails(client, "elfmem_show")
            assert off_schema["type"] == "InvalidInput" and "block_id" in off_schema["error"]
            wrong_type = await fails(client, "elfmem_recall", query="x", top_k="many")
            assert "top_k" in wrong_type["error"]
            unknown = await fails(client, "elfmem_teleport")
            assert "elfmem_teleport" in unknown["error"] and "tools/list" in unknown["recovery"]

            async def broken(self: MemorySystem, block_id: str) -> None:
                raise RuntimeError("disk on fire")

            monkeypatch.setattr(MemorySystem, "show", broken)
            crash = await fails(client, "elfmem_show", block_id="0123456789abcdef")
            assert crash["error"] == "RuntimeError: disk on fire"
            assert crash["type"] == "InternalError" and "stderr" in crash["recovery"]

    arun(scenario())


def test_one_session_per_server_closed_and_flushed_at_the_end(memory: Path) -> None:
    async def scenario() -> None:
        async with connected(memory) as client:
            await ok(client, "elfmem_remember", content="Sessions bound the decay clock")
            await ok(client, "elfmem_recall", query="decay clock")

    arun(scenario())
    lines = [json.loads(x) for x in git(memory, "notes", "--ref=elfmem", "show", clock_anchor())
             .splitlines()]  # fmt: skip
    sessions = [e for e in lines if e["kind"] == "session"]
    assert len({e["id"] for e in sessions}) == 1
    assert sessions[0]["end"] is None and sessions[-1]["end"] >= sessions[-1]["start"]
    spool = memory / ".git" / "elfmem" / "spool.jsonl"
    assert not spool.exists() or spool.read_text() == ""
