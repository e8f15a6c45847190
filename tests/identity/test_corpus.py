"""Corpus review: deterministic staleness proposals, applied as one commit that undo reverts."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from elfmem.api import MemorySystem
from elfmem.cli import cli
from tests.conftest import arun, git


def test_staleness_proposals_and_one_undoable_commit(repo: Path) -> None:
    async def scenario() -> None:
        system, _ = await MemorySystem.init(repo, seed=True)
        texts = {
            "old": "The build uses Python 3.9.",
            "new": "The build uses Python 3.11.",
            "refuted": "The flaky test is caused by the network.",
            "twice": "The nightly job retries three times.",
            "contested": "The queue drains in batches of fifty.",
            "doubted": "The cache is warmed at boot.",
            "disputed": "Deploys happen on Fridays.",
            "fine": "The linter runs in CI.",
        }
        ids = {k: (await system.remember(t, cue=k)).block_id for k, t in texts.items()}
        pinned = await system.remember("Never deploy on Fridays.", cue="deploying", pinned=True)
        await system.dream(max_blocks=20, no_llm=True)
        await system.connect(ids["new"], ids["old"], "supersedes")
        await system.connect(pinned.block_id, ids["disputed"], "contradicts")
        await system.outcome([ids["refuted"]], 0.0, weight=3)
        await system.outcome([ids["twice"]], 0.0, weight=2)  # may be two mistakes: recall keeps it
        await system.outcome([ids["contested"]], 1.0, weight=5)
        await system.outcome([ids["contested"]], 0.0, weight=5)
        await system.outcome([ids["doubted"]], 0.2, weight=2)
        await system.outcome([pinned.block_id], 0.0, weight=5)

        head = git(repo, "rev-parse", "HEAD")
        found = await system.review_corpus()
        assert git(repo, "rev-parse", "HEAD") == head and found.commit_id is None
        got = {p["block_id"]: p["action"] for p in found.proposals}
        assert got == {
            ids["old"]: "archive",
            ids["refuted"]: "archive",
            ids["twice"]: "recheck",
            ids["contested"]: "recheck",
            ids["disputed"]: "recheck",
            ids["doubted"]: "recheck",
        }  # never the pinned block, never the constitution, never the fine one
        reasons = {p["block_id"]: p["reason"] for p in found.proposals}
        assert reasons[ids["old"]] == f"superseded by {ids['new']}"
        assert reasons[ids["twice"]].startswith("low confidence")
        assert reasons[ids["contested"]] == "contested: confirmed 5 times, refuted 5 times"

        applied = await system.review_corpus(apply=True)
        assert applied.commit_id is not None
        assert git(repo, "rev-parse", "HEAD~1") == head  # one commit
        assert "Elfmem-Op: review-corpus" in git(repo, "log", "-1", "--format=%B")
        archived = {b.id for b in (await system.ls(status="archived")).blocks}
        assert archived == {ids["old"], ids["refuted"]}
        undone = await system.undo()
        assert undone.undone == applied.commit_id
        assert (await system.ls(status="archived")).blocks == []
        await system.close()

    arun(scenario())


def test_cli_review_corpus_on_a_fresh_memory_proposes_nothing(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["-C", str(repo), "init", "--seed"])
    assert result.exit_code == 0, result.stderr
    result = CliRunner().invoke(cli, ["-C", str(repo), "review", "corpus", "--apply"])
    assert result.exit_code == 0, result.stderr
    assert "0 to archive, 0 to re-check" in result.stdout
