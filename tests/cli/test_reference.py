"""docs/cli.md is generated from the commands, and the JSON keys it documents are the real ones."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from elfmem.cli import cli
from elfmem.cli.jsonshape import Shape, shape_keys, to_dict_keys
from elfmem.cli.reference import REGENERATE, SHAPES, commands, render_reference
from elfmem.errors import ElfmemError
from elfmem.rhythms.results import ListResult, RememberResult

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def run(repo: Path, *args: str, input: str | None = None) -> str:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args, "--json"], input=input)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def documented(path: str) -> list[list[str]]:
    """The key tables under ``## elfmem PATH`` in docs/cli.md, one list of keys per shape."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split(f"\n## elfmem {path}\n", 1)[1].split("\n## ", 1)[0]
    tables = section.split("| Key | Type | Meaning |")[1:]
    return [re.findall(r"^\| `([^`]+)` \|", t.split("\n\n", 1)[0], re.MULTILINE) for t in tables]


def test_docs_cli_md_is_what_the_commands_render() -> None:
    assert DOCS.read_text(encoding="utf-8") == render_reference(cli), (
        f"docs/cli.md is out of date with the commands; regenerate it with `{REGENERATE}`"
    )


def test_every_visible_command_has_a_section_and_hidden_ones_do_not() -> None:
    text = render_reference(cli)
    paths = [path for path, _ in commands(cli)]
    assert {"init", "remember", "index rebuild", "hooks install", "serve"} <= set(paths)
    for path in paths:
        assert f"\n## elfmem {path}\n" in text
    for name, command in cli.commands.items():
        if command.hidden:
            assert f"## elfmem {name}\n" not in text
    with_json = {p for p, c in commands(cli) if any(x.name == "json_" for x in c.params)}
    assert with_json == set(SHAPES)


def test_a_json_command_without_a_declared_shape_fails_rendering() -> None:
    cli.load_all()
    group = click.Group("elfmem", commands=dict(cli.commands))

    @group.command()
    @click.option("--json", "json_", is_flag=True)
    def novel(json_: bool) -> None:
        """A command nobody declared."""

    with pytest.raises(ElfmemError, match="`elfmem novel` has --json but no entry") as info:
        render_reference(group)
    assert "elfmem/cli/reference.py" in info.value.recovery


def test_a_shape_for_a_command_that_is_gone_fails_rendering() -> None:
    cli.load_all()
    group = click.Group("elfmem", commands={n: c for n, c in cli.commands.items() if n != "ls"})
    with pytest.raises(ElfmemError, match="do not exist: ls"):
        render_reference(group)


def test_keys_come_from_to_dict_and_meanings_from_field_docstrings() -> None:
    assert to_dict_keys(ListResult) == ["blocks", "count", "summary"]
    keys = {k.name: k for k in shape_keys(Shape(RememberResult))}
    assert list(keys) == ["block_id", "status", "commit_id", "path", "summary"]
    assert keys["status"].meaning.startswith("`created` or `duplicate`")
    assert keys["commit_id"].type == "str | None"


def test_json_keys_of_real_commands_are_exactly_the_documented_ones(
    repo: Path, tmp_path: Path
) -> None:
    out = run(repo, "init", "--seed")
    assert list(json.loads(out)) == documented("init")[0]
    out = run(repo, "remember", "Shard by tenant past 500M rows", "--cue", "database scaling")
    created = json.loads(out)
    assert list(created) == documented("remember")[0]
    batch = "\n".join(json.dumps({"content": f"Batch fact {i}"}) for i in range(3))
    out = run(repo, "remember", "--batch", "-", input=batch)
    assert list(json.loads(out)) == documented("remember")[1]
    assert list(json.loads(run(repo, "ls"))) == documented("ls")[0]
    assert list(json.loads(run(repo, "show", created["block_id"]))) == documented("show")[0]
    assert list(json.loads(run(repo, "dream", "--no-llm", "--max", "10"))) == documented("dream")[0]
    assert list(json.loads(run(repo, "recall", "database scaling"))) == documented("recall")[0]
    assert list(json.loads(run(repo, "status"))) == documented("status")[0]
    entries = json.loads(run(repo, "log", "-n", "2"))
    assert len(entries) == 2 and all(list(e) == documented("log")[0] for e in entries)
    rebuilt = run(repo, "index", "rebuild", "--to", str(tmp_path / "copy.db"))
    assert list(json.loads(rebuilt)) == documented("index rebuild")[0]


def test_errors_with_json_have_the_documented_envelope(repo: Path) -> None:
    run(repo, "init")
    result = CliRunner().invoke(cli, ["-C", str(repo), "show", "0123456789abcdef", "--json"])
    assert result.exit_code != 0
    text = DOCS.read_text(encoding="utf-8").split("## Global options")[0]
    envelope = re.findall(r"^\| `([^`]+)` \|", text, re.MULTILINE)
    assert list(json.loads(result.stdout)) == envelope == ["error", "recovery", "type"]


def test_cli_docs_command_writes_the_same_text(tmp_path: Path) -> None:
    target = tmp_path / "cli.md"
    result = CliRunner().invoke(cli, ["cli-docs", "-o", str(target)])
    assert result.exit_code == 0, result.stderr
    assert target.read_text(encoding="utf-8") == render_reference(cli)
    assert "cli-docs" not in CliRunner().invoke(cli, ["--help"]).stdout


def test_a_commands_result_class_is_read_from_the_api_calls_signature() -> None:
    from elfmem.api import MemorySystem
    from elfmem.cli.jsonshape import returned
    from elfmem.identity.setup import InitResult
    from elfmem.rhythms.lookalikes import LookalikesResult
    from elfmem.sharing.results import PeerChange, PeerInfo

    assert returned(MemorySystem.init) == (InitResult,)  # a classmethod; tuple[MemorySystem, ...]
    assert returned(MemorySystem.lookalikes) == (LookalikesResult,)  # `lookalikes_mod.X`
    assert returned(MemorySystem.peer_trust) == (PeerChange, PeerInfo)  # `X | Y`, in order
    assert returned(MemorySystem.history) == ()  # list[dict[str, Any]]: no result class
