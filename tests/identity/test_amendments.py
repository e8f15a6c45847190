"""Review → accept → list → revert: one commit per changing step, through the CLI and MCP."""

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

AMENDED = "Do the least that fully solves the problem, unless patching costs more than replacing."


def cli_json(repo: Path, *args: str, input: str | None = None) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args, "--json"], input=input)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


def commits(repo: Path) -> int:
    return int(git(repo, "rev-list", "--count", "HEAD"))


def principle(repo: Path, role: str) -> dict[str, str]:
    blocks = cli_json(repo, "ls", "--tag", f"self/role/{role}")["blocks"]
    assert isinstance(blocks, list) and len(blocks) == 1
    return dict(blocks[0])


@pytest.fixture
def drifted(repo: Path) -> Path:
    """A seeded memory where one active block declares it contradicts minimum-force."""

    async def build() -> None:
        system, _ = await MemorySystem.init(repo, seed=True)
        target = (await system.ls(tag="self/role/minimum-force")).blocks[0].id
        made = await system.remember(
            "Patching the legacy auth module eleven times cost more than replacing it would have.",
            cue="choosing between patching and replacing a module",
        )
        await system.dream(no_llm=True)
        await system.connect(made.block_id, target, "contradicts")
        await system.close()

    arun(build())
    return repo


def test_round_trip_through_the_cli_one_commit_per_step(drifted: Path, tmp_path: Path) -> None:
    target = principle(drifted, "minimum-force")
    start = commits(drifted)
    review = cli_json(drifted, "review")
    assert commits(drifted) == start  # review changes nothing
    status = {p["id"]: p["status"] for p in review["principles"]}  # type: ignore[union-attr]
    assert status[target["id"]] == "contradicted"
    proposal = next(p for p in review["proposals"] if p["block_id"] == target["id"])  # type: ignore[union-attr]
    assert proposal["kind"] == "amend" and proposal["text"] == ""  # no LLM: text left to you

    amendment = tmp_path / "amendment.md"
    amendment.write_text(AMENDED + "\n")
    accepted = cli_json(
        drifted, "review", "accept", "--content-file", str(amendment), "--proposal", proposal["id"]
    )
    assert commits(drifted) == start + 1
    message = git(drifted, "log", "-1", "--format=%B")
    assert "Elfmem-Op: amend" in message and f"Elfmem-Proposal: {proposal['id']}" in message
    assert f"Elfmem-Block: {target['id']}" in message
    assert principle(drifted, "minimum-force")["content"] == AMENDED
    assert principle(drifted, "minimum-force")["id"] == target["id"]

    listed = cli_json(drifted, "review", "list")
    assert commits(drifted) == start + 1
    entries = listed["entries"]
    assert isinstance(entries, list)
    assert [(e["kind"], e["commit_id"]) for e in entries] == [("amend", accepted["commit_id"])]

    reverted = cli_json(drifted, "review", "revert")
    assert commits(drifted) == start + 2
    assert reverted["undone"] == accepted["commit_id"]
    assert principle(drifted, "minimum-force")["content"] == target["content"]
    kinds = [(e["kind"], e["reverted_by"]) for e in cli_json(drifted, "review", "list")["entries"]]  # type: ignore[union-attr]
    assert kinds == [("revert", None), ("amend", reverted["commit_id"])]
    log = git(drifted, "log", "--format=%s", f"-{2}").splitlines()
    assert log[0].startswith('Revert "amend:') and log[1].startswith("amend:")
    result = CliRunner().invoke(cli, ["-C", str(drifted), "review", "revert"])
    assert result.exit_code != 0 and "Recovery:" in result.stderr  # nothing left standing


