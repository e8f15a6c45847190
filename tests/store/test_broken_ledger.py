"""A ledger ref that names no notes commit (a missing object, a blob) is a named conflict.

``refs/notes/elfmem`` is set the way damage arrives: a ref file naming an object that is not
there (a half-copied repository, a pruned object) or ``git update-ref`` onto a blob. Reads go
on without the ledger; a command that must write the ledger exits 4 naming the ref and its
repair; a block write that committed says so, with its id, so a retrying agent does not write
it twice; and the documented repair brings the ledger back with the events kept meanwhile.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from tests.conftest import arun, git

ROOT = Path(__file__).resolve().parents[2]
FACT = "The pager rota changes on Mondays"
REPAIR = "git update-ref -d refs/notes/elfmem"


def _elfmem(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "elfmem.cli", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _break(repo: Path, how: str) -> None:
    if how == "blob":
        (repo.parent / "blob.txt").write_text("not a notes commit\n")
        blob = git(repo, "hash-object", "-w", str(repo.parent / "blob.txt")).strip()
        git(repo, "update-ref", "refs/notes/elfmem", blob)
    else:
        git(repo, "pack-refs", "--all")
        (repo / ".git" / "refs" / "notes").mkdir(parents=True, exist_ok=True)
        (repo / ".git" / "refs" / "notes" / "elfmem").write_text("12" * 20 + "\n")


@pytest.fixture(params=["blob", "missing"])
def broken(request: pytest.FixtureRequest, repo: Path) -> tuple[Path, str]:
    async def build() -> str:
        system, _ = await MemorySystem.init(repo)
        try:
            block_id = (await system.remember(FACT, cue="who is on call")).block_id
            await system.outcome([block_id], 0.9, source="setup")
            return block_id
        finally:
            await system.close()

    block_id = arun(build())
    _break(repo, request.param)
    return repo, block_id


def test_reads_work_without_the_ledger_and_warn(broken: tuple[Path, str]) -> None:
    repo, block_id = broken
    for args in (["ls"], ["recall", "pager rota"], ["status"], ["show", block_id]):
        proc = _elfmem(repo, *args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert "refs/notes/elfmem" in proc.stderr and REPAIR in proc.stderr, args
    assert block_id[:8] in _elfmem(repo, "ls").stdout


def test_a_ledger_write_exits_4_naming_the_ref_and_the_repair(broken: tuple[Path, str]) -> None:
    repo, block_id = broken
    proc = _elfmem(repo, "outcome", block_id, "0.8", "--json")
    assert proc.returncode == 4, proc.stderr
    assert "refs/notes/elfmem" in proc.stderr and REPAIR in proc.stderr
    assert "bug in elfmem" not in proc.stderr and "attempts" not in proc.stderr
    assert json.loads(proc.stdout)["type"] == "LedgerBroken"


def test_a_committed_remember_reports_its_id(broken: tuple[Path, str]) -> None:
    repo, _ = broken
    proc = _elfmem(repo, "remember", "Deploys freeze on Fridays", "--json")
    assert proc.returncode == 0, proc.stderr
    new = json.loads(proc.stdout)["block_id"]
    assert new in git(repo, "show", "HEAD:.elfmem/memory/" + json.loads(proc.stdout)["path"])
    assert "refs/notes/elfmem" in proc.stderr and REPAIR in proc.stderr
    again = _elfmem(repo, "remember", "Deploys freeze on Fridays", "--json")
    assert json.loads(again.stdout)["block_id"] == new  # a retry finds it, writes nothing


def test_doctor_names_the_broken_ref(broken: tuple[Path, str]) -> None:
    repo, _ = broken
    proc = _elfmem(repo, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    assert not checks["ledger"]["ok"] and REPAIR in checks["ledger"]["fix"]


def test_the_documented_repair_restores_the_ledger(broken: tuple[Path, str]) -> None:
    repo, block_id = broken
    kept = _elfmem(repo, "remember", "Standups start at ten", "--json")
    assert kept.returncode == 0, kept.stderr
    git(repo, *REPAIR.split()[1:])
    proc = _elfmem(repo, "outcome", block_id, "0.8")
    assert proc.returncode == 0, proc.stderr
    ledger = git(repo, "notes", "--ref=elfmem", "list")
    assert ledger.strip(), "the events kept while the ledger was broken reached the new ledger"
    assert _elfmem(repo, "doctor").stderr.count("refs/notes/elfmem") == 0
