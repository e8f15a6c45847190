"""Closing stdin early: the server answers every request it read before it exits.

A real stdio subprocess, fed all its requests at once with stdin closed right after; every
request with an id gets its reply, and the write it made is both committed and acknowledged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from elfmem.api import MemorySystem
from tests.conftest import arun, git

ROOT = Path(__file__).resolve().parents[2]
BOUND = 600  # seconds: a hung server fails the test instead of hanging it


def request(n: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": n, "method": method, "params": params}


def tool(n: int, name: str, **arguments: Any) -> dict[str, Any]:
    return request(n, "tools/call", {"name": name, "arguments": arguments})


@pytest.mark.slow
def test_every_request_read_before_stdin_closed_is_answered(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    }
    messages = [
        request(1, "initialize", hello),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        tool(2, "elfmem_remember", content="Replies outlive a closed stdin", cue="stdin close"),
        tool(3, "elfmem_remember", content="A second write in the same burst", cue="burst"),
        tool(4, "elfmem_status"),
        tool(5, "elfmem_show", block_id="0123456789abcdef"),
    ]
    data = "".join(json.dumps(m) + "\n" for m in messages).encode()
    done = subprocess.run(  # input= writes everything, then closes stdin at once
        [sys.executable, "-m", "elfmem.cli", "-C", str(repo), "serve"],
        input=data,
        capture_output=True,
        timeout=BOUND,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr.decode()
    replies = {r["id"]: r for r in map(json.loads, done.stdout.decode().splitlines())}
    assert sorted(replies) == [1, 2, 3, 4, 5], done.stderr.decode()
    made = [json.loads(replies[n]["result"]["content"][0]["text"]) for n in (2, 3)]
    assert [m["status"] for m in made] == ["created", "created"]
    subjects = git(repo, "log", "--format=%s", "-2").splitlines()
    assert all(s.startswith("remember:") for s in subjects)
    assert json.loads(replies[5]["result"]["content"][0]["text"])["type"] == "BlockNotFound"
