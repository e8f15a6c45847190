"""Hostile input a careless or buggy caller sends: every one is a named error with its exit code,
and nothing is written.

Batch records with fields of the wrong type, ``top_k`` below one, an undo of a commit that does
not exist, a doctor asked for advice in the middle of a conflicted rebase, blocks whose tags
alone are larger than a bucket, and a block id in two files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client

from elfmem.api import MemorySystem
from elfmem.block.layout import BUCKET_BYTES
from elfmem.cli import cli
from elfmem.errors import InvalidInput
from elfmem.mcp import build_server
from tests.conftest import arun, git


@pytest.fixture
def memory(repo: Path) -> Path:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    return repo


def invoke(repo: Path, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


BAD_FIELDS = [
    ({"content": "Pools hold 20 connections", "tags": 5}, "tags"),
    ({"content": "Pools hold 20 connections", "tags": ["ops", 5]}, "tags"),
    ({"content": "Pools hold 20 connections", "pinned": "false"}, "pinned"),
    ({"content": "Pools hold 20 connections", "cue": {"when": "sizing pools"}}, "cue"),
    ({"content": "Pools hold 20 connections", "category": ["knowledge"]}, "category"),
    ({"content": "Pools hold 20 connections", "when": 2023}, "when"),
]


@pytest.mark.parametrize(("record", "field"), BAD_FIELDS)
def test_a_batch_record_with_a_field_of_the_wrong_type_is_refused_by_line_and_field(
    memory: Path, record: dict[str, object], field: str
) -> None:
    before = git(memory, "rev-parse", "HEAD")
    good = json.dumps({"content": "Deploys freeze on Fridays", "cue": "planning a release"})
    batch = memory / "batch.jsonl"
    batch.write_text(f"{good}\n\n{json.dumps(record)}\n")
    code, _, err = invoke(memory, "remember", "--batch", str(batch))
    assert code == 2, err
    assert err.startswith("Error: ") and "\nRecovery: " in err
    assert "line 3" in err and f"`{field}`" in err, err
    assert git(memory, "rev-parse", "HEAD") == before


@pytest.mark.parametrize(("record", "field"), BAD_FIELDS)
def test_the_api_refuses_a_record_of_the_wrong_type_naming_record_and_field(
    memory: Path, record: dict[str, object], field: str
) -> None:
    async def go() -> None:
        system = await MemorySystem.from_config(memory)
        try:
            with pytest.raises(InvalidInput) as refused:
                await system.remember_many([{"content": "Deploys freeze on Fridays"}, record])
            assert "Record 2" in refused.value.message and f"`{field}`" in refused.value.message
            assert refused.value.recovery
        finally:
            await system.close()

    arun(go())


def test_mcp_remember_many_refuses_a_field_of_the_wrong_type(memory: Path) -> None:
    async def go() -> None:
        async with Client(build_server(await MemorySystem.from_config(memory))) as client:
            for record, _ in BAD_FIELDS:
                result = await client.call_tool("elfmem_remember_many", {"items": [record]})
                assert result.is_error, record
            listed = await client.call_tool("elfmem_ls", {})
            assert listed.structured_content is not None
            assert listed.structured_content["blocks"] == []

    arun(go())


def test_a_string_of_tags_still_splits(memory: Path) -> None:
    batch = memory / "batch.jsonl"
    batch.write_text(json.dumps({"content": "Pools hold 20", "tags": "db/pool, ops"}) + "\n")
    code, _, err = invoke(memory, "remember", "--batch", str(batch))
    assert code == 0, err
    code, out, _ = invoke(memory, "ls", "--json")
    assert json.loads(out)["blocks"][0]["tags"] == ["db/pool", "ops"]


def test_undo_of_a_commit_that_does_not_exist_is_not_found(memory: Path) -> None:
    code, _, err = invoke(memory, "undo", "feedfacefeedfacefeedface")
    assert code == 3, err
    assert "names no commit" in err and "\nRecovery: " in err


@pytest.mark.parametrize("top_k", ["0", "-1"])
def test_recall_refuses_top_k_below_one(memory: Path, top_k: str) -> None:
    invoke(memory, "remember", "Deploys freeze on Fridays", "--cue", "planning a release")
    code, _, err = invoke(memory, "recall", "deploys", "--top-k", top_k)
    assert code == 2, err
    assert "top-k" in err.lower() or "top_k" in err
    code, _, err = invoke(memory, "frame", "attention", "deploys", "--top-k", top_k)
    assert code == 2, err


def test_the_api_and_mcp_refuse_top_k_below_one(memory: Path) -> None:
    async def go() -> None:
        system = await MemorySystem.from_config(memory)
        try:
            for bad in (0, -1):
                with pytest.raises(InvalidInput):
                    await system.recall("deploys", top_k=bad)
                with pytest.raises(InvalidInput):
                    await system.frame("attention", "deploys", top_k=bad)
        finally:
            await system.close()
        async with Client(build_server(await MemorySystem.from_config(memory))) as client:
            result = await client.call_tool("elfmem_recall", {"query": "deploys", "top_k": 0})
            assert result.is_error
            body = json.loads(result.content[0].text)  # type: ignore[union-attr]
            assert body["type"] == "InvalidInput" and body["recovery"]

    arun(go())


def test_doctor_in_a_conflicted_rebase_advises_continue_or_abort(memory: Path) -> None:
    git(memory, "switch", "-q", "-c", "side")
    (memory / "README.md").write_text("# side\n")
    git(memory, "commit", "-qam", "side")
    git(memory, "switch", "-q", "main")
    (memory / "README.md").write_text("# main\n")
    git(memory, "commit", "-qam", "main")
    git(memory, "switch", "-q", "side")
    git(memory, "rebase", "main", check=False)
    assert any((memory / ".git" / d).exists() for d in ("rebase-merge", "rebase-apply"))
    code, out, err = invoke(memory, "doctor", "--json")
    [check] = [c for c in json.loads(out)["checks"] if c["name"] == "repository"]
    assert not check["ok"]
    assert "rebase" in check["detail"]
    assert "git rebase --continue" in check["fix"] and "git rebase --abort" in check["fix"]
    assert "git switch" not in check["fix"]


def test_tags_count_toward_the_bucket_byte_bound(memory: Path) -> None:
    tags = [f"t/{n:05d}" for n in range(12_000)]  # about 100 KB of tags per block

    async def go() -> None:
        system = await MemorySystem.from_config(memory)
        try:
            await system.remember_many(
                [{"content": f"Fact {i} about pools", "tags": tags} for i in range(4)]
            )
        finally:
            await system.close()

    arun(go())
    inbox = list((memory / ".elfmem" / "memory" / "log").rglob("*.md"))
    assert sum(b.read_text().count("<!-- id: ") for b in inbox) == 4
    for bucket in inbox:
        held = bucket.read_text().count("<!-- id: ")
        assert held == 1 or bucket.stat().st_size <= BUCKET_BYTES, (bucket, held)


def test_the_duplicate_id_warning_cites_the_line_of_the_copy(memory: Path) -> None:
    notes = memory / ".elfmem" / "memory" / "notes" / "knowledge"
    notes.mkdir(parents=True, exist_ok=True)
    head = "## one\n<!-- id: 00000000000000c1  cls: knowledge  tags: [] -->\n\none\n\n"
    (notes / "2026-01.md").write_text(
        head + "## pools\n<!-- id: 00000000000000aa  cls: knowledge  tags: [] -->\n\n20\n"
    )
    (notes / "2026-02.md").write_text(
        "## two\n<!-- id: 00000000000000c2  cls: knowledge  tags: [] -->\n\ntwo\n\n"
        "## three\n<!-- id: 00000000000000c3  cls: knowledge  tags: [] -->\n\nthree\n\n"
        "## pools\n<!-- id: 00000000000000aa  cls: knowledge  tags: [] -->\n\n40\n"
    )
    git(memory, "add", "-A")
    git(memory, "commit", "-qm", "two files, one id")

    async def go() -> list[str]:
        system = await MemorySystem.from_config(memory)
        try:
            await system.ls()
            return system.take_warnings()
        finally:
            await system.close()

    warnings = [w for w in arun(go()) if "00000000000000aa" in w]
    assert warnings, "the duplicate id is warned about"
    for warning in warnings:
        assert ":0:" not in warning, warning
        assert ".elfmem/memory/notes/knowledge/2026-02.md:11:" in warning, warning  # its heading
