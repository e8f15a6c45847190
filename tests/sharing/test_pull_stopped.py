"""A plain ``git pull`` that stops on memory files: every command names the steps that finish it.

Two real clones of a bare remote, driven through the CLI and the git binary. First case: one
clone moved the memory to its own ref (``elfmem mode ref``) while the other kept writing on the
branch, so the other's pull stops at a modify/delete conflict. Second: a clone without elfmem's
merge driver pulls a bucket both sides appended to, and git's text merge leaves markers. The
steps the commands name are then run verbatim, and the memory ends whole on both sides.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from elfmem.cli import cli
from tests.conftest import git

FOLLOW = ["git merge --abort", "elfmem mode ref", "elfmem sync", "git pull"]


def run(repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args])
    return result.exit_code, result.stdout, result.stderr


def remember(repo: Path, text: str) -> str:
    code, out, err = run(repo, "remember", text)
    assert code == 0, err
    return out.strip()


def listed(repo: Path) -> set[str]:
    code, out, err = run(repo, "ls", "--json")
    assert code == 0, err
    return {b["id"] for b in json.loads(out)["blocks"]}


def two_clones(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """Ada and Bob share a bare remote; each has remembered one block the other has not."""
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "--initial-branch=main", str(bare))
    ada = tmp_path / "ada"
    git(tmp_path, "clone", "-q", str(bare), "ada")
    git(ada, "commit", "-q", "--allow-empty", "-m", "start")
    assert run(ada, "init", "--name", "Ada")[0] == 0
    first = remember(ada, "The database listens on port 5432")
    git(ada, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", str(bare), "bob")
    bob = tmp_path / "bob"
    git(bob, "config", "pull.rebase", "false")
    theirs = remember(bob, "Bob learned the cache is Redis")
    ours = remember(ada, "Ada learned the queue is Kafka")
    return ada, bob, [first, theirs, ours]


def test_a_move_to_a_ref_met_by_a_pull_names_the_steps_that_follow_it(tmp_path: Path) -> None:
    ada, bob, ids = two_clones(tmp_path)
    assert run(ada, "mode", "ref")[0] == 0
    git(ada, "push", "-q", "origin", "main", "elfmem")

    git(bob, "fetch", "-q")  # fetched, not merged: the steps before the pull
    code, out, err = run(bob, "status", "--json")
    assert code == 0 and "refs/heads/elfmem" in json.loads(out)["suggestion"]
    assert "`elfmem mode ref`" in json.loads(out)["suggestion"] and "merge --abort" not in err

    pulled = git(bob, "pull", check=False)
    assert "CONFLICT (modify/delete)" in pulled
    for command in ("ls", "status", "sync", "doctor"):
        _, _, err = run(bob, command)
        assert "memory moved to its own ref refs/heads/elfmem" in err, command
        assert all(step in err for step in FOLLOW), command
        assert "`elfmem init`, which would start a second memory" in err, command
    _, out, _ = run(bob, "doctor", "--json")
    repository = next(c for c in json.loads(out)["checks"] if c["name"] == "repository")
    assert not repository["ok"] and all(step in repository["fix"] for step in FOLLOW)

    git(bob, "merge", "--abort")  # the steps, as said
    assert run(bob, "mode", "ref")[0] == 0
    code, _, err = run(bob, "sync")
    assert code == 0, err
    git(bob, "pull", "-q")
    assert git(bob, "status", "--porcelain") == ""
    assert listed(bob) == set(ids)
    _, _, err = run(bob, "status")
    assert "moved" not in err
    assert run(ada, "sync")[0] == 0
    assert listed(ada) == set(ids)


def test_a_text_merge_without_the_driver_names_abort_install_and_pull_again(
    tmp_path: Path,
) -> None:
    ada, bob, ids = two_clones(tmp_path)
    git(bob, "config", "--remove-section", "merge.elfmem")  # a clone that lost the driver
    git(ada, "push", "-q", "origin", "main")
    assert "CONFLICT (content)" in git(bob, "pull", check=False)

    steps = ["git merge --abort", "elfmem hooks install", "git pull"]
    code, out, err = run(bob, "status", "--json")
    suggestion = json.loads(out)["suggestion"]
    assert all(step in suggestion for step in steps) and "index check" not in suggestion
    assert all(step in err for step in steps) and "elfmem sync" not in err
    _, out, _ = run(bob, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    for name in ("repository", "index"):
        assert not checks[name]["ok"] and all(step in checks[name]["fix"] for step in steps)
        assert "index check" not in checks[name]["fix"]

    git(bob, "merge", "--abort")  # the steps, as said
    assert run(bob, "hooks", "install")[0] == 0
    git(bob, "pull", "-q")
    assert git(bob, "status", "--porcelain") == ""
    assert listed(bob) == set(ids)
    code, out, err = run(bob, "status", "--json")
    assert json.loads(out)["health"] == "good" and "merge" not in err
