"""Ids like git's: a unique prefix of four or more characters stands for the whole id."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem import MemorySystem
from elfmem.block.model import Block
from elfmem.block.render import render_file
from elfmem.cli import cli
from elfmem.errors import BlockNotFound, InvalidInput
from elfmem.rhythms.ids import resolve
from tests.conftest import arun, git

TWINS = ("649f000000000001", "649f000000000002")
LONER = "a1b2c3d4e5f60718"


def _memory(repo: Path) -> Path:
    """A memory whose blocks have chosen ids, written by hand as a person may."""

    async def init() -> None:
        system, _ = await MemorySystem.init(repo, name="Ada")
        await system.close()

    arun(init())
    blocks = [
        Block(TWINS[0], "Postgres needs pgbouncer above 100 clients", cue="pooling"),
        Block(TWINS[1], "Redis needs maxmemory set", cue="caching"),
        Block(LONER, "Shard the events table by tenant", cue="scaling"),
    ]
    path = repo / ".elfmem/memory/notes/knowledge/2026-01.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_file(blocks), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hand-written blocks")
    return repo


def _resolve(repo: Path, ref: str) -> str:
    async def go() -> str:
        system = await MemorySystem.from_config(repo)
        try:
            return resolve(system._core, ref)
        finally:
            await system.close()

    return arun(go())


def test_a_unique_prefix_resolves_to_the_full_id(repo: Path) -> None:
    _memory(repo)
    assert _resolve(repo, "a1b2") == LONER
    assert _resolve(repo, "A1B2C3") == LONER
    assert _resolve(repo, LONER[:15]) == LONER


def test_a_full_id_is_returned_as_given(repo: Path) -> None:
    _memory(repo)
    assert _resolve(repo, LONER) == LONER
    assert _resolve(repo, "ffffffffffffffff") == "ffffffffffffffff"


def test_an_ambiguous_prefix_lists_each_candidate_with_its_heading(repo: Path) -> None:
    _memory(repo)
    with pytest.raises(InvalidInput) as raised:
        _resolve(repo, "649f")
    message = raised.value.message
    assert "ambiguous" in message
    assert f"{TWINS[0]} Postgres needs pgbouncer above 100 clients" in message
    assert f"{TWINS[1]} Redis needs maxmemory set" in message
    assert raised.value.recovery


def test_a_prefix_shorter_than_four_characters_is_refused(repo: Path) -> None:
    _memory(repo)
    with pytest.raises(InvalidInput, match="at least 4 characters"):
        _resolve(repo, "a1b")
    with pytest.raises(InvalidInput, match="too short"):
        _resolve(repo, "")


def test_an_unknown_prefix_reaches_the_operation_and_its_not_found_error(repo: Path) -> None:
    _memory(repo)
    assert _resolve(repo, "beef") == "beef"

    async def show() -> None:
        system = await MemorySystem.from_config(repo)
        try:
            await system.show("beef")
        finally:
            await system.close()

    with pytest.raises(BlockNotFound, match="beef"):
        arun(show())


def test_every_operation_that_takes_an_id_accepts_a_prefix(repo: Path) -> None:
    _memory(repo)

    async def go() -> None:
        system = await MemorySystem.from_config(repo)
        try:
            assert (await system.show("a1b2")).id == LONER
            assert (await system.block_history("a1b2c")).block_id == LONER
            assert (await system.ledger("a1b2")).block_id == LONER
            edited = await system.edit("a1b2", "Shard the events table by tenant id")
            assert edited.block_id == LONER
            linked = await system.connect("a1b2", TWINS[0], "supports")
            assert linked.edges == [{"source": LONER, "target": TWINS[0], "relation": "supports"}]
            await system.disconnect("a1b2", TWINS[0], "supports")
            scored = await system.outcome(["a1b2", TWINS[1]], 1.0, source="test")
            assert [u["id"] for u in scored.updated] == [LONER, TWINS[1]]
            assert (await system.forget("a1b2")).block_id == LONER
        finally:
            await system.close()

    arun(go())


def test_the_cli_takes_a_prefix_and_explains_an_ambiguous_one(repo: Path) -> None:
    _memory(repo)
    runner = CliRunner()
    shown = runner.invoke(cli, ["-C", str(repo), "show", "a1b2", "--json"])
    assert shown.exit_code == 0, shown.stderr
    assert LONER in shown.stdout
    ambiguous = runner.invoke(cli, ["-C", str(repo), "show", "649f"])
    assert ambiguous.exit_code != 0
    assert "Error:" in ambiguous.stderr and TWINS[0] in ambiguous.stderr
    assert "Recovery:" in ambiguous.stderr


def test_the_mcp_tools_take_a_prefix_and_explain_an_ambiguous_one(repo: Path) -> None:
    from tests.mcp.test_server import call, connected

    _memory(repo)

    async def go() -> None:
        async with connected(repo) as client:
            failed, body = await call(client, "elfmem_show", block_id="a1b2")
            assert not failed and body["id"] == LONER
            failed, body = await call(client, "elfmem_show", block_id="649f")
            assert failed and TWINS[1] in body["error"] and body["recovery"]

    arun(go())
