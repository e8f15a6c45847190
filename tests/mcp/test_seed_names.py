"""The seed's tool names and replies: ``elfmem_import``, ``elfmem_setup``, a loud inbox skip.

Through the MCP SDK's in-memory client on a real repository, as an agent meets them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from elfmem.api import MemorySystem
from elfmem.mcp import build_server
from tests.conftest import arun, git


@pytest.fixture
def memory(repo: Path) -> Path:
    system, _ = arun(MemorySystem.init(repo, name="Ada"))
    arun(system.close())
    return repo


def _reply(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.content[0].text)
    return data


def test_the_seed_names_import_and_setup_are_served(memory: Path) -> None:
    async def scenario() -> set[str]:
        async with Client(build_server(await MemorySystem.from_config(memory))) as client:
            return {t.name for t in (await client.list_tools()).tools}

    names = arun(scenario())
    assert {"elfmem_import", "elfmem_import_bundle", "elfmem_setup"} <= names


def test_elfmem_import_takes_in_an_exported_bundle(memory: Path) -> None:
    async def scenario() -> dict[str, Any]:
        async with Client(build_server(await MemorySystem.from_config(memory))) as client:
            await client.call_tool("elfmem_remember", {"content": "Deploys freeze on Fridays"})
            await client.call_tool("elfmem_dream", {})
            exported = await client.call_tool(
                "elfmem_export", {"share": "all", "output": "ada.jsonl"}
            )
            assert not exported.is_error, exported.content
            bundle = _reply(exported)["path"]  # the exports folder says where
            result = await client.call_tool("elfmem_import", {"path": bundle, "self_merge": True})
            assert not result.is_error, result.content
            return _reply(result)

    assert "summary" in arun(scenario())


def test_elfmem_setup_refreshes_the_open_memory_idempotently(memory: Path) -> None:
    async def scenario() -> tuple[dict[str, Any], dict[str, Any], str]:
        async with Client(build_server(await MemorySystem.from_config(memory))) as client:
            first = _reply(await client.call_tool("elfmem_setup", {"seed": True}))
            again = _reply(await client.call_tool("elfmem_setup", {"seed": True}))
            frame = await client.call_tool("elfmem_frame", {"name": "self"})
            return first, again, frame.content[0].text  # type: ignore[union-attr]

    first, again, frame = arun(scenario())
    assert len(first["seeded"]) == 10 and again["seeded"] == []
    assert first["agent_name"] == "Ada" and "Ada" in frame
    assert git(memory, "status", "--porcelain") == ""


def test_an_outcome_on_an_inbox_block_replies_with_the_skip_and_its_recovery(
    memory: Path,
) -> None:
    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Client(build_server(await MemorySystem.from_config(memory))) as client:
            made = _reply(await client.call_tool("elfmem_remember", {"content": "Rate limit 100"}))
            args = {"block_ids": [made["block_id"]], "signal": 1.0}
            skipped = _reply(await client.call_tool("elfmem_outcome", args))
            await client.call_tool("elfmem_dream", {})
            return skipped, _reply(await client.call_tool("elfmem_outcome", args))

    skipped, recorded = arun(scenario())
    assert skipped["skipped"][0]["reason"] == "pending_inbox"
    assert "elfmem dream" in skipped["recovery"] and "again" in skipped["recovery"]
    assert recorded["updated"] and recorded["recovery"] == ""