def test_round_trip_through_the_mcp_server(drifted: Path) -> None:
    target = principle(drifted, "minimum-force")
    start = commits(drifted)

    async def scenario() -> None:
        async with Client(build_server(await MemorySystem.from_config(drifted))) as client:
            hosted = {target["id"]: {"text": AMENDED, "reason": "patching cost more"}}
            review = await ok(client, "elfmem_review_constitutional", host_analyses=hosted)
            mine = next(p for p in review["proposals"] if p["block_id"] == target["id"])
            assert (mine["text"], mine["source"]) == (AMENDED, "host")
            assert commits(drifted) == start
            await ok(client, "elfmem_accept_amendment", content=mine["text"], proposal=mine["id"])
            assert commits(drifted) == start + 1
            history = await ok(client, "elfmem_list_amendments")
            assert [e["kind"] for e in history["entries"]] == ["amend"]
            assert commits(drifted) == start + 1
            await ok(client, "elfmem_revert_amendment")
            assert commits(drifted) == start + 2
            await fails(client, "elfmem_accept_amendment", content=AMENDED, block_id="0" * 16)

    arun(scenario())
    assert principle(drifted, "minimum-force")["content"] == target["content"]


def test_a_stale_proposal_or_a_non_constitutional_block_is_refused(drifted: Path) -> None:
    async def scenario() -> None:
        system = await MemorySystem.from_config(drifted)
        review = await system.review_constitutional()
        target = review.proposals[0]["block_id"]
        pid = review.proposals[0]["id"]
        await system.accept_amendment("A first amendment of this principle.", proposal=pid)
        head = git(drifted, "rev-parse", "HEAD")
        with pytest.raises(InvalidInput, match="earlier text"):
            await system.accept_amendment("A second, from the stale proposal.", proposal=pid)
        knowledge = (await system.ls(category="knowledge")).blocks[0].id
        with pytest.raises(BlockNotFound, match="not an active self/constitutional"):
            await system.accept_amendment("Not a principle.", block_id=knowledge)
        with pytest.raises(InvalidInput, match="not"):
            await system.accept_amendment("Mismatch.", block_id=knowledge, proposal=pid)
        assert git(drifted, "rev-parse", "HEAD") == head  # nothing written
        assert (await system.show(target)).content == "A first amendment of this principle."
        await system.close()

    arun(scenario())


def test_a_person_editing_self_md_shows_in_the_history(drifted: Path) -> None:
    self_md = drifted / ".elfmem/memory/self.md"
    self_md.write_text(self_md.read_text() + "- Prefer boring technology.\n")
    git(drifted, "commit", "-qam", "Pat adds a principle to self.md")
    entries = cli_json(drifted, "review", "list")["entries"]
    assert isinstance(entries, list)
    assert [(e["kind"], e["author"]) for e in entries] == [("self.md", "Pat Person")]
    text = CliRunner().invoke(cli, ["-C", str(drifted), "review"]).stdout
    assert "self.md" in text and "nothing changed" in text


def test_task_outcomes_change_neither_the_constitution_nor_the_review(drifted: Path) -> None:
    async def scenario() -> None:
        system = await MemorySystem.from_config(drifted)
        await system.remember(
            "When something surprises me, explaining it away quickly beats asking why.",
            cue="a surprising result",
        )  # bears on the curiosity principle, so the outcomes below reach a block it weighs
        await system.dream(no_llm=True)
        before = await system.review_constitutional()
        assert any(p["bearing"] for p in before.principles)
        principles = await system.ls(tag="self/constitutional")
        knowledge = [b.id for b in (await system.ls(category="knowledge")).blocks]
        await system.outcome([b.id for b in principles.blocks], 0.0, weight=5)  # skipped
        await system.outcome(knowledge, 0.0, weight=5)
        await system.outcome(knowledge[:1], 1.0, weight=5, source="task")
        after = await system.review_constitutional()
        assert after.principles == before.principles and after.proposals == before.proposals
        assert (await system.ls(tag="self/constitutional")).blocks == principles.blocks
        assert git(drifted, "log", "-1", "--format=%s").startswith("dream")  # no commit since
        await system.close()

    arun(scenario())


def test_accept_reads_stdin_and_refuses_empty_text(drifted: Path) -> None:
    target = principle(drifted, "rhythm")
    start = commits(drifted)
    result = CliRunner().invoke(
        cli, ["-C", str(drifted), "review", "accept", "--block", target["id"]], input=""
    )
    assert result.exit_code != 0 and "Error: Content is empty" in result.stderr
    assert commits(drifted) == start
    done = cli_json(
        drifted, "review", "accept", "--block", target["id"], input="Capture first, think later.\n"
    )
    assert done["proposal"] == "none" and commits(drifted) == start + 1
    assert principle(drifted, "rhythm")["content"] == "Capture first, think later."
