"""A read-only repository serves every read; a write is a locked error (exit 5) naming the file.

Tests run as root here, and root writes through ``chmod a-w``; so the repository is made truly
read-only with a read-only bind mount inside a private mount namespace (``unshare -m``), where
the kernel answers EROFS to everyone. Not root: ``chmod -R a-w`` is enough (EACCES).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from tests.conftest import arun

ROOT = Path(__file__).resolve().parents[2]
READS = [
    ["ls"],
    ["recall", "deploys"],
    ["status"],
    ["index", "check"],
    ["doctor"],
]


@pytest.fixture
def memory(repo: Path) -> Path:
    async def build() -> None:
        system, _ = await MemorySystem.init(repo)
        try:
            await system.remember("The deploy pipeline runs a canary first", cue="deploys")
            await system.remember("Postgres vacuums nightly", cue="database upkeep")
            await system.dream()
            await system.recall("deploys")  # the spool, its lock and the index exist on disk
        finally:
            await system.close()

    arun(build())
    return repo


def mcp_requests(repo: Path) -> Path:
    """A burst of MCP requests for ``serve``, kept outside the repository (which is read-only)."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    calls = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "elfmem_recall", "arguments": {"query": "deploys"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "elfmem_remember", "arguments": {"content": "a write"}}},
    ]  # fmt: skip
    path = repo.parent / "mcp-requests.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in calls))
    return path


def script(repo: Path, commands: list[list[str]] | None = None) -> str:
    """Shell lines: each command, then a marker line with its exit code; then an MCP burst."""
    cli = f"{sys.executable} -m elfmem.cli -C {repo}"
    if commands is not None:
        return "\n".join(f'{cli} {" ".join(c)}; echo "@@ {c[0]} $?"' for c in commands)
    lines = [f'{cli} {" ".join(c)}; echo "@@ {" ".join(c)} $?"' for c in READS]
    lines.append(f'{cli} remember "a write"; echo "@@ remember $?"')
    lines.append(f'{cli} serve < {mcp_requests(repo)}; echo "@@ serve $?"')
    return "\n".join(lines)


def run_read_only(
    repo: Path, commands: list[list[str]] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if os.geteuid() != 0:
        subprocess.run(["chmod", "-R", "a-w", str(repo)], check=True)
        try:
            return subprocess.run(
                ["sh", "-c", script(repo, commands)], capture_output=True, text=True, env=env
            )
        finally:
            subprocess.run(["chmod", "-R", "u+w", str(repo)], check=True)
    if shutil.which("unshare") is None:
        pytest.skip("root without unshare: no way to make a read-only repository here")
    mount = f"mount --bind {repo} {repo} && mount -o remount,bind,ro {repo}"
    probe = subprocess.run(["unshare", "-m", "sh", "-c", mount], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no mount namespace here: {probe.stderr.decode().strip()}")
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", f"{mount} && {script(repo, commands)}"],
        capture_output=True,
        text=True,
        env=env,
    )


@pytest.mark.slow
def test_reads_work_and_writes_are_locked_on_a_read_only_repository(memory: Path) -> None:
    before = sorted(p.name for p in (memory / ".git" / "elfmem").iterdir())
    done = run_read_only(memory)
    codes = dict(
        line[3:].rsplit(" ", 1) for line in done.stdout.splitlines() if line.startswith("@@ ")
    )
    assert codes == {**{" ".join(c): "0" for c in READS}, "remember": "5", "serve": "0"}, (
        done.stderr
    )
    replies = {
        r["id"]: json.loads(r["result"]["content"][0]["text"])
        for r in map(json.loads, (x for x in done.stdout.splitlines() if x.startswith("{")))
        if r.get("id") in (2, 3)
    }
    assert "canary" in json.dumps(replies[2])  # the MCP server served the read
    assert replies[3]["type"] == "LockedError" and replies[3]["recovery"]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert "canary" in done.stdout  # recall and ls answered with the blocks
    assert "Error: cannot write" in done.stderr and "Recovery: Reads work" in done.stderr
    assert sorted(p.name for p in (memory / ".git" / "elfmem").iterdir()) == before


def test_outcome_on_a_read_only_repository_is_locked_at_once(memory: Path) -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "elfmem.cli", "-C", str(memory), "ls", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    block_id = json.loads(listed.stdout)["blocks"][0]["id"]
    done = run_read_only(memory, [["outcome", block_id, "0.9"]])
    assert "@@ outcome 5" in done.stdout.splitlines(), done.stderr
    assert "Error: cannot write" in done.stderr and "attempts" not in done.stderr
