"""The writer says it is correcting: ``supersedes`` on remember, remember_many and batches, the
link in the block's own commit, ``undo`` taking both away; and a correction that outcomes refute
giving the block it tried to replace its place back. Real repositories, the real embedded
model, the real ledger."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.clock import SimulatedClock
from elfmem.errors import BlockNotFound, InvalidInput
from tests.conftest import arun, git

OPS = [
    "The API rate limit is 100 req/min per key",
    "Deploys are allowed on Friday afternoons",
    "The on-call rotation changes every Monday",
    "Grafana dashboards live in the ops folder",
    "Postgres backups run nightly at 02:00 UTC",
    "API keys are rotated every 90 days",
]
RATE_OLD = OPS[0]
RATE_WRONG = "The API rate limit is 10 req/min per key"
RATE_QUESTION = "what is the API rate limit"
RATE_OTHER_WORDS = "Each key may send at most ten API requests per minute"
"""A wrong correction in other words: dream links no look-alike, so only the declared link."""


def _memory(repo: Path, clock: SimulatedClock | None = None) -> tuple[MemorySystem, dict[str, str]]:
    system, _ = arun(MemorySystem.init(repo, name="Ada", clock=clock))
    created = arun(system.remember_many([{"content": c} for c in OPS])).created
    arun(system.dream())
    return system, dict(zip(OPS, created, strict=True))


def _ids(system: MemorySystem, top_k: int = 5) -> list[str]:
    result = arun(system.recall(RATE_QUESTION, top_k=top_k, reinforce=False))
    return [b.id for b in result.blocks]


def _head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def test_remember_supersedes_writes_the_link_in_the_block_commit_and_ranks_first(
    repo: Path,
) -> None:
    system, ids = _memory(repo)
    old = ids[RATE_OLD]
    new = arun(system.remember(RATE_WRONG, cue="api limits", supersedes=old[:6]))
    shown = git(repo, "show", "--format=%s", new.commit_id or "")
    assert shown.startswith("remember: ") and f"supersedes:: [[{old}]]" in shown
    assert ["supersedes", old] in arun(system.show(new.block_id)).relations
    result = arun(system.recall(RATE_QUESTION, top_k=5, reinforce=False))
    order = [b.id for b in result.blocks]
    assert order.index(new.block_id) < order.index(old)
    assert result.blocks[order.index(old)].note == f"superseded by [{new.block_id}]"

    undone = arun(system.undo())  # the block and its link go; the older block stands alone
    assert undone.undone == new.commit_id
    assert new.block_id not in git(repo, "show", "HEAD:.elfmem/memory/log/knowledge/", check=False)
    assert new.block_id not in _ids(system, top_k=10)
    result = arun(system.recall(RATE_QUESTION, top_k=5, reinforce=False))
    assert result.blocks[0].id == old and result.blocks[0].note == ""
    arun(system.close())


def test_remember_many_and_a_batch_take_supersedes_per_record(repo: Path) -> None:
    system, ids = _memory(repo)
    old, friday = ids[RATE_OLD], ids[OPS[1]]
    res = arun(
        system.remember_many(
            [
                {"content": RATE_WRONG, "supersedes": old},
                {
                    "content": "Deploys are never allowed on Friday afternoons",
                    "supersedes": [friday],
                },
                {"content": "Lunch is at noon"},
            ]
        )
    )
    assert len(res.created) == 3
    files = git(repo, "show", "--format=", res.commit_id or "")
    assert f"supersedes:: [[{old}]]" in files and f"supersedes:: [[{friday}]]" in files
    with pytest.raises(InvalidInput, match="Record 1: .*field `supersedes`"):
        arun(system.remember_many([{"content": "x", "supersedes": 7}]))
    arun(system.close())


def test_a_bad_supersedes_is_refused_and_writes_nothing(repo: Path) -> None:
    system, ids = _memory(repo)
    old = ids[RATE_OLD]
    before = _head(repo)
    with pytest.raises(BlockNotFound, match="nothing was written") as unknown:
        arun(system.remember(RATE_WRONG, supersedes="0123456789abcdef"))
    assert unknown.value.recovery
    with pytest.raises(BlockNotFound):
        arun(system.remember(RATE_WRONG, supersedes="not an id"))
    with pytest.raises(InvalidInput, match="tie is never a revision"):
        arun(system.remember(RATE_OLD + ".", supersedes=old))  # the same text: a duplicate of it
    other = ids[OPS[2]]
    with pytest.raises(InvalidInput, match="does not supersede"):
        arun(system.remember(OPS[2], supersedes=old))  # repeats another block: the link is lost
    with pytest.raises(BlockNotFound, match="Record 2: No block has id '0123456789abcdef'"):
        arun(
            system.remember_many(
                [{"content": "fine"}, {"content": RATE_WRONG, "supersedes": "0123456789abcdef"}]
            )
        )
    with pytest.raises(InvalidInput, match="Record 2: .*earlier record of the batch"):
        arun(
            system.remember_many(
                [{"content": RATE_WRONG}, {"content": RATE_WRONG, "supersedes": old}]
            )
        )
    assert _head(repo) == before
    arun(system.forget(other))
    archived = _head(repo)
    with pytest.raises(InvalidInput, match="archived"):
        arun(system.remember(RATE_WRONG, supersedes=other))
    assert _head(repo) == archived
    arun(system.close())


def test_the_cli_takes_supersedes_and_undo_restores_the_older_block(repo: Path) -> None:
    system, ids = _memory(repo)
    arun(system.close())
    old = ids[RATE_OLD]
    run = CliRunner()
    made = run.invoke(cli, ["-C", str(repo), "remember", RATE_WRONG, "--supersedes", old[:8]])
    assert made.exit_code == 0, made.output
    new = made.stdout.strip()
    assert f"supersedes:: [[{old}]]" in git(repo, "show", "HEAD")
    shown = run.invoke(cli, ["-C", str(repo), "recall", RATE_QUESTION, "--json"])
    order = [b["id"] for b in json.loads(shown.stdout)["blocks"]]
    assert order.index(new) < order.index(old)
    bad = run.invoke(
        cli, ["-C", str(repo), "remember", "x y z", "--supersedes", "ffffffffffffffff"]
    )
    assert bad.exit_code != 0 and "Error:" in bad.stderr and "Recovery:" in bad.stderr
    assert run.invoke(cli, ["-C", str(repo), "undo"]).exit_code == 0
    shown = run.invoke(cli, ["-C", str(repo), "recall", RATE_QUESTION, "--json"])
    blocks = json.loads(shown.stdout)["blocks"]
    assert blocks[0]["id"] == old and new not in [b["id"] for b in blocks]


@pytest.mark.parametrize("how", ["remember", "connect"])
def test_a_wrong_declared_correction_refuted_three_times_gives_the_top_place_back(
    repo: Path, how: str
) -> None:
    """The right block was confirmed three times and drew one mistaken 0.0 before the wrong
    correction came; then the correction draws 0.0 each round, and the right block two more
    mistaken 0.0s among its outcomes. By the third negative the correction is below it, and
    within two more rounds the right block is first, unmarked. (When the claim took its earlier
    confirmations for good, three mistaken 0.0s in all put it in the refuted tier for good.)"""
    clock = SimulatedClock(1767603600.0)
    system, ids = _memory(repo, clock)
    old = ids[RATE_OLD]
    for signal in (1.0, 0.0, 1.0, 1.0):
        clock.advance(60.0)
        arun(system.outcome([old], signal))
    clock.advance(60.0)
    if how == "remember":
        wrong = arun(system.remember(RATE_OTHER_WORDS, supersedes=old)).block_id
    else:
        wrong = arun(system.remember(RATE_OTHER_WORDS)).block_id
    arun(system.dream())
    if how == "connect":
        arun(system.connect(wrong, old, "supersedes"))
    assert _ids(system).index(wrong) < _ids(system).index(old)  # a fresh correction wins first
    fell_at = None
    for n, mistaken in enumerate([True, False, True, False, False], 1):
        clock.advance(3600.0)
        arun(system.outcome([wrong], 0.0))
        arun(system.outcome([old], 0.0 if mistaken else 1.0))
        order = _ids(system)
        if fell_at is None and (wrong not in order or order.index(old) < order.index(wrong)):
            fell_at = n
        if n >= 3:
            assert fell_at is not None and fell_at <= 3
        if n >= 5:
            assert order[0] == old
    result = arun(system.recall(RATE_QUESTION, top_k=5, reinforce=False))
    assert result.blocks[0].id == old and result.blocks[0].note == ""
    arun(system.close())


def test_curate_brings_back_a_block_a_refuted_correction_archived(repo: Path) -> None:
    """Dream's judgement archived the older block as superseded; once outcomes refute the
    correction, curate moves it back to the active notes in one commit that undo reverts."""
    from elfmem.adapters.scripted import ScriptedLLM

    system, _ = arun(MemorySystem.init(repo))
    system.llm = ScriptedLLM([])
    old = arun(system.remember(RATE_OLD, cue="api limits")).block_id
    system.llm.enqueue('{"alignment": 0.7, "tags": [], "summary": "", "revision_of": null}')  # type: ignore[union-attr]
    arun(system.dream())
    wrong = arun(system.remember(RATE_WRONG, cue="api limits")).block_id
    system.llm.enqueue(  # type: ignore[union-attr]
        f'{{"alignment": 0.7, "tags": [], "summary": "", "revision_of": "{old}"}}'
    )
    arun(system.dream())
    assert arun(system.show(old)).status == "archived"
    nothing = arun(system.curate())
    assert nothing.restored == []  # the correction holds: nothing comes back
    for _ in range(3):
        arun(system.outcome([wrong], 0.0))
    result = arun(system.curate())
    assert [r["id"] for r in result.restored] == [old]
    assert {a["id"] for a in result.archived} == {wrong}  # refuted: archived in the same commit
    assert arun(system.show(old)).status == "active"
    assert "superseded-by" not in arun(system.show(old)).extra
    assert _ids(system)[0] == old
    arun(system.undo())
    assert arun(system.show(old)).status == "archived"
    arun(system.close())


def test_confirmations_after_a_declared_correction_count_for_the_older_block(
    repo: Path,
) -> None:
    """A declared claim starts when its block was captured: confirmations the older block
    draws after that are evidence against the correction; those from before, and from the
    same second (``created`` is cut to the second), are not."""
    clock = SimulatedClock(1767603600.5)
    system, ids = _memory(repo, clock)
    old = ids[RATE_OLD]
    for _ in range(3):
        arun(system.outcome([old], 1.0))  # before the claim: they stop counting
    wrong = arun(system.remember(RATE_OTHER_WORDS, supersedes=old)).block_id
    arun(system.dream())
    order = _ids(system)
    assert order.index(wrong) < order.index(old)
    clock.advance(2.0)
    arun(system.outcome([old], 1.0))  # since the claim: the older block is right after all
    order = _ids(system)
    assert order.index(old) < order.index(wrong)
    arun(system.close())
