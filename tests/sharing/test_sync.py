"""``elfmem sync`` through a bare remote on local disk: merges, pushes, retries, fails clearly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.errors import RemoteError
from elfmem.sharing import sync as sync_mod
from elfmem.store import transport
from tests.conftest import arun, git
from tests.sharing.clones import bare, block_ids, clone, folded, outcome, project, remember, rev
from tests.sharing.helpers import dream


def _init(root: Path, ref: str | None = None) -> None:
    async def go() -> None:
        system, _ = await MemorySystem.init(root, ref=ref)
        await system.close()

    arun(go())


def _sync(root: Path, remote: str | None = None) -> sync_mod.SyncResult:
    async def go() -> sync_mod.SyncResult:
        system = await MemorySystem.from_config(root)
        try:
            return await system.sync(remote)
        finally:
            await system.close()

    return arun(go())


def _ref_pair(tmp_path: Path) -> tuple[Path, Path, Path]:
    remote = bare(tmp_path)
    a = project(tmp_path, remote, "a")
    _init(a, ref="elfmem")
    _sync(a)
    b = clone(remote, tmp_path / "b")
    return remote, a, b


def test_ref_mode_two_clones_writing_the_same_bucket_converge(tmp_path: Path) -> None:
    remote, a, b = _ref_pair(tmp_path)
    from_a = remember(a, "Service A listens on port 8080.", "Service A logs to stdout.")
    from_b = remember(b, "Service B listens on port 9090.", "Service B needs Redis 7.")
    assert git(b, "config", "elfmem.ref").strip() == "refs/heads/elfmem"  # found by itself
    assert not (b / ".elfmem").exists()
    code_a = rev(a, "main")

    first = _sync(a)
    assert first.memory_commits_out > 0 and "refs/heads/elfmem" in first.pushed
    second = _sync(b)
    assert second.memory_in == "merge" and second.notes_in == "merge"
    assert second.memory_commits_in >= 2 and second.notes_lines_in > 0
    third = _sync(a)
    assert third.memory_in == "fast-forward"

    every = {*from_a, *from_b}
    assert block_ids(a) == every == block_ids(b)
    assert rev(a, "refs/heads/elfmem^{tree}") == rev(b, "refs/heads/elfmem^{tree}")
    assert rev(remote, "refs/heads/elfmem") == rev(a, "refs/heads/elfmem")
    assert folded(a, sorted(every)) == folded(b, sorted(every))
    assert all(state[2] > 0 for state in folded(b, from_a).values())  # a's ledger reached b
    assert rev(a, "main") == code_a  # the code branch never moved
    assert rev(remote, "main") == code_a
    merge = git(b, "log", "--merges", "--format=%P", "refs/notes/elfmem").split()
    assert len(merge) == 2  # the notes merge is a commit with two parents


def test_branch_mode_sync_carries_the_notes_only(tmp_path: Path) -> None:
    remote = bare(tmp_path)
    a = project(tmp_path, remote, "a")
    _init(a)
    ids = remember(a, "Our API is versioned in the URL path.")
    dream(a)  # out of the inbox, so outcomes count
    outcome(a, ids, 1.0)
    pushed_main = rev(remote, "main")
    result = _sync(a)
    assert result.mode == "branch" and result.pushed == ["refs/notes/elfmem"]
    assert rev(remote, "main") == pushed_main  # elfmem never pushes a code branch
    assert rev(remote, "refs/notes/elfmem") == rev(a, "refs/notes/elfmem")
    git(a, "push", "-q", "origin", "main")  # the memory files travel with the user's push
    b = clone(remote, tmp_path / "b")
    assert block_ids(b) == set(ids)
    assert folded(b, ids) == folded(a, ids)
    assert folded(b, ids)[ids[0]][0] > 1.0  # the outcome's confidence came with the clone


def test_sync_retries_when_the_remote_moved_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote, a, b = _ref_pair(tmp_path)
    from_b = remember(b, "Staging resets every Sunday night.")
    from_a = remember(a, "Production is in eu-west-1.")
    real_fetch = transport.fetch
    raced: list[bool] = []

    def racing_fetch(*args: object, **kw: object) -> object:
        out = real_fetch(*args, **kw)  # type: ignore[arg-type]
        if not raced:  # another clone (another process) pushes between our fetch and push
            raced.append(True)
            done = subprocess.run(
                [sys.executable, "-m", "elfmem.cli", "-C", str(b), "sync", "--json"],
                capture_output=True,
                text=True,
            )
            assert done.returncode == 0, done.stderr
        return out

    monkeypatch.setattr(sync_mod.transport, "fetch", racing_fetch)
    result = _sync(a)
    assert raced and result.attempts >= 2
    assert block_ids(a) == {*from_a, *from_b}
    assert rev(remote, "refs/heads/elfmem") == rev(a, "refs/heads/elfmem")


def test_unreachable_remote_is_a_clear_error_and_nothing_is_lost(tmp_path: Path) -> None:
    remote = bare(tmp_path)
    a = project(tmp_path, remote, "a")
    _init(a, ref="elfmem")
    ids = remember(a, "The VPN config is in the ops wiki.")
    git(a, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    mem, notes = rev(a, "refs/heads/elfmem"), rev(a, "refs/notes/elfmem")
    with pytest.raises(RemoteError, match="cannot reach"):
        _sync(a)
    assert (rev(a, "refs/heads/elfmem"), rev(a, "refs/notes/elfmem")) == (mem, notes)
    assert block_ids(a) == set(ids)
    out = CliRunner().invoke(cli, ["-C", str(a), "sync", "--json"])
    assert out.exit_code == 8
    assert "recovery" in json.loads(out.output.splitlines()[0])


def test_a_remote_that_rejects_the_push_is_a_clear_error(tmp_path: Path) -> None:
    remote, a, _ = _ref_pair(tmp_path)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'read-only mirror' >&2\nexit 1\n")
    hook.chmod(0o755)
    ids = remember(a, "Rotate the signing key yearly.")
    tip = rev(a, "refs/heads/elfmem")
    with pytest.raises(RemoteError):
        _sync(a)
    assert rev(a, "refs/heads/elfmem") == tip
    assert ids[0] in block_ids(a)


def test_sync_cli_reports_in_and_out_as_json(tmp_path: Path) -> None:
    _, a, b = _ref_pair(tmp_path)
    remember(a, "Docs are built with mkdocs.")
    out = CliRunner().invoke(cli, ["-C", str(a), "sync", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["mode"] == "ref" and data["memory_commits_out"] >= 1
    out = CliRunner().invoke(cli, ["-C", str(b), "sync", "origin", "--json"])
    data = json.loads(out.output)
    assert data["memory_in"] == "fast-forward" and data["memory_commits_in"] >= 1


def test_mcp_sync_tool_pushes_and_reports(tmp_path: Path) -> None:
    from tests.mcp.test_server import connected, fails, ok

    _, a, _ = _ref_pair(tmp_path)
    remember(a, "Load tests run against the perf cluster.")

    async def scenario() -> tuple[dict[str, object], dict[str, object]]:
        async with connected(a) as client:
            good = await ok(client, "elfmem_sync")
            bad = await fails(client, "elfmem_sync", remote=str(tmp_path / "nowhere.git"))
            return good, bad

    good, bad = arun(scenario())
    assert good["mode"] == "ref" and good["memory_commits_out"] == 1
    assert "cannot reach" in str(bad["error"])


_LOCK_ONCE = """#!/bin/sh
# The first push finds the ref locked by another receive (as when clones push at once); the
# next one finds it free again.
if [ ! -f "$GIT_DIR/locked-once" ]; then
    touch "$GIT_DIR/locked-once"
    : > "$GIT_DIR/$1.lock"
