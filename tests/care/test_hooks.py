"""Git hooks, driven by the real git binary: refused commits, reindexing, chaining, uninstall."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.api import MemorySystem
from elfmem.care import hooks
from elfmem.cli import cli
from elfmem.errors import RepoStateError
from elfmem.store.notes import anchor_for_block
from tests.conftest import GIT_ENV, arun, git

REPO_ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-ant-api03-" + "Q7x9Lm2Pz4Kd8Rw1Ty6Vb3Nc5Hj0Fg"


@pytest.fixture(autouse=True)
def _elfmem_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook programs call `elfmem`: put this venv's bin folder first on PATH."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def _git(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, input=stdin, env=env
    )


def _memory(repo: Path) -> tuple[str, Path]:
    """A memory with one block; returns its id and its bucket file."""
    system, _ = arun(MemorySystem.init(repo, name="Ada"))
    made = arun(system.remember("Redis needs maxmemory set or it grows", cue="configuring redis"))
    arun(system.close())
    return made.block_id, repo / ".elfmem/memory" / made.path


def _remember(repo: Path, content: str) -> str:
    system = arun(MemorySystem.from_config(repo))
    made = arun(system.remember(content, cue="a cue"))
    arun(system.close())
    return made.block_id


def _index(repo: Path) -> tuple[bool, int]:
    """(fresh, inbox count) as the index holds them; index_status itself does not sync."""
    system = arun(MemorySystem.from_config(repo))
    try:
        status = arun(system.index_status())
    finally:
        arun(system.close())
    return status.fresh, status.details["counts"]["inbox"]


def _listed(repo: Path) -> set[str]:
    system = arun(MemorySystem.from_config(repo))
    try:
        return {b.id for b in arun(system.ls()).blocks}
    finally:
        arun(system.close())


def _commit(repo: Path, path: Path, text: str) -> subprocess.CompletedProcess[str]:
    path.write_text(text)
    git(repo, "add", str(path))
    return _git(repo, "commit", "-m", "hand edit")


# ---- the hook programs ------------------------------------------------------------------------


def test_repo_hook_programs_are_the_installed_programs() -> None:
    for name in hooks.HOOK_NAMES:
        shipped = REPO_ROOT / "hooks" / name
        assert shipped.read_bytes() == hooks.program(name)
        assert shipped.stat().st_mode & stat.S_IXUSR
        assert 'elfmem hook "$hook" "$@"' in shipped.read_text()


def test_install_writes_executable_hooks_and_a_second_install_changes_nothing(repo: Path) -> None:
    first = hooks.install(repo)
    folder = repo / ".git/hooks"
    assert first.hooks_dir == str(folder)
    assert [h.action for h in first.hooks] == ["installed"] * len(hooks.HOOK_NAMES)
    before = {p.name: (p.read_bytes(), p.stat().st_mode) for p in folder.iterdir()}
    second = hooks.install(repo)
    assert [h.action for h in second.hooks] == ["unchanged"] * len(hooks.HOOK_NAMES)
    assert {p.name: (p.read_bytes(), p.stat().st_mode) for p in folder.iterdir()} == before
    assert not list(folder.glob("*.elfmem-chained"))
    assert all(os.access(folder / name, os.X_OK) for name in hooks.HOOK_NAMES)


def test_post_checkout_skips_file_checkouts_and_same_commit_switches() -> None:
    assert not hooks.wants_reindex("post-checkout", ["a" * 40, "b" * 40, "0"])
    assert not hooks.wants_reindex("post-checkout", ["a" * 40, "a" * 40, "1"])
    assert hooks.wants_reindex("post-checkout", ["a" * 40, "b" * 40, "1"])
    assert hooks.wants_reindex("post-merge", ["0"])
    assert hooks.wants_reindex("post-rewrite", ["amend"])


# ---- pre-commit ---------------------------------------------------------------------------------


def test_commit_of_a_broken_block_is_refused_with_file_line_and_fix(repo: Path) -> None:
    _, bucket = _memory(repo)
    hooks.install(repo)
    head = git(repo, "rev-parse", "HEAD")
    done = _commit(repo, bucket, bucket.read_text().replace(" -->\n", "\n", 1))
    assert done.returncode == 1
    rel = bucket.relative_to(repo).as_posix()
    assert f"{rel}:2: frontmatter: the comment is not closed with `-->`" in done.stderr
    assert "fix: End the line with ` -->`." in done.stderr
    assert git(repo, "rev-parse", "HEAD") == head


def test_a_valid_hand_edit_commits(repo: Path) -> None:
    _, bucket = _memory(repo)
    hooks.install(repo)
    done = _commit(repo, bucket, bucket.read_text().replace("it grows", "it grows unbounded"))
    assert done.returncode == 0, done.stderr
    assert "it grows unbounded" in git(repo, "show", f"HEAD:{bucket.relative_to(repo).as_posix()}")


def test_a_staged_secret_is_refused_without_echoing_it(repo: Path) -> None:
    _, bucket = _memory(repo)
    hooks.install(repo)
    done = _commit(repo, bucket, bucket.read_text() + f"The key is {SECRET}\n")
    assert done.returncode == 1
    assert "looks like a secret (Anthropic API key" in done.stderr
    assert SECRET not in done.stderr
    last = len(bucket.read_text().splitlines())
    assert f"{bucket.relative_to(repo).as_posix()}:{last}:" in done.stderr


def test_conflict_markers_are_refused(repo: Path) -> None:
    _, bucket = _memory(repo)
    hooks.install(repo)
    text = bucket.read_text().replace(
        "Redis needs maxmemory set or it grows\n",
        "<<<<<<< HEAD\nRedis needs maxmemory\n=======\nRedis grows\n>>>>>>> other\n",
    )
    done = _commit(repo, bucket, text)
    assert done.returncode == 1
    assert "merge conflict markers" in done.stderr


def test_a_block_id_in_two_files_is_refused_naming_both(repo: Path) -> None:
    block_id, bucket = _memory(repo)
    copy = bucket.parent / "2000-01.md"
    copy.write_text(bucket.read_text())
    git(repo, "add", str(copy))
    done = _git(repo, "commit", "-m", "copy")
    assert done.returncode == 0  # no hooks yet: git alone would take it
    git(repo, "reset", "-q", "--soft", "HEAD~1")
    hooks.install(repo)
    done = _git(repo, "commit", "-m", "copy")
    assert done.returncode == 1
    assert f"block id {block_id} is also used at" in done.stderr
    assert copy.relative_to(repo).as_posix() in done.stderr
    assert bucket.relative_to(repo).as_posix() in done.stderr


def test_the_staged_version_is_checked_not_the_working_tree(repo: Path) -> None:
    _, bucket = _memory(repo)
    hooks.install(repo)
    good = bucket.read_text()
    broken = good.replace(" -->\n", "\n", 1)
    bucket.write_text(broken)
    git(repo, "add", str(bucket))
    bucket.write_text(good.replace("it grows", "it grows a lot"))  # fixed, but not staged
    assert _git(repo, "commit", "-m", "staged broken").returncode == 1
    bucket.write_text(good.replace("it grows", "it grows a lot"))
    git(repo, "add", str(bucket))
    bucket.write_text(broken)  # broken, but not staged
    done = _git(repo, "commit", "-m", "staged good")
    assert done.returncode == 0, done.stderr


def test_commit_all_is_checked_through_gits_temporary_index(repo: Path) -> None:
    _, bucket = _memory(repo)
    hooks.install(repo)
    bucket.write_text(bucket.read_text().replace(" -->\n", "\n", 1))
    done = _git(repo, "commit", "-a", "-m", "all")
    assert done.returncode == 1
    assert "not closed with `-->`" in done.stderr


def test_commits_without_memory_files_pass(repo: Path) -> None:
    hooks.install(repo)
    (repo / "code.py").write_text("x = 1\n")
    git(repo, "add", "code.py")
    assert _git(repo, "commit", "-m", "code").returncode == 0


# ---- reindexing ----------------------------------------------------------------------------------


def test_without_hooks_a_checkout_leaves_the_index_stale(repo: Path) -> None:
    _memory(repo)
    git(repo, "switch", "-q", "-c", "other")
    _remember(repo, "Only on the other branch: staging refreshes on Mondays")
    git(repo, "switch", "-q", "main")
    assert _index(repo) == (False, 2)


def test_checkout_and_merge_keep_the_index_on_the_checked_out_memory(repo: Path) -> None:
    _memory(repo)
    hooks.install(repo)
    git(repo, "switch", "-q", "-c", "other")
    other = _remember(repo, "Only on the other branch: staging refreshes on Mondays")
    assert _index(repo) == (True, 2)
    git(repo, "switch", "-q", "main")
    assert _index(repo) == (True, 1)
    assert other not in _listed(repo)
    git(repo, "merge", "-q", "--no-ff", "--no-edit", "other")
    assert _index(repo) == (True, 2)
    assert other in _listed(repo)


def test_amend_of_a_memory_commit_reindexes(repo: Path) -> None:
    _, bucket = _memory(repo)
    hooks.install(repo)
    assert (
        _commit(repo, bucket, bucket.read_text().replace("it grows", "it swells")).returncode == 0
    )
    bucket.write_text(bucket.read_text().replace("it swells", "it balloons"))
    git(repo, "add", str(bucket))
    assert _git(repo, "commit", "--amend", "-m", "amended").returncode == 0
    assert _index(repo) == (True, 1)


def test_a_broken_config_never_fails_a_checkout(repo: Path) -> None:
    _memory(repo)
    hooks.install(repo)
    git(repo, "switch", "-q", "-c", "other")
    git(repo, "commit", "-q", "--allow-empty", "-m", "move on")
    (repo / ".elfmem/config.yaml").write_text("project: [unclosed\n")
    done = _git(repo, "switch", "-q", "main")
    assert done.returncode == 0
    assert "Error: " in done.stderr and "not valid YAML" in done.stderr
    assert "Recovery: Fix the YAML in" in done.stderr
    assert "elfmem: post-checkout hook skipped" in done.stderr


# ---- chaining, hooksPath, uninstall -----------------------------------------------------------


def test_an_existing_hook_still_runs_with_its_arguments(repo: Path) -> None:
    _memory(repo)
    user_hook = repo / ".git/hooks/post-checkout"
    user_hook.write_text(f'#!/bin/sh\necho "$@" >> "{repo.parent}/marker"\n')
    user_hook.chmod(0o755)
    report = hooks.install(repo)
    assert [h.state for h in report.hooks if h.name == "post-checkout"] == ["chained"]
    git(repo, "switch", "-q", "-c", "other")
    git(repo, "commit", "-q", "--allow-empty", "-m", "move on")
    git(repo, "switch", "-q", "main")
    calls = (repo.parent / "marker").read_text().splitlines()
    assert len(calls) == 2 and all(line.endswith(" 1") for line in calls)
    assert _index(repo)[0]


def test_a_chained_pre_commit_that_fails_still_refuses_the_commit(repo: Path) -> None:
    user_hook = repo / ".git/hooks/pre-commit"
    user_hook.write_text("#!/bin/sh\necho 'lint failed' >&2\nexit 3\n")
    user_hook.chmod(0o755)
    hooks.install(repo)
    (repo / "code.py").write_text("x = 1\n")
    git(repo, "add", "code.py")
    done = _git(repo, "commit", "-m", "code")
    assert done.returncode != 0
    assert "lint failed" in done.stderr


def test_pre_push_flushes_the_spool_keeps_stdin_for_a_chained_hook_and_never_blocks(
    repo: Path, tmp_path: Path
) -> None:
    block_id, _ = _memory(repo)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    user_hook = repo / ".git/hooks/pre-push"
    user_hook.write_text(f'#!/bin/sh\ncat >> "{tmp_path}/pushed"\n')
    user_hook.chmod(0o755)
    hooks.install(repo)
    system = arun(MemorySystem.from_config(repo))
    core = system._core
    core.store.spool.append(anchor_for_block(block_id), core.event("reinforce", block_id, at=1.0))
    assert core.store.spool.pending() == 1
    notes_before = _git(repo, "rev-parse", "-q", "--verify", "refs/notes/elfmem").stdout
    (repo / ".elfmem/config.yaml").write_text("project: [unclosed\n")  # elfmem cannot open
    done = _git(repo, "push", "-q", "origin", "main")
    assert done.returncode == 0 and "pre-push hook skipped" in done.stderr
    assert core.store.spool.pending() == 1
    git(repo, "checkout", "-q", "--", ".elfmem/config.yaml")
    done = _git(repo, "push", "-q", "origin", "main")
    assert done.returncode == 0, done.stderr
    assert core.store.spool.pending() == 0
    assert _git(repo, "rev-parse", "refs/notes/elfmem").stdout != notes_before
    assert "refs/heads/main" in (tmp_path / "pushed").read_text()


def test_core_hooks_path_is_honoured(repo: Path) -> None:
    _, bucket = _memory(repo)
    git(repo, "config", "core.hooksPath", ".githooks")
    report = hooks.install(repo)
    assert report.hooks_dir == str(repo / ".githooks")
    assert (repo / ".githooks/pre-commit").exists()
    assert not (repo / ".git/hooks/pre-commit").exists()
    done = _commit(repo, bucket, bucket.read_text().replace(" -->\n", "\n", 1))
    assert done.returncode == 1 and "not closed with `-->`" in done.stderr


def test_uninstall_restores_the_original_hook_byte_for_byte(repo: Path) -> None:
    folder = repo / ".git/hooks"
    original = b"#!/bin/sh\n# caf\xe9 \xff not utf-8\nexit 0\n"
    (folder / "pre-commit").write_bytes(original)
    (folder / "pre-commit").chmod(0o750)
    assert [h.state for h in hooks.status(repo).hooks][:2] == ["foreign", "missing"]
    hooks.install(repo)
    hooks.install(repo)
    assert (folder / "pre-commit.elfmem-chained").read_bytes() == original
    report = hooks.uninstall(repo)
    others = len(hooks.HOOK_NAMES) - 1
    assert [h.action for h in report.hooks] == ["restored"] + ["removed"] * others
    assert (folder / "pre-commit").read_bytes() == original
    assert stat.S_IMODE((folder / "pre-commit").stat().st_mode) == 0o750
    assert not list(folder.glob("*.elfmem-chained"))
    assert [h.state for h in hooks.status(repo).hooks] == ["foreign"] + ["missing"] * others


def test_install_refuses_to_drop_a_hook_when_both_slots_are_taken(repo: Path) -> None:
    folder = repo / ".git/hooks"
    (folder / "pre-push").write_text("#!/bin/sh\nexit 0\n")
    (folder / "pre-push.elfmem-chained").write_text("#!/bin/sh\nexit 1\n")
    with pytest.raises(RepoStateError) as caught:
        hooks.install(repo)
    assert "pre-push.elfmem-chained" in caught.value.recovery
    assert not (folder / "pre-commit").exists()


def test_the_installing_python_runs_the_hook_when_path_has_no_elfmem(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, bucket = _memory(repo)
    hooks.install(repo, python=sys.executable)
    monkeypatch.setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
    done = _commit(repo, bucket, bucket.read_text().replace(" -->\n", "\n", 1))
    assert done.returncode == 1 and "not closed with `-->`" in done.stderr
    hooks.install(repo, python=str(repo / "no-such-python"))
    done = _git(repo, "commit", "-m", "unchecked")
    assert done.returncode == 0
    assert "elfmem: not found, so its pre-commit hook did nothing" in done.stderr


def test_hooks_commands_speak_json(repo: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["-C", str(repo), "hooks", "install", "--json"])
    assert result.exit_code == 0, result.output
    assert {h["action"] for h in json.loads(result.stdout)["hooks"]} == {"installed"}
    result = runner.invoke(cli, ["-C", str(repo), "hooks", "status", "--json"])
    assert {h["name"]: h["state"] for h in json.loads(result.stdout)["hooks"]} == {
        name: "ours" for name in hooks.HOOK_NAMES
    }
    result = runner.invoke(cli, ["-C", str(repo), "hooks", "uninstall", "--json"])
    assert {h["state"] for h in json.loads(result.stdout)["hooks"]} == {"missing"}


def test_hook_command_checks_named_paths_as_the_pre_commit_framework_passes_them(
    repo: Path,
) -> None:
    _, bucket = _memory(repo)
    rel = bucket.relative_to(repo).as_posix()
    bucket.write_text(bucket.read_text().replace(" -->\n", "\n", 1))
    git(repo, "add", rel)
    runner = CliRunner()
    result = runner.invoke(cli, ["-C", str(repo), "hook", "--json", "pre-commit", rel])
    assert result.exit_code == 1
    [problem] = json.loads(result.stdout)["problems"]
    assert (problem["path"], problem["line"]) == (rel, 2)
    result = runner.invoke(cli, ["-C", str(repo), "hook", "pre-commit", "README.md"])
    assert result.exit_code == 0
    result = runner.invoke(cli, ["-C", str(repo), "hook", "pre-fetch"])
    assert result.exit_code == 2


def test_reindex_hook_speaks_json_and_exits_0_even_when_memory_cannot_open(repo: Path) -> None:
    _memory(repo)
    runner = CliRunner()
    result = runner.invoke(cli, ["-C", str(repo), "hook", "--json", "post-merge"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["errors"] == []
    (repo / ".elfmem/config.yaml").write_text("project: [unclosed\n")
    result = runner.invoke(cli, ["-C", str(repo), "hook", "--json", "post-merge"])
    assert result.exit_code == 0
    assert "not valid YAML" in json.loads(result.stdout)["error"]
    assert "elfmem: post-merge hook skipped" in result.stderr


def test_a_chained_reference_transaction_hook_gets_its_input_and_a_commit_runs_no_elfmem(
    repo: Path, tmp_path: Path
) -> None:
    _memory(repo)
    user_hook = repo / ".git/hooks/reference-transaction"
    user_hook.write_text(f'#!/bin/sh\necho "$1" >> "{tmp_path}/states"; cat >> "{tmp_path}/seen"\n')
    user_hook.chmod(0o755)
    hooks.install(repo)
    assert (repo / ".git/hooks/reference-transaction.elfmem-chained").exists()
    (repo / "code.py").write_text("x = 1\n")
    git(repo, "add", "code.py")
    done = _git(repo, "commit", "-q", "-m", "code")
    assert done.returncode == 0, done.stderr
    assert "refs/heads/main" in (tmp_path / "seen").read_text()
    assert "committed" in (tmp_path / "states").read_text()
    assert done.stderr == ""  # nothing of elfmem's ran: no remote-tracking ref moved


def test_doctor_names_hooks_an_older_install_lacks(repo: Path) -> None:
    from elfmem.care import doctor

    _memory(repo)
    hooks.install(repo)
    (repo / ".git/hooks/reference-transaction").unlink()  # as an install before the hook existed
    system = arun(MemorySystem.from_config(repo))
    try:
        [check] = [c for c in doctor.doctor(system._core).checks if c.name == "hooks"]
    finally:
        arun(system.close())
    assert "adds the missing ones" in check.detail
