"""Look-alike review: list the pairs dream kept, settle each in one commit, undo brings it back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client

from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.errors import BlockNotFound, InvalidInput
from elfmem.mcp import build_server
from tests.conftest import arun, git

OLD = "Deploys are allowed on Friday afternoons"
NEW = "Deploys are not allowed on Friday afternoons"
VESPER = "After editing its config, restart the vesper router with the --safe flag."
GATEWAY = "After editing its config, restart the vesper gateway with the --safe flag."


def linked(repo: Path, pairs: list[tuple[str, str]]) -> tuple[MemorySystem, list[str], list[str]]:
    system, _ = arun(MemorySystem.init(repo))
    older = arun(system.remember_many([{"content": a} for a, _ in pairs])).created
    arun(system.dream(no_llm=True))
    newer = arun(system.remember_many([{"content": b} for _, b in pairs])).created
    result = arun(system.dream(no_llm=True))
    assert len(result.lookalikes) == len(pairs)
    return system, older, newer


def listed(system: MemorySystem) -> list[tuple[str, str]]:
    return [(str(p["newer"]), str(p["older"])) for p in arun(system.lookalikes()).pairs]


def commits(repo: Path) -> int:
    return int(git(repo, "rev-list", "--count", "HEAD"))


def test_pairs_are_listed_newer_first_with_their_differences(repo: Path) -> None:
    system, older, newer = linked(repo, [(OLD, NEW), (VESPER, GATEWAY)])
    result = arun(system.lookalikes())
    by_newer = {p["newer"]: p for p in result.pairs}
    assert set(by_newer) == set(newer)
    neg = by_newer[newer[0]]
    assert neg["older"] == older[0] and neg["revision"] is True
    assert neg["differs"] == [{"kind": "negation", "left": [], "right": ["not"]}]
    assert neg["newer_content"] == NEW and neg["older_content"] == OLD
    other = by_newer[newer[1]]
    assert other["revision"] is False and other["differs"][0]["kind"] == "word"  # type: ignore[index]
    assert "vesper gateway" in result.summary and "elfmem review resolve" in result.summary
    arun(system.close())


def test_keep_both_is_one_commit_that_stops_the_listing_and_undo_lists_it_again(
    repo: Path,
) -> None:
    system, older, newer = linked(repo, [(VESPER, GATEWAY)])
    before = commits(repo)
    done = arun(system.resolve_lookalike(older[0], newer[0], "keep"))
    assert done.commit_id and commits(repo) == before + 1
    assert arun(system.show(newer[0])).extra.get("lookalike-kept") == older[0]
    assert listed(system) == []
    again = arun(system.resolve_lookalike(newer[0], older[0], "keep"))
    assert again.commit_id is None and commits(repo) == before + 1
    assert {b.id for b in arun(system.ls(status="active")).blocks} >= {*older, *newer}
    arun(system.undo())
    assert listed(system) == [(newer[0], older[0])]
    arun(system.close())


def test_supersede_declares_the_relation_in_the_newer_file_and_keeps_both(repo: Path) -> None:
    system, older, newer = linked(repo, [(OLD, NEW)])
    before = commits(repo)
    arun(system.resolve_lookalike(newer[0], older[0], "supersede"))
    assert commits(repo) == before + 1
    assert ["supersedes", older[0]] in arun(system.show(newer[0])).relations
    assert arun(system.show(older[0])).status == "active"
    assert "supersedes:: [[" + older[0] + "]]" in git(repo, "show", "HEAD", "--", ".")
    assert listed(system) == []
    arun(system.undo())
    assert arun(system.show(newer[0])).relations == []
    assert listed(system) == [(newer[0], older[0])]
    arun(system.close())


def test_merge_keeps_both_texts_in_one_block_and_archives_the_other(repo: Path) -> None:
    system, older, newer = linked(repo, [(VESPER, GATEWAY)])
    before = commits(repo)
    arun(system.resolve_lookalike(older[0], newer[0], "merge"))
    assert commits(repo) == before + 1
    kept = arun(system.show(older[0]))
    assert VESPER in kept.content and GATEWAY in kept.content
    assert ["derived-from", newer[0]] in kept.relations
    gone = arun(system.show(newer[0]))
    assert gone.status == "archived" and gone.extra.get("duplicate-of") == older[0]
    assert gone.content == GATEWAY  # archived, not rewritten: nothing is lost
    assert listed(system) == []
    found = arun(system.recall("restart the vesper gateway", reinforce=False))
    assert older[0] in [b.id for b in found.blocks]
    arun(system.undo())
    assert arun(system.show(older[0])).content == VESPER
    assert arun(system.show(newer[0])).status == "active"
    assert listed(system) == [(newer[0], older[0])]
    arun(system.close())


def test_bad_requests_are_refused_with_a_recovery_and_change_nothing(repo: Path) -> None:
    system, older, newer = linked(repo, [(OLD, NEW)])
    before = commits(repo)
    with pytest.raises(InvalidInput) as bad:
        arun(system.resolve_lookalike(newer[0], older[0], "delete"))
    assert "keep" in bad.value.recovery
    with pytest.raises(InvalidInput):
        arun(system.resolve_lookalike(newer[0], newer[0], "keep"))
    with pytest.raises(BlockNotFound):
        arun(system.resolve_lookalike(newer[0], "0123456789abcdef", "keep"))
    arun(system.forget(older[0]))
    with pytest.raises(InvalidInput) as settled:
        arun(system.resolve_lookalike(newer[0], older[0], "supersede"))
    assert "archived" in settled.value.message
    assert commits(repo) == before + 1  # the forget only
    assert listed(system) == []  # a pair with an archived side is not listed
    arun(system.close())


def test_cli_lists_and_resolves_and_errors_go_to_stderr(repo: Path) -> None:
    system, older, newer = linked(repo, [(OLD, NEW)])
    arun(system.close())
    runner = CliRunner()
    out = runner.invoke(cli, ["-C", str(repo), "review", "lookalikes", "--json"])
    assert out.exit_code == 0, out.stderr
    [pair] = json.loads(out.stdout)["pairs"]
    assert (pair["newer"], pair["older"]) == (newer[0], older[0])
    bad = runner.invoke(cli, ["-C", str(repo), "review", "resolve", newer[0], "nope", "keep"])
    assert bad.exit_code != 0 and "Error:" in bad.stderr and "Recovery:" in bad.stderr
    done = runner.invoke(
        cli, ["-C", str(repo), "review", "resolve", newer[0], older[0], "supersede", "--json"]
    )
    assert done.exit_code == 0 and json.loads(done.stdout)["commit_id"]
    text = runner.invoke(cli, ["-C", str(repo), "review", "lookalikes"])
    assert "No look-alikes" in text.stdout


def test_mcp_tools_list_and_resolve(repo: Path) -> None:
    system, older, newer = linked(repo, [(OLD, NEW)])
    arun(system.close())

    async def go() -> None:
        async with Client(build_server(await MemorySystem.from_config(repo))) as client:
            listed_ = await client.call_tool("elfmem_lookalikes", {})
            [pair] = json.loads(listed_.content[0].text)["pairs"]  # type: ignore[union-attr]
            assert pair["newer"] == newer[0]
            bad = await client.call_tool(
                "elfmem_resolve_lookalike",
                {"block_id": newer[0], "other": older[0], "action": "shred"},
            )
            body = json.loads(bad.content[0].text)  # type: ignore[union-attr]
            assert bad.is_error and body["error"] and body["recovery"]
            ok = await client.call_tool(
                "elfmem_resolve_lookalike",
                {"block_id": newer[0], "other": older[0], "action": "keep"},
            )
            assert not ok.is_error
            again = await client.call_tool("elfmem_lookalikes", {})
            assert json.loads(again.content[0].text)["pairs"] == []  # type: ignore[union-attr]

    arun(go())
