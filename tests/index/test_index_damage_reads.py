"""Damaged pages inside index.db (header intact): every read heals and answers; check and doctor
report the damage. Real repository, real SQLite file, bytes overwritten on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.api import MemorySystem
from elfmem.cli import cli
from tests.conftest import arun, git

BLOCKS = 40


@pytest.fixture
def memory(repo: Path) -> Path:
    async def build() -> None:
        system, _ = await MemorySystem.init(repo)
        try:
            await system.remember_many(
                [
                    {"content": f"fact {i} about billing retries and webhook {i}", "cue": f"c{i}"}
                    for i in range(BLOCKS)
                ]
            )
            await system.dream(max_blocks=BLOCKS)
            await system.recall("billing retries")
        finally:
            await system.close()

    arun(build())
    return repo


def damage_pages(repo: Path) -> Path:
    """Overwrite bytes inside every page but the first: the header still says all is well."""
    path = repo / ".git" / "elfmem" / "index.db"
    data = bytearray(path.read_bytes())
    assert len(data) > 8192
    for offset in range(4096, len(data), 4096):
        data[offset + 200 : offset + 456] = b"\xde\xad\xbe\xef" * 64
    path.write_bytes(bytes(data))
    return path


def _names_damage(report: str | None) -> bool:
    """The damage shows either at open (the schema pages are read) or in ``quick_check``, depending
    on which pages the overwrite hit; either way the report names it."""
    return bool(report) and ("quick_check" in report or "malformed" in report)


def cli_run(repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args])
    return result.exit_code, result.stdout, result.stderr


def test_every_read_answers_from_a_healed_index(memory: Path) -> None:
    head = git(memory, "rev-parse", "HEAD")
    damage_pages(memory)

    async def reads() -> None:
        system = await MemorySystem.from_config(memory)
        try:
            assert len((await system.ls()).blocks) == BLOCKS
            found = await system.recall("billing retries webhook")
            assert found.blocks
            assert (await system.status()).active == BLOCKS
            assert (await system.index_status()).details["counts"]["active"] == BLOCKS
            assert (await system.index_parity(probes=3)).ok
        finally:
            await system.close()

    arun(reads())
    assert git(memory, "rev-parse", "HEAD") == head  # healed without a write
    assert (memory / ".git" / "elfmem" / "index.db.broken").exists()


@pytest.mark.parametrize(
    "command", [["ls"], ["recall", "billing"], ["status"], ["index", "status"]]
)
def test_each_command_on_damaged_pages_answers(memory: Path, command: list[str]) -> None:
    damage_pages(memory)
    code, out, err = cli_run(memory, *command)
    assert code == 0, err
    assert "Error" not in err and out.strip()


def test_index_check_finds_and_reports_damage_it_heals(memory: Path) -> None:
    damage_pages(memory)
    code, out, _ = cli_run(memory, "index", "check", "--json")
    assert code == 1
    body = json.loads(out)
    assert _names_damage(body["index_damage"])
    code, out, _ = cli_run(memory, "index", "check")  # healed now; the kept file is reported
    assert code == 0 and "index.db.broken" in out
    code, out, _ = cli_run(memory, "ls", "--json")
    assert code == 0 and len(json.loads(out)["blocks"]) == BLOCKS


def test_doctor_reports_the_damage(memory: Path) -> None:
    damage_pages(memory)
    code, out, _ = cli_run(memory, "doctor")
    index_line = next(line for line in out.splitlines() if " index " in line)
    assert code == 1 and _names_damage(index_line), out
    code, out, _ = cli_run(memory, "doctor")
    index_line = next(line for line in out.splitlines() if " index " in line)
    assert code == 0 and "index.db.broken" in index_line
