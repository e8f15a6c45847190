"""The MCP client configurations shipped in examples/mcp/: each parses as its client reads it,
and its own command and arguments start a server that lists elfmem's tools (stdio, MCP SDK).

Placeholders are filled as a user would: the absolute program path with this environment's
``elfmem``, the project path and ``${workspaceFolder}`` with a fresh repository. The project-
scoped files start the server in the project folder, as their editors do.
"""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from elfmem.api import MemorySystem
from tests.conftest import arun

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "mcp"
BIN = Path(sys.executable).parent
BOUND = 600
ENV_KEYS = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM", "HF_HUB_OFFLINE")
CLIENTS = {  # file → the key its client reads the servers from
    "claude-code.mcp.json": "mcpServers",
    "claude-desktop.json": "mcpServers",
    "cursor.mcp.json": "mcpServers",
    "vscode.mcp.json": "servers",
    "codex.config.toml": "mcp_servers",
}


def server_entry(name: str) -> dict[str, Any]:
    path = EXAMPLES / name
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text) if name.endswith(".toml") else json.loads(text)
    entry: dict[str, Any] = data[CLIENTS[name]]["elfmem"]
    return entry


def filled(value: str, project: Path) -> str:
    return (
        value.replace("/absolute/path/to/.venv/bin/elfmem", str(BIN / "elfmem"))
        .replace("/absolute/path/to/your/project", str(project))
        .replace("${workspaceFolder}", str(project))
    )


def test_every_client_named_in_the_docs_has_a_file_and_each_file_is_documented() -> None:
    assert sorted(p.name for p in EXAMPLES.iterdir()) == sorted(CLIENTS)
    docs = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    for name in CLIENTS:
        assert f"examples/mcp/{name}" in docs, name
    for name in CLIENTS:
        entry = server_entry(name)
        assert isinstance(entry["command"], str) and "serve" in entry["args"], name
        if name == "vscode.mcp.json":
            assert entry["type"] == "stdio"


@pytest.mark.parametrize("name", sorted(CLIENTS))
def test_the_shipped_config_starts_a_server_that_lists_the_tools(name: str, repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo, name="Ada"))
    arun(system.close())
    entry = server_entry(name)
    env = {k: os.environ[k] for k in ENV_KEYS if k in os.environ}
    env["PATH"] = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"  # `elfmem` on PATH
    params = StdioServerParameters(
        command=filled(entry["command"], repo),
        args=[filled(a, repo) for a in entry["args"]],
        env=env,
        cwd=repo,
    )

    async def scenario() -> set[str]:
        with anyio.fail_after(BOUND):
            async with Client(params, mode="legacy", read_timeout_seconds=BOUND) as client:
                return {t.name for t in (await client.list_tools()).tools}

    names = arun(scenario())
    assert {"elfmem_remember", "elfmem_recall", "elfmem_import", "elfmem_setup"} <= names
