"""NUL, ESC and U+009B never reach a memory file; other control characters are text.

A NUL in a cue made the whole bucket binary to git; ESC and the one-byte CSI start terminal escape
sequences. Every field is refused with its name and the character's code point: in the block
model (what any write renders), through the API and the CLI, and ``init --self``. A file that
holds one anyway (typed by hand) is reported at its line and its other blocks are still served.
Vertical tabs, form feeds and C1 controls (real text holds them) are stored as they came.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.api import MemorySystem
from elfmem.block import Block, Relation, render_file
from elfmem.block.parse import parse_partial
from elfmem.cli import cli
from elfmem.errors import InvalidInput
from tests.conftest import arun, git

GOOD = Block("00000000000000c1", "ordinary text\twith a tab\r\nand CRLF", cue="a cue")


@pytest.mark.parametrize(
    ("change", "field", "char"),
    [
        ({"content": "text with a NUL \x00 inside"}, "content", "U+0000"),
        ({"cue": "when \x00 paging"}, "cue", "U+0000"),
        ({"cue": "csi \x9b2J"}, "cue", "U+009B"),
        ({"content": "escape \x1b[31m red"}, "content", "U+001B"),
        ({"content": "csi \x9b31m red"}, "content", "U+009B"),
        ({"tags": ("ok", "bad\x1b")}, "tag", "U+001B"),
        ({"cls": "know\x00ledge"}, "category", "U+0000"),
        ({"relations": (Relation("supports", "00000000000000c2\x00"),)}, "supports target", ""),
        ({"fields": (("owner", "bob\x1b"),)}, "field 'owner'", "U+001B"),
        ({"extra": (("source", "x\x9b"),)}, "field 'source'", "U+009B"),
    ],
)
def test_every_field_refuses_control_characters(
    change: dict[str, object], field: str, char: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        render_file([GOOD.with_changes(**change)])
    assert refused.value.message.startswith(f"{field} holds control character {char}")
    assert "NUL, ESC and U+009B are never stored" in refused.value.message


@pytest.mark.parametrize("char", ["\x07", "\x0b", "\x0c", "\x7f", "\x85", "\x93", "\x1f"])
def test_other_control_characters_are_text_that_round_trips(char: str) -> None:
    block = GOOD.with_changes(content=f"a {char} b", cue=f"cue {char} end")
    [parsed] = parse_partial(render_file([block])).blocks
    assert parsed.content == f"a {char} b" and parsed.cue == f"cue {char} end"


def test_tab_cr_and_lf_are_text() -> None:
    [block] = parse_partial(render_file([GOOD])).blocks
    assert block.content == "ordinary text\twith a tab\nand CRLF"


def test_a_hand_typed_control_character_is_reported_at_its_line() -> None:
    text = render_file([GOOD, Block("00000000000000c2", "second")]).replace(
        "\n\nordinary text", "\n\nordinary \x00text"
    )
    parsed = parse_partial(text, "notes/knowledge/2026-04.md")
    assert [b.id for b in parsed.blocks] == ["00000000000000c2"]
    problem = parsed.problems[0]
    assert problem.line == 5 and "control character U+0000" in problem.message
    assert "block 00000000000000c1 is not served: line 5" in parsed.problems[1].message


def test_the_api_refuses_before_anything_is_committed(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    head = git(repo, "rev-parse", "HEAD")
    cases = [
        ({"content": "a\x00b"}, "content holds control character U+0000"),
        ({"content": "pooling", "cue": "when\x00paging"}, "cue holds control character U+0000"),
        ({"content": "pooling", "tags": ["db\x1b"]}, "tag holds control character U+001B"),
        ({"content": "pooling", "category": "ops\x00"}, "category holds control character U+0000"),
    ]
    try:
        for kwargs, message in cases:
            with pytest.raises(InvalidInput) as refused:
                arun(system.remember(**kwargs))  # type: ignore[arg-type]
            assert refused.value.message.startswith(message)
        block_id = arun(system.remember("pooling needs pgbouncer")).block_id
        head = git(repo, "rev-parse", "HEAD")
        with pytest.raises(InvalidInput, match="cue holds control character U"):
            arun(system.edit(block_id, cue="bad\x00cue"))
        with pytest.raises(InvalidInput, match="content holds control character U"):
            arun(system.edit(block_id, content="bad\x1bcontent"))
    finally:
        arun(system.close())
    assert git(repo, "rev-parse", "HEAD") == head


def test_init_refuses_a_self_text_with_control_characters(repo: Path) -> None:
    with pytest.raises(InvalidInput, match="self text holds control character U\\+0000"):
        arun(MemorySystem.init(repo, self_text="Be kind.\x00"))
    assert git(repo, "log", "--oneline").count("\n") == 1


def test_the_cli_refuses_with_error_and_recovery(repo: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["-C", str(repo), "init"]).exit_code == 0
    result = runner.invoke(cli, ["-C", str(repo), "remember", "pooling", "--cue", "a\x00b"])
    assert result.exit_code == 2
    assert "Error: cue holds control character U+0000 at position 2" in result.stderr
    assert "Recovery: Remove the character from the cue" in result.stderr
    result = runner.invoke(cli, ["-C", str(repo), "remember", "pooling", "-t", "x\x1b", "--json"])
    assert result.exit_code == 2 and '"tag holds control character U+001B' in result.stdout
