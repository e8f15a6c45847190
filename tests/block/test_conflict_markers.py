"""The reader's rule for damaged files: serve what parses, report the rest with file:line.

Conflict regions need all three markers in order; a region that starts at a block boundary ends the
block before it, one that starts inside a block takes that block with it. Body lines that look like
markers round-trip (see also the property tests).
"""

from __future__ import annotations

import pytest

from elfmem.block import Block, parse_file, render_file
from elfmem.block.parse import parse_partial
from elfmem.errors import BlockFormatError

PATH = ".elfmem/memory/notes/knowledge/2026-04.md"


def _block(n: int, body: str | None = None) -> str:
    text = body or f"body {n}"
    return f"## {text}\n<!-- id: {n:016x}  cls: knowledge  tags: [] -->\n\n{text}\n"


def _ids(text: str) -> list[int]:
    return [int(b.id, 16) for b in parse_partial(text, PATH).blocks]


APPENDED = (
    _block(1)
    + "\n<<<<<<< HEAD\n"
    + _block(2)
    + "=======\n"
    + _block(3)
    + ">>>>>>> other\n\n"
    + _block(4)
)


def test_a_region_between_blocks_leaves_the_blocks_around_it_served() -> None:
    parsed = parse_partial(APPENDED, PATH)
    assert [int(b.id, 16) for b in parsed.blocks] == [1, 4]
    assert parsed.blocks[0].content == "body 1"
    [problem] = parsed.problems
    assert (problem.path, problem.line) == (PATH, 6)
    assert "unresolved git conflict (lines 6-16)" in problem.message
    assert f"{2:016x}" in problem.message and f"{3:016x}" in problem.message
    assert "git checkout --theirs -- " + PATH in problem.recovery


def test_a_write_sees_the_conflict_as_an_error_naming_file_and_line() -> None:
    with pytest.raises(BlockFormatError) as refused:
        parse_file(APPENDED, PATH)
    assert str(refused.value).startswith(f"{PATH}:6: unresolved git conflict")


def test_diff3_regions_are_found_too() -> None:
    text = (
        _block(1)
        + "\n<<<<<<< ours\n"
        + _block(2)
        + "||||||| base\n=======\n"
        + _block(3)
        + ">>>>>>> theirs\n"
    )
    parsed = parse_partial(text, PATH)
    assert [int(b.id, 16) for b in parsed.blocks] == [1]
    assert [p.line for p in parsed.problems] == [6]


def test_a_region_inside_a_body_takes_that_block_out_and_says_so() -> None:
    text = (
        _block(1)
        + "\n"
        + _block(2).rstrip("\n")
        + "\n<<<<<<< HEAD\nedited here\n=======\nedited there\n>>>>>>> other\nsame tail\n\n"
        + _block(3)
    )
    parsed = parse_partial(text, PATH)
    assert [int(b.id, 16) for b in parsed.blocks] == [1, 3]
    messages = [p.message for p in parsed.problems]
    assert any("unresolved git conflict" in m for m in messages)
    assert any(f"block {2:016x} is not served" in m for m in messages)


@pytest.mark.parametrize(
    "body",
    [
        "=======",
        "Title\n=======\n\ntext",
        ">>>>>>> quoted deeply",
        "||||||| base",
        "=======\n>>>>>>> x",
        "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> other",
        "\\<<<<<<< already escaped",
    ],
)
def test_marker_look_alikes_in_a_body_round_trip(body: str) -> None:
    blocks = [Block("00000000000000a1", body), Block("00000000000000a2", "next")]
    text = render_file(blocks)
    parsed = parse_partial(text, PATH)
    assert parsed.problems == []
    assert parsed.blocks == blocks


def test_an_opener_without_a_separator_and_closer_is_not_a_region() -> None:
    text = _block(1, "first") + "\n" + _block(2) + "<<<<<<< HEAD\nlast line\n"
    assert _ids(text) == [1, 2]


def test_one_bad_block_leaves_the_others_served() -> None:
    bad = _block(2).replace("tags: []", "tags: [no spaces allowed]")
    parsed = parse_partial(_block(1) + "\n" + bad + "\n" + _block(3), PATH)
    assert [int(b.id, 16) for b in parsed.blocks] == [1, 3]
    [problem] = parsed.problems
    assert problem.line == 7 and "invalid tag" in problem.message


def test_a_stray_frontmatter_line_takes_the_block_it_is_in_out() -> None:
    stray = _block(2).rstrip("\n") + "\n<!-- id: 00000000000000ff -->\n"
    parsed = parse_partial(_block(1) + "\n" + stray + "\n" + _block(3), PATH)
    assert [int(b.id, 16) for b in parsed.blocks] == [1, 3]
    assert parsed.problems[0].line == 10 and "without a `## ` heading" in parsed.problems[0].message
    assert any(f"block {2:016x} is not served" in p.message for p in parsed.problems)


def test_invalid_utf8_takes_only_its_block_out() -> None:
    data = (_block(1) + "\n" + _block(2) + "\n" + _block(3)).encode()
    data = data.replace(b"\n\nbody 2\n", b"\n\nbody \xff 2\n")
    parsed = parse_partial(data, PATH)
    assert [int(b.id, 16) for b in parsed.blocks] == [1, 3]
    assert parsed.problems[0].line == 9 and "invalid UTF-8 byte 0xff" in parsed.problems[0].message


def test_a_repeated_id_in_one_file_serves_the_first_copy() -> None:
    text = _block(1, "first copy") + "\n" + _block(1, "second copy")
    parsed = parse_partial(text, PATH)
    assert [b.content for b in parsed.blocks] == ["first copy"]
    assert [p.line for p in parsed.problems] == [7]
    assert "duplicate block id" in parsed.problems[0].message
