"""``elfmem serve`` as a real stdio subprocess, started exactly as ``elfmem init`` tells clients.

Startup imports the SDK and the index, which is slow on a loaded machine, so every wait is bounded
generously rather than tightly; nothing here asserts on time.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters

from elfmem.cli import cli
from elfmem.store.notes import clock_anchor
from tests.conftest import arun, git

pytestmark = pytest.mark.slow

BOUND = 600  # seconds: a hung server fails the test instead of hanging it
ENV_KEYS = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM", "HF_HUB_OFFLINE")


def client_config(repo: Path) -> dict[str, Any]:
    """The MCP client block ``elfmem init --json`` prints for this repository."""
    result = CliRunner().invoke(cli, ["-C", str(repo), "init", "--json"])
    assert result.exit_code == 0, result.stderr
    block: dict[str, Any] = json.loads(result.stdout)["mcp_config"]["mcpServers"]["elfmem"]
    return block


def child_env() -> dict[str, str]:
    return {k: os.environ[k] for k in ENV_KEYS if k in os.environ}


def session_events(repo: Path) -> list[dict[str, Any]]:
    lines = git(repo, "notes", "--ref=elfmem", "show", clock_anchor()).splitlines()
    return [e for e in map(json.loads, lines) if e["kind"] == "session"]


def test_importing_elfmem_prints_nothing() -> None:
    code = "import elfmem, elfmem.api, elfmem.cli, elfmem.mcp, elfmem.mcp.server"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=BOUND)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b""


def test_serve_over_stdio_as_the_init_block_says(
    repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = client_config(repo)
    assert config["args"] == ["-C", str(repo), "serve"]
    params = StdioServerParameters(command=config["command"], args=config["args"], env=child_env())

    async def scenario() -> None:
        with anyio.fail_after(BOUND):
            async with Client(params, mode="legacy", read_timeout_seconds=BOUND) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert {"elfmem_remember", "elfmem_dream", "elfmem_recall"} <= names
                made = await client.call_tool(
                    "elfmem_remember",
                    {"content": "The billing service retries webhooks three times with "
                     "exponential backoff", "cue": "webhook delivery failures"},
                )  # fmt: skip
                assert not made.is_error and made.structured_content is not None
                block_id = made.structured_content["block_id"]
                dreamt = await client.call_tool("elfmem_dream", {"no_llm": True})
                assert not dreamt.is_error and dreamt.structured_content is not None
                assert dreamt.structured_content["promoted"] == [block_id]
                found = await client.call_tool("elfmem_recall", {"query": "webhook retries"})
                assert not found.is_error and found.structured_content is not None
                assert found.structured_content["blocks"][0]["id"] == block_id
                assert "exponential backoff" in found.structured_content["text"]
                bad = await client.call_tool("elfmem_show", {"block_id": "feedfacefeedface"})
                assert bad.is_error
                body = json.loads(bad.content[0].text)  # type: ignore[union-attr]
                assert body["type"] == "BlockNotFound" and body["recovery"]

    arun(scenario())
    # The SDK's client logs an ERROR for every line on the server's stdout that is not protocol.
    assert [r.getMessage() for r in caplog.records if r.name.startswith("mcp.")
            and r.levelno >= logging.ERROR] == []  # fmt: skip
    sessions = session_events(repo)
    assert len(sessions) == 2 and sessions[-1]["end"] is not None
    ops = git(repo, "log", "--format=%s", "-3").splitlines()
    assert ops[0].startswith("dream") and ops[1].startswith("remember:")


def test_serve_outside_a_repository_says_why_on_stderr(tmp_path: Path) -> None:
    empty = tmp_path / "nowhere"
    empty.mkdir()
    elfmem = Path(sys.executable).with_name("elfmem")
    proc = subprocess.run(
        [str(elfmem), "-C", str(empty), "serve"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=BOUND,
        env={**os.environ, "GIT_CEILING_DIRECTORIES": str(tmp_path)},
    )
    assert proc.returncode != 0 and proc.stdout == b""
    assert b"Error:" in proc.stderr and b"Recovery:" in proc.stderr
    assert b"Traceback" not in proc.stderr


def test_sigterm_ends_the_session_and_exits_cleanly(repo: Path) -> None:
    config = client_config(repo)
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }

    async def scenario() -> int:
        with anyio.fail_after(BOUND):
            async with await anyio.open_process(
                [config["command"], *config["args"]], stderr=subprocess.DEVNULL
            ) as proc:
                assert proc.stdin is not None and proc.stdout is not None
                await proc.stdin.send((json.dumps(hello) + "\n").encode())
                reply = b""
                while not reply.endswith(b"\n"):
                    reply += await proc.stdout.receive()
                assert json.loads(reply)["result"]["serverInfo"]["name"] == "elfmem"
                proc.send_signal(signal.SIGTERM)
                return await proc.wait()

    assert arun(scenario()) == 0
    sessions = session_events(repo)
    assert len(sessions) == 2 and sessions[-1]["end"] is not None
