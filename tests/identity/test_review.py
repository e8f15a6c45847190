"""Constitutional review: drift from declared relations, meaning and dream's judgement; writes
nothing; proposal text from an LLM, the host agent, or nobody."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.adapters.scripted import ScriptedLLM
from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.errors import InvalidInput
from tests.conftest import arun, git

SURPRISE = (
    "When something surprises me, explaining it away quickly is better than asking why; "
    "the learning is rarely there."
)


def refs(repo: Path) -> tuple[str, str]:
    notes = git(repo, "rev-parse", "--verify", "-q", "refs/notes/elfmem", check=False)
    return git(repo, "rev-parse", "HEAD"), notes


async def seeded(repo: Path) -> tuple[MemorySystem, dict[str, str]]:
    system, _ = await MemorySystem.init(repo, seed=True)
    roles = {
        t.removeprefix("self/role/"): b.id
        for b in (await system.ls(tag="self/constitutional")).blocks
        for t in b.tags
        if t.startswith("self/role/")
    }
    return system, roles


def status_of(review: object, block_id: str) -> dict[str, object]:
    return next(p for p in review.principles if p["id"] == block_id)  # type: ignore[attr-defined]


def test_declared_relations_and_revisions_decide_drift(repo: Path) -> None:
    async def scenario() -> None:
        system, roles = await seeded(repo)
        against = await system.remember("Rewrites beat patches for legacy code.", cue="rewrite?")
        newer = await system.remember("Legacy code: patch first, rewrite only past 3 failures.")
        backing = await system.remember("Linking related notes found the outage cause fast.")
        await system.dream(no_llm=True)
        await system.connect(against.block_id, roles["minimum-force"], "contradicts")
        await system.connect(backing.block_id, roles["connection"], "supports")
        before = refs(repo)
        review = await system.review_constitutional()
        assert refs(repo) == before  # review writes no commit and no ledger note
        mf = status_of(review, roles["minimum-force"])
        assert mf["status"] == "contradicted" and mf["contradicted_by"] == [against.block_id]
        link = status_of(review, roles["connection"])
        assert link["status"] == "holds" and backing.block_id in link["supported_by"]  # type: ignore[operator]
        assert {p["block_id"] for p in review.proposals if p["kind"] == "amend"} == {
            roles["minimum-force"]
        }
        await system.connect(newer.block_id, against.block_id, "supersedes")
        revised = await system.review_constitutional()
        assert status_of(revised, roles["minimum-force"])["contradicted_by"] == []
        await system.close()

    arun(scenario())


def test_a_bearing_block_dream_judged_out_of_line_counts_against(repo: Path) -> None:
    async def scenario() -> None:
        system, roles = await seeded(repo)
        made = await system.remember(SURPRISE, cue="meeting a surprising result")
        await system.dream(host_analyses={made.block_id: {"alignment": 0.1}})
        review = await system.review_constitutional(no_llm=True)
        curiosity = status_of(review, roles["curiosity"])
        assert made.block_id in [b["id"] for b in curiosity["bearing"]]  # type: ignore[union-attr]
        assert curiosity["status"] == "contradicted"
        assert curiosity["contradicted_by"] == [made.block_id]
        await system.close()

    arun(scenario())


def test_the_llm_writes_proposal_text_and_host_analyses_replace_it(repo: Path) -> None:
    async def scenario() -> None:
        system, roles = await seeded(repo)
        made = await system.remember("Rewrites beat patches for legacy code.", cue="rewrite?")
        await system.dream(no_llm=True)
        await system.connect(made.block_id, roles["minimum-force"], "contradicts")
        llm = ScriptedLLM(lambda system_text, prompt: "  Do less, unless less costs more.  ")
        system.llm = llm
        review = await system.review_constitutional()
        drifted = [p for p in review.principles if p["status"] != "holds"]
        assert len(llm.calls) == len(drifted) == len(review.proposals)
        assert review.tokens["calls"] == len(llm.calls)  # the scripted model counts calls only
        mf = next(p for p in review.proposals if p["block_id"] == roles["minimum-force"])
        assert mf["text"] == "Do less, unless less costs more." and mf["source"] == "scripted"
        prompt = next(p for _, p in llm.calls if "Do the least" in p)
        assert "Rewrites beat patches" in prompt
        hosted = await system.review_constitutional(
            host_analyses={roles["rhythm"]: {"text": "Capture now.", "reason": "it works"}}
        )
        assert len(llm.calls) == len(drifted)  # host analyses: no LLM call
        rhythm = next(p for p in hosted.proposals if p["block_id"] == roles["rhythm"])
        assert rhythm == {
            "id": rhythm["id"],
            "block_id": roles["rhythm"],
            "kind": "amend",
            "reason": "it works",
            "evidence": [],
            "text": "Capture now.",
            "source": "host",
        }
        with pytest.raises(InvalidInput, match="not an active constitutional"):
            await system.review_constitutional(host_analyses={made.block_id: {"text": "x"}})
        with pytest.raises(InvalidInput, match="no text"):
            await system.review_constitutional(host_analyses={roles["rhythm"]: {"reason": "x"}})
        await system.close()

    arun(scenario())


def test_cli_review_with_host_analyses_file_and_bad_json(repo: Path, tmp_path: Path) -> None:
    async def setup() -> str:
        system, roles = await seeded(repo)
        await system.close()
        return roles["rhythm"]

    rhythm = arun(setup())
    good = tmp_path / "host.json"
    good.write_text(json.dumps({rhythm: {"text": "Capture now, think later.", "reason": "r"}}))
    result = CliRunner().invoke(
        cli, ["-C", str(repo), "review", "--host-analyses", str(good), "--json"]
    )
    assert result.exit_code == 0, result.stderr
    proposals = json.loads(result.stdout)["proposals"]
    assert [p["text"] for p in proposals if p["block_id"] == rhythm] == [
        "Capture now, think later."
    ]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = CliRunner().invoke(cli, ["-C", str(repo), "review", "--host-analyses", str(bad)])
    assert result.exit_code != 0
    assert "Error: --host-analyses: not JSON" in result.stderr and "Recovery:" in result.stderr
