"""The git-binary transport against real bare remotes on disk."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from elfmem.errors import NotFound, RemoteError
from elfmem.store import transport


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def _commit(path: Path, name: str) -> None:
    (path / name).write_text(name)
    _git(path, "add", name)
    _git(path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", name)


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path, Path]:
    bare = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", str(bare))
    a, b = tmp_path / "a", tmp_path / "b"
    for clone in (a, b):
        _git(tmp_path, "init", "-q", "-b", "main", str(clone))
        _git(clone, "remote", "add", "origin", str(bare))
    return bare, a, b


def test_push_then_fetch_reports_each_ref(pair: tuple[Path, Path, Path]) -> None:
    _, a, b = pair
    _commit(a, "one")
    report = transport.push(a / ".git", "origin", ["refs/heads/main:refs/heads/main"])
    assert [u.flag for u in report.updates] == ["*"] and not report.rejected
    updates = transport.fetch(b / ".git", "origin", ["refs/heads/main:refs/remotes/origin/main"])
    assert [u.target for u in updates if u.changed] == ["refs/remotes/origin/main"]
    assert pygit2.Repository(str(b)).references.get("refs/remotes/origin/main") is not None


def test_a_push_behind_the_remote_comes_back_rejected_not_raised(
    pair: tuple[Path, Path, Path],
) -> None:
    _, a, b = pair
    _commit(a, "one")
    transport.push(a / ".git", "origin", ["refs/heads/main"])
    _commit(b, "two")
    report = transport.push(b / ".git", "origin", ["refs/heads/main"])
    assert [u.target for u in report.rejected] == ["refs/heads/main"]


def test_a_missing_remote_ref_is_no_memory_yet_not_an_error(
    pair: tuple[Path, Path, Path],
) -> None:
    _, a, b = pair
    _commit(a, "one")
    transport.push(a / ".git", "origin", ["refs/heads/main"])
    updates = transport.fetch(
        b / ".git",
        "origin",
        ["refs/notes/elfmem:refs/notes/remotes/origin/elfmem", "refs/heads/main:refs/x/main"],
    )
    assert [u.target for u in updates] == ["refs/x/main"]


def test_an_unreachable_remote_is_a_remote_error_with_a_recovery(tmp_path: Path) -> None:
    clone = tmp_path / "c"
    _git(tmp_path, "init", "-q", str(clone))
    _git(clone, "remote", "add", "origin", str(tmp_path / "gone.git"))
    with pytest.raises(RemoteError) as caught:
        transport.fetch(clone / ".git", "origin", ["refs/heads/main:refs/x"])
    assert "cannot reach" in str(caught.value) and "nothing local" in caught.value.recovery
    assert caught.value.exit_code == 8


def test_the_default_remote_is_origin_and_an_unknown_name_is_not_found(
    pair: tuple[Path, Path, Path],
) -> None:
    _, a, _ = pair
    assert transport.remote_or_default(a / ".git", None) == "origin"
    with pytest.raises(NotFound):
        transport.remote_or_default(a / ".git", "upstream")
