"""Minds and predictions: commits, ledger calibration with the Jeffreys prior, undo, CLI and MCP."""

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
from tests.mcp.test_server import fails, ok


def cli_run(repo: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def commits(repo: Path) -> int:
    return int(git(repo, "rev-list", "--count", "HEAD"))


@pytest.fixture
def memory(repo: Path) -> Path:
    system, _ = arun(MemorySystem.init(repo, seed=True))
    arun(system.close())
    return repo


def test_ten_predictions_seven_hits_give_7_of_10_and_the_beta_posterior(memory: Path) -> None:
    async def scenario() -> list[str]:
        system = await MemorySystem.from_config(memory)
        await system.mind_create("alice", "Alice reviews cautiously and blocks PRs without tests.")
        ids = [
            (await system.mind_predict("alice", f"Alice will reject PR {n}: no tests.")).block_id
            for n in range(10)
        ]
        for n, prediction in enumerate(ids):
            await system.mind_outcome(prediction, hit=n < 7)
        await system.close()
        return ids

    before = commits(memory)
    ids = arun(scenario())
    assert commits(memory) == before + 1 + 10 + 10  # one commit per create, predict and outcome
    out = cli_run(memory, "mind", "list")
    assert "alice" in out and "7/10 hits" in out
    listed = json.loads(cli_run(memory, "mind", "list", "--json"))["minds"]
    assert [(m["name"], m["hits"], m["misses"], m["open"]) for m in listed] == [("alice", 7, 3, 0)]
    # Jeffreys prior Beta(0.5, 0.5) plus one observation per closed prediction
    assert listed[0]["confidence"] == pytest.approx((0.5 + 7) / (0.5 + 7 + 0.5 + 3), abs=1e-6)
    shown = json.loads(cli_run(memory, "mind", "show", "alice", "--json"))
    assert {p["id"]: p["state"] for p in shown["predictions"]} == {
        b: ("hit" if n < 7 else "miss") for n, b in enumerate(ids)
    }
    mind_id = listed[0]["id"]
    ledger = json.loads(cli_run(memory, "ledger", mind_id, "--json"))
    outcomes = [e for e in ledger["events"] if e["kind"] == "outcome"]
    assert sorted(e["signal"] for e in outcomes) == [0.0] * 3 + [1.0] * 7


def test_prediction_links_to_its_mind_and_closing_twice_is_refused(memory: Path) -> None:
    async def scenario() -> None:
        system = await MemorySystem.from_config(memory)
        mind = await system.mind_create("build-bot", "The CI bot retries flaky jobs once.")
        pred = await system.mind_predict(mind.mind_id, "The bot will retry job 7 exactly once.")
        block = await system.show(pred.block_id)
        assert block.relations == [["derived-from", mind.mind_id]]
        assert block.status == "active" and "prediction/open" in block.tags
        closed = await system.mind_outcome(pred.block_id, hit=True)
        assert closed.confidence == pytest.approx(1.5 / 2)
        with pytest.raises(InvalidInput, match="already closed"):
            await system.mind_outcome(pred.block_id, hit=False)
        with pytest.raises(BlockNotFound):
            await system.mind_outcome(mind.mind_id, hit=True)  # a mind is not a prediction
        with pytest.raises(InvalidInput, match="exists already"):
            await system.mind_create("build-bot", "Another model of the same bot.")
        with pytest.raises(InvalidInput, match="Invalid mind name"):
            await system.mind_create("two words", "Names are tags.")
        with pytest.raises(BlockNotFound):
            await system.mind_predict("nobody", "Nobody will do anything.")
        await system.close()

    arun(scenario())


def test_undoing_an_outcome_reopens_the_prediction_and_restores_confidence(memory: Path) -> None:
    async def scenario() -> None:
        system = await MemorySystem.from_config(memory)
        mind = await system.mind_create("bob", "Bob answers email within a day.")
        pred = await system.mind_predict("bob", "Bob will answer Monday's email by Tuesday.")
        await system.mind_outcome(pred.block_id, hit=False)
        assert (await system.mind_list()).minds[0].confidence == pytest.approx(0.5 / 2)
        undone = await system.undo()
        assert undone.commit_id is not None
        after = await system.mind_show(mind.mind_id)
        assert after.confidence == pytest.approx(0.5) and after.open == 1 and after.misses == 0
        await system.mind_outcome(pred.block_id, hit=True)  # can be closed again
        assert (await system.mind_show("bob")).hits == 1
        await system.close()

    arun(scenario())


def test_minds_through_the_mcp_server(memory: Path) -> None:
    async def scenario() -> None:
        async with Client(build_server(await MemorySystem.from_config(memory))) as client:
            made = await ok(client, "elfmem_mind_create", name="carol", content="Carol ships fast.")
            pred = await ok(
                client, "elfmem_mind_predict", mind="carol", content="Carol ships today."
            )
            closed = await ok(
                client, "elfmem_mind_outcome", prediction_id=pred["block_id"], hit=True
            )
            assert closed["outcome"] == "hit" and closed["mind_id"] == made["block_id"]
            listed = await ok(client, "elfmem_mind_list")
            assert listed["minds"][0]["hits"] == 1
            shown = await ok(client, "elfmem_mind_show", mind="carol")
            assert shown["predictions"][0]["state"] == "hit"
            await fails(client, "elfmem_mind_show", mind="nobody")

    arun(scenario())
