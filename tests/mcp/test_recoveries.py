"""Each MCP error carries its own recovery: the envelope is exactly the API error's to_dict().

A server that swapped the recovery texts of two errors (or dropped one) would pass a test that
only checks a recovery is present; this compares every envelope with the error the same call
raises through the API directly.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from elfmem.api import MemorySystem
from elfmem.errors import ElfmemError
from elfmem.mcp import build_server
from tests.conftest import arun

CASES: list[tuple[str, dict[str, Any], Callable[[MemorySystem], Awaitable[Any]]]] = [
    ("elfmem_remember", {"content": "   "}, lambda s: s.remember("   ")),
    ("elfmem_remember", {"content": "x \ud800"}, lambda s: s.remember("x \ud800")),
    ("elfmem_show", {"block_id": "0123456789abcdef"}, lambda s: s.show("0123456789abcdef")),
    ("elfmem_frame", {"name": "no-such"}, lambda s: s.frame("no-such")),
    (
        "elfmem_connect",
        {"source": "0123456789abcdef", "target": "0123456789abcdef"},
        lambda s: s.connect("0123456789abcdef", "0123456789abcdef"),
    ),
    ("elfmem_ls", {"status": "bogus"}, lambda s: s.ls(status="bogus")),
]


@pytest.fixture
def memory(repo: Path) -> Path:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    return repo


def test_every_envelope_is_its_own_errors_dict(memory: Path) -> None:
    async def scenario() -> None:
        system = await MemorySystem.from_config(memory)
        expected = []
        try:
            for _, _, direct in CASES:
                with pytest.raises(ElfmemError) as caught:
                    await direct(system)
                expected.append(caught.value.to_dict())
        finally:
            await system.close()
        async with Client(build_server(await MemorySystem.from_config(memory))) as client:
            for (tool, arguments, _), want in zip(CASES, expected, strict=True):
                result = await client.call_tool(tool, arguments)
                assert result.is_error, tool
                got = json.loads(result.content[0].text)  # type: ignore[union-attr]
                assert got == json.loads(json.dumps(want).encode().decode()), tool
        recoveries = [w["recovery"] for w in expected]
        assert len(set(recoveries)) == len(recoveries)  # distinct, so a swap would show

    arun(scenario())