else
    rm -f "$GIT_DIR/$1.lock"
fi
exit 0
"""


def test_a_push_refused_because_the_remote_ref_was_locked_is_retried(tmp_path: Path) -> None:
    remote, a, b = _ref_pair(tmp_path)
    from_a = remember(a, "Backups are kept for 35 days.")
    hook = remote / "hooks" / "update"
    hook.write_text(_LOCK_ONCE)
    hook.chmod(0o755)
    result = _sync(a)
    assert (remote / "locked-once").exists() and result.attempts == 2
    assert rev(remote, "refs/heads/elfmem") == rev(a, "refs/heads/elfmem")
    assert rev(remote, "refs/notes/elfmem") == rev(a, "refs/notes/elfmem")
    _sync(b)
    assert set(from_a) <= block_ids(b)


def test_a_hook_that_declines_is_not_retried_and_the_error_says_what_was_merged_here(
    tmp_path: Path,
) -> None:
    remote, a, b = _ref_pair(tmp_path)
    remember(a, "The cache is warmed at deploy time.")
    _sync(a)
    remember(b, "The queue drains in under a minute.")
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'read-only mirror' >&2\nexit 1\n")
    hook.chmod(0o755)
    tip = rev(b, "refs/heads/elfmem")
    out = CliRunner().invoke(cli, ["-C", str(b), "sync", "--json"])
    assert out.exit_code == 8
    error = json.loads(out.output.splitlines()[0])
    assert rev(b, "refs/heads/elfmem") != tip  # the merge from a was committed here
    said = error["error"] + " " + error["recovery"]
    assert "hook declined" in said and "nothing local was changed" not in said
    assert "merged" in said and "kept here" in said
    assert git(remote, "log", "-1", "--format=%H", "refs/heads/elfmem").strip() != rev(
        b, "refs/heads/elfmem"
    )


def test_three_clones_syncing_at_once_all_succeed_and_converge(tmp_path: Path) -> None:
    remote, a, b = _ref_pair(tmp_path)
    c = clone(remote, tmp_path / "c")
    made: set[str] = set()
    for root, name in ((a, "a"), (b, "b"), (c, "c")):
        made |= set(remember(root, f"Clone {name} keeps its build cache in /var/cache/{name}."))
    for _ in range(2):
        running = [
            subprocess.Popen(
                [sys.executable, "-m", "elfmem.cli", "-C", str(root), "sync", "--json"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for root in (a, b, c)
        ]
        for proc in running:
            _, err = proc.communicate()
            assert proc.returncode == 0, err
    for root in (a, b, c):
        _sync(root)
    assert block_ids(a) == block_ids(b) == block_ids(c) >= made
