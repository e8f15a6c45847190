"""The one secret check on every surface the second hostile round found open.

Host analyses bound for the notes ref, a batch and an MCP ``remember_many`` holding the shapes a
single remember refuses, commit subjects, error messages that echo a value, and refusals whose
recovery names an override the command does not have.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client

from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.errors import SecretRefused
from elfmem.mcp import build_server
from elfmem.store.notes import NOTES_REF
from tests.conftest import arun, git

TAIL = "Q7x9Lm2Pz4Kd8Rw1Ty6Vb3Nc5Hj0FgA2sD4fG6hJ8k"
GHP = "ghp_" + TAIL[:36]
PASSWORD = "Xq9!vR2/mTz8#LwK"
PG = f"postgres://app:{PASSWORD}@db.internal:5432/app"
BACKTICKS = f"the prod db password = `{PASSWORD}`"
BOLD = f"**api_key**: {TAIL[:20]}"


def cli_run(repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args])
    return result.exit_code, result.stdout, result.stderr


def history(repo: Path) -> str:
    """Every commit and note git holds, with their diffs."""
    return git(repo, "log", "--all", "-p", "--format=%H%n%B") + git(repo, "for-each-ref")


@pytest.fixture
def memory(repo: Path) -> Path:
    code, _, err = cli_run(repo, "init", "--name", "Ada")
    assert code == 0, err
    return repo


# ---- 4: host analyses are text bound for a note ---------------------------------------------


@pytest.mark.parametrize("summary", [f"deploys with {GHP}", f"the database is {PG}"])
def test_host_analyses_with_a_credential_write_nothing(
    memory: Path, tmp_path: Path, summary: str
) -> None:
    code, block_id, err = cli_run(memory, "remember", "Redis needs maxmemory set")
    assert code == 0, err
    analyses = tmp_path / "analyses.json"
    analyses.write_text(json.dumps({block_id.strip(): {"alignment": 0.8, "summary": summary}}))
    before = history(memory)
    code, out, err = cli_run(memory, "dream", "--host-analyses", str(analyses), "--json")
    assert code == 2, (out, err)
    assert "Refused: " in err and f"host analysis for {block_id.strip()} summary" in err
    assert GHP not in out + err and PASSWORD not in out + err
    assert "--allow-secret" not in err  # dream has no override
    assert history(memory) == before


def test_every_line_bound_for_the_notes_ref_meets_the_check(memory: Path) -> None:
    """A path that forgot its own check (a new rhythm, a judge) still meets it at the ledger."""
    system = arun(MemorySystem.from_config(memory))
    try:
        made = arun(system.remember("Redis needs maxmemory set"))
        notes = git(memory, "for-each-ref", NOTES_REF)
        line = json.dumps({"kind": "analysis", "summary": f"use {BACKTICKS}"})
        with pytest.raises(SecretRefused) as err:
            system._core.store.append_events({made.block_id: [line]}, "elfmem: analysis")
        assert PASSWORD not in err.value.message + err.value.recovery
        assert git(memory, "for-each-ref", NOTES_REF) == notes
    finally:
        arun(system.close())


def test_an_llm_summary_quoting_a_credential_is_recorded_with_the_kind_only(memory: Path) -> None:
    """An LLM judging a block stored on purpose may quote it; the run goes on, the note names it."""
    from elfmem.adapters.scripted import ScriptedLLM

    system = arun(MemorySystem.from_config(memory))
    try:
        system.llm = ScriptedLLM([])
        made = arun(system.remember(f"ci deploys with {GHP}", allow_secret=True))
        reply = {"alignment": 0.7, "tags": ["ci"], "summary": f"uses {GHP}", "revision_of": None}
        system.llm.enqueue(json.dumps(reply))  # type: ignore[union-attr]
        dreamt = arun(system.dream())
        assert dreamt.promoted == [made.block_id]
        assert GHP not in json.dumps(dreamt.to_dict(), default=str)
    finally:
        arun(system.close())
    notes = git(memory, "log", "-p", NOTES_REF)
    assert "uses [GitHub token]" in notes and GHP not in notes


# ---- 5: one check, whatever the path -----------------------------------------------------------


@pytest.mark.parametrize("content", [BACKTICKS, BOLD])
def test_batch_refuses_what_a_single_remember_refuses(
    memory: Path, tmp_path: Path, content: str
) -> None:
    before = history(memory)
    code, out, err = cli_run(memory, "remember", content)
    assert code == 2, (out, err)
    batch = tmp_path / "batch.jsonl"
    batch.write_text(json.dumps({"content": "fine"}) + "\n" + json.dumps({"content": content}))
    code, out, err = cli_run(memory, "remember", "--batch", str(batch))
    assert code == 2, (out, err)
    assert err.startswith("Error: ") and "line 2 (record 2): Refused: " in err
    assert history(memory) == before


@pytest.mark.parametrize("content", [BACKTICKS, BOLD])
def test_mcp_remember_many_refuses_them_too(memory: Path, content: str) -> None:
    head = git(memory, "rev-parse", "HEAD")

    async def scenario() -> dict[str, object]:
        async with Client(build_server(await MemorySystem.from_config(memory))) as client:
            result = await client.call_tool(
                "elfmem_remember_many", {"items": [{"content": "fine"}, {"content": content}]}
            )
            assert result.is_error
            body: dict[str, object] = json.loads(result.content[0].text)  # type: ignore[union-attr]
            return body

    body = arun(scenario())
    assert "Refused" in str(body["error"]) and PASSWORD not in json.dumps(body)
    assert git(memory, "rev-parse", "HEAD") == head  # the session's own notes may flush
    assert PASSWORD not in history(memory) and TAIL[:20] not in history(memory)


# ---- 6: a commit subject never repeats the value ---------------------------------------------


@pytest.mark.parametrize("content", [f"ci uses {GHP} to deploy", BACKTICKS, f"db: {PG}"])
def test_subjects_of_a_block_stored_with_the_override_never_hold_it(
    memory: Path, content: str
) -> None:
    code, out, err = cli_run(memory, "remember", "--allow-secret", "--json", content)
    assert code == 0, err
    block_id = json.loads(out)["block_id"]
    code, _, err = cli_run(memory, "edit", block_id, content + " (edited)", "--allow-secret")
    assert code == 0, err
    code, _, err = cli_run(memory, "forget", block_id)
    assert code == 0, err
    subjects = git(memory, "log", "--format=%s%n%b")
    assert GHP not in subjects and PASSWORD not in subjects, subjects


# ---- 7: an error never echoes a value the check refuses ---------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("remember", "a fact", "--when", GHP),
        ("init", "--template", GHP),
        ("show", GHP),
        ("remember", "a fact", "--when", f"password=`{PASSWORD}`"),
    ],
)
def test_errors_never_echo_the_value(memory: Path, args: tuple[str, ...]) -> None:
    for json_ in ((), ("--json",)):
        code, out, err = cli_run(memory, *args, *json_)
        assert code != 0
        assert "Error:" in err
        assert GHP not in out + err and PASSWORD not in out + err, (out, err)


def test_mcp_errors_never_echo_the_value(memory: Path) -> None:
    async def scenario() -> str:
        async with Client(build_server(await MemorySystem.from_config(memory))) as client:
            result = await client.call_tool("elfmem_remember", {"content": "x", "when": GHP})
            assert result.is_error
            return result.content[0].text  # type: ignore[union-attr]

    assert GHP not in arun(scenario())


# ---- 8: a refusal's recovery is one the command can follow ------------------------------------


def _refusal(repo: Path, *args: str) -> str:
    before = history(repo)
    code, out, err = cli_run(repo, *args)
    assert code == 2, (out, err)
    assert "Refused: " in err and GHP not in out + err
    assert history(repo) == before
    return err


@pytest.mark.parametrize(
    "args",
    [
        ("init", "--name", f"Ada {GHP}"),
        ("mind", "create", "bob", f"Bob deploys with {GHP}"),
        (
            "peer",
            "add",
            "alice",
            "--id",
            "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK",
            "--remote",
            f"https://ada:{GHP}@example.com/alice.git",
        ),
    ],  # fmt: skip
)
def test_commands_without_an_override_never_suggest_one(
    memory: Path, args: tuple[str, ...]
) -> None:
    err = _refusal(memory, *args)
    assert "--allow-secret" not in err and "allow_secret" not in err, err


def test_import_of_a_bundle_holding_a_credential_gives_a_recovery_it_can_follow(
    memory: Path, tmp_path: Path
) -> None:
    sender = tmp_path / "sender"
    sender.mkdir()
    git(sender, "init", "-q", "-b", "main")
    assert cli_run(sender, "init", "--name", "Bo")[0] == 0
    code, _, err = cli_run(sender, "remember", "--allow-secret", f"ci uses {GHP}")
    assert code == 0, err
    assert cli_run(sender, "dream", "--no-llm")[0] == 0
    bundle = tmp_path / "out.bundle"
    code, _, err = cli_run(sender, "export", "-o", str(bundle))
    assert code == 0, err
    err = _refusal(memory, "import", str(bundle), "--self-merge")
    assert "--allow-secret" not in err and "allow_secret" not in err, err
