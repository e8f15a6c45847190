"""A clone whose checkout holds no memory, while another branch does, says `git switch` to it.

The common case: ``git clone`` of a bare repository whose HEAD names ``master`` while elfmem's
memory went to ``main`` checks nothing out. ``status`` and ``doctor`` must point at the branch,
never at ``elfmem init`` (which would start a second, empty memory).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.cli import cli
from tests.conftest import git


def run(repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def empty_clone(tmp_path: Path) -> Path:
    ada = tmp_path / "ada"
    assert run(ada, "init", "--name", "Ada")[0] == 0
    assert run(ada, "remember", "Postgres pooling needs pgbouncer above 100 clients")[0] == 0
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "--initial-branch=master", str(bare))
    git(ada, "remote", "add", "origin", str(bare))
    git(ada, "push", "-q", "-u", "origin", "main")
    git(tmp_path, "clone", "-q", str(bare), "bob")
    return tmp_path / "bob"


def test_status_in_a_clone_that_checked_out_nothing_says_git_switch_main(
    empty_clone: Path,
) -> None:
    code, out, err = run(empty_clone, "status", "--json")
    assert code == 0, err
    assert "git switch main" in json.loads(out)["suggestion"]
    assert "git switch main" in err  # said on every command, as a warning
    assert "elfmem init" not in json.loads(out)["suggestion"]


def test_doctor_in_a_clone_that_checked_out_nothing_says_git_switch_main(
    empty_clone: Path,
) -> None:
    _, out, _ = run(empty_clone, "doctor", "--json")
    memory = next(c for c in json.loads(out)["checks"] if c["name"] == "memory")
    assert not memory["ok"] and memory["fix"] == "git switch main"
    git(empty_clone, "switch", "-q", "main")  # follow it
    code, out, _ = run(empty_clone, "status", "--json")
    assert json.loads(out)["inbox"] == 1
