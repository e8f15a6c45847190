"""Property tests for damaged files: a conflict region between any blocks, hostile bodies included,
leaves exactly the blocks outside it served, and a clean file reads the same leniently or not."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from elfmem.block import Block, parse_file, render_file
from elfmem.block.damage import CLOSE_RE, SEP_RE
from elfmem.block.parse import parse_partial
from tests.block.test_roundtrip_property import PROPERTY, blocks, files

PATH = "notes/knowledge/2026-04.md"


def _no_marker_lines(block: Block) -> bool:
    """Inside a region a body line ``=======`` or ``>>>>>>>`` is as ambiguous to us as to git."""
    return not any(SEP_RE.match(x) or CLOSE_RE.match(x) for x in block.content.split("\n"))


sides = st.lists(blocks.filter(_no_marker_lines), max_size=3)


@PROPERTY
@given(files)
def test_a_clean_file_reads_the_same_leniently(generated: list[Block]) -> None:
    parsed = parse_partial(render_file(generated), PATH)
    assert parsed.problems == []
    assert parsed.blocks == generated == parse_file(render_file(generated))


@PROPERTY
@given(files, sides, sides, files)
def test_a_region_between_blocks_serves_exactly_the_blocks_outside(
    before: list[Block], ours: list[Block], theirs: list[Block], after: list[Block]
) -> None:
    seen: set[str] = set()
    groups = []
    for group in (before, ours, theirs, after):
        groups.append([b for b in group if not (b.id in seen or seen.add(b.id))])
    before, ours, theirs, after = groups
    head = render_file(before)
    text = (
        head
        + "\n<<<<<<< HEAD\n"
        + render_file(ours)
        + "=======\n"
        + render_file(theirs)
        + ">>>>>>> other\n\n"
        + render_file(after)
    )
    parsed = parse_partial(text, PATH)
    assert parsed.blocks == before + after
    opener = head.count("\n") + 2
    assert parsed.problems[0].line == opener
    assert "unresolved git conflict" in parsed.problems[0].message
    assert all(b.id in parsed.problems[0].message for b in ours + theirs)
