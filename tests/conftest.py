"""Shared fixtures: real git repositories in tmp_path, driven through pygit2 and the git binary."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import settings

from elfmem.index.queries import BlockRow

# Property tests are reproducible and never flaky on a loaded machine: a fixed seed, no deadline.
settings.register_profile("elfmem", derandomize=True, deadline=None)
settings.load_profile("elfmem")

T = TypeVar("T")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Pat Person",
    "GIT_AUTHOR_EMAIL": "pat@example.com",
    "GIT_COMMITTER_NAME": "Pat Person",
    "GIT_COMMITTER_EMAIL": "pat@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Run the real git binary; return stdout."""
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def arun(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def block_row(
    block_id: str, content: str | None = None, created: str = "2026-01-01T00:00:00+00:00"
) -> BlockRow:
    """An active fact's index row, for tests of ranking that need no memory around it."""
    return BlockRow(
        id=block_id,
        path=f"blocks/{block_id}.md",
        status="active",
        cls="fact",
        tags=(),
        pinned=False,
        created=created,
        cue="",
        content=f"fact {block_id}" if content is None else content,
        content_hash=block_id,
        tier="",
        relations=(),
        fields=(),
        extra=(),
    )


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test reads the developer's git config or writes their caches."""
    home = tmp_path_factory.mktemp("home")
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Pat Person\n\temail = pat@example.com\n[init]\n\tdefaultBranch = main\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    """A git repository with one ordinary commit, as a user's project would have."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# project\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "initial")
    yield root


@pytest.fixture
def run_git() -> Callable[..., str]:
    return git
