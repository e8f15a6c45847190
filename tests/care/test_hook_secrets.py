"""The pre-commit hook and hand edits against credentials anywhere under ``.elfmem/``.

A person's ``git commit`` passes only through the hook, so it reads every staged file under
``.elfmem/`` (the config, the roster, any file a person adds), not only the memory buckets, and it
knows elfmem's own inline fields (``password:: V``) as well as the writer does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.care import hooks
from tests.conftest import GIT_ENV, arun, git

PASSWORD = "Xq9!vR2/mTz8#LwK"
GHP = "ghp_" + "Q7x9Lm2Pz4Kd8Rw1Ty6Vb3Nc5Hj0FgA2sD4fG6hJ8k"[:36]


@pytest.fixture(autouse=True)
def _elfmem_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def _commit(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", "commit", *args, "-m", "hand edit"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
    )


@pytest.fixture
def memory(repo: Path) -> Path:
    """A memory with one block and elfmem's hooks installed."""
    system, _ = arun(MemorySystem.init(repo, name="Ada"))
    arun(system.remember("Redis needs maxmemory set or it grows", cue="configuring redis"))
    arun(system.close())
    hooks.install(repo)
    return repo


def _bucket(repo: Path) -> Path:
    [found] = [p for p in (repo / ".elfmem/memory").rglob("*.md") if "cue:: " in p.read_text()]
    return found


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (".elfmem/config.yaml", f"\nsync:\n  token: {GHP}\n"),
        (".elfmem/notes-for-later.txt", f"db password = `{PASSWORD}`\n"),
        (".elfmem/memory/extra.json", f'{{"client_secret": "{PASSWORD}"}}\n'),
    ],
)
def test_a_credential_in_any_staged_file_under_elfmem_is_refused(
    memory: Path, path: str, text: str
) -> None:
    target = memory / path
    target.write_text((target.read_text() if target.exists() else "") + text)
    git(memory, "add", path)
    head = git(memory, "rev-parse", "HEAD")
    done = _commit(memory)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{path}:" in done.stderr and "looks like a secret" in done.stderr
    assert GHP not in done.stderr + done.stdout and PASSWORD not in done.stderr + done.stdout
    assert git(memory, "rev-parse", "HEAD") == head


def test_files_outside_elfmem_are_not_the_hooks_business(memory: Path) -> None:
    (memory / "notes.txt").write_text(f"db password = `{PASSWORD}`\n")
    git(memory, "add", "notes.txt")
    assert _commit(memory).returncode == 0


@pytest.mark.parametrize("key", ["apikey", "password", "client_secret"])
def test_an_inline_field_holding_a_secret_is_refused_by_the_hook(memory: Path, key: str) -> None:
    bucket = _bucket(memory)
    text = bucket.read_text()
    bucket.write_text(
        text.replace("cue:: configuring redis", f"cue:: configuring redis\n{key}:: {PASSWORD}")
    )
    done = _commit(memory, "-a")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "looks like a secret" in done.stderr and PASSWORD not in done.stderr


@pytest.mark.parametrize("key", ["apikey", "password", "client_secret"])
def test_an_inline_field_typed_by_hand_is_not_carried_into_the_next_write(
    memory: Path, key: str
) -> None:
    bucket = _bucket(memory)
    edited = bucket.read_text().replace(
        "cue:: configuring redis", f"cue:: configuring redis\n{key}:: {PASSWORD}"
    )
    bucket.write_text(edited)
    head = git(memory, "rev-parse", "HEAD")
    system = arun(MemorySystem.from_config(memory))
    try:
        with pytest.raises(Exception, match="Refused: ") as err:
            arun(system.remember("Postgres wants pgbouncer"))
        assert PASSWORD not in str(err.value)
    finally:
        arun(system.close())
    assert git(memory, "rev-parse", "HEAD") == head
    assert bucket.read_text() == edited
