"""Property tests: rendering and parsing are inverse on every writable block, hostile bodies too."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from elfmem.block import (
    FRONTMATTER_KEYS,
    RELATIONS,
    Block,
    Relation,
    normalise_content,
    parse_file,
    plain_text,
    preview,
    render_file,
)

PROPERTY = settings(derandomize=True, deadline=None, max_examples=100)

HOSTILE_LINES = [
    "## a heading inside a body",
    "##",
    "## ",
    "<!--",
    "<!-- a comment -->",
    "<!-- id: 0123456789abcdef -->",
    "<!-- id: 0123456789abcdef  cls: knowledge  tags: [] -->",
    "<!-- id: not-hex -->",
    "\\<!-- id: 0123456789abcdef -->",
    "\\\\<!-- id: x",
    "<!--id: 0123456789abcdef -->",
    "-->",
    "[[0123456789abcdef]]",
    "supports:: [[0123456789abcdef]]",
    "key:: value",
    "cue:: a cue in the body",
    "::",
    "---",
    "```",
    "    indented code",
    "\t- tabbed list",
    "line with trailing spaces   ",
    "ünïcödé 日本語 🙂 \u2028 \u2029 \ufeff \u200b",
    "=======",
    "<<<<<<< HEAD",
    "<<<<<<<",
    "\\<<<<<<< HEAD",
    "||||||| base",
    ">>>>>>> theirs",
    "> quoted",
    "",
    "",
]

LOWER = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"


def _word(first: str, rest: str, max_size: int) -> st.SearchStrategy[str]:
    """Cheaper than ``st.from_regex`` for ``[first][rest]{0,max_size}``."""
    return st.tuples(st.sampled_from(first), st.text(rest, max_size=max_size)).map("".join)


ids = st.text("0123456789abcdef", min_size=16, max_size=16)
keys = _word(LOWER, LOWER + DIGITS + "_-", 8)
# Control characters other than tab, CR and LF are refused on write (tests/block/test_control.py).
any_text = st.text(
    st.characters(exclude_categories=["Cs", "Cc"], include_characters="\t\r\n"), max_size=40
)
line_text = st.text(
    st.characters(exclude_categories=["Cs", "Cc"], include_characters="\t"), max_size=30
)

inline_values = line_text.map(str.strip)
frontmatter_values = line_text.map(lambda s: re.sub(" {2,}", " ", s).strip()).filter(
    lambda s: "-->" not in s
)
body_lines = st.one_of(st.sampled_from(HOSTILE_LINES), any_text)
raw_contents = st.tuples(
    st.lists(body_lines, min_size=1, max_size=8), st.sampled_from(["\n", "\r\n", "\r"])
).map(lambda parts: parts[1].join(parts[0]))
contents = raw_contents.map(normalise_content).filter(bool)

blocks = st.builds(
    Block,
    id=ids,
    content=contents,
    cls=_word(LOWER + DIGITS, LOWER + DIGITS + "_-", 12),
    tags=st.lists(_word(LOWER + "XYZ" + DIGITS + "_", LOWER + "Q" + DIGITS + "_./%:+-", 10)).map(
        tuple
    ),
    pinned=st.booleans(),
    created=st.one_of(st.just(""), st.just("2026-04-07T16:31:27+00:00"), frontmatter_values),
    cue=inline_values,
    relations=st.lists(st.builds(Relation, st.sampled_from(RELATIONS), ids), max_size=4).map(tuple),
    fields=st.lists(
        st.tuples(keys.filter(lambda k: k != "cue" and k not in RELATIONS), inline_values),
        max_size=3,
    ).map(tuple),
    extra=st.lists(
        st.tuples(keys.filter(lambda k: k not in FRONTMATTER_KEYS), frontmatter_values),
        max_size=3,
        unique_by=lambda kv: kv[0],
    ).map(tuple),
)
files = st.lists(blocks, max_size=5, unique_by=lambda b: b.id)


@PROPERTY
@given(files)
def test_parse_inverts_render(generated: list[Block]) -> None:
    text = render_file(generated)
    assert parse_file(text) == generated
    assert parse_file(text.replace("\n", "\r\n")) == generated


@PROPERTY
@given(files)
def test_render_inverts_parse_on_canonical_text(generated: list[Block]) -> None:
    text = render_file(generated)
    assert render_file(parse_file(text)) == text
    assert text == "" or (text.endswith("\n") and not text.endswith("\n\n"))
    assert "\r" not in text
    headings = [line for line in text.split("\n") if line.startswith("<!-- id: ")]
    assert len(headings) == len(generated)


@PROPERTY
@given(raw_contents.filter(lambda c: bool(normalise_content(c))))
def test_content_is_stored_normalised(raw: str) -> None:
    [block] = parse_file(render_file([Block("0123456789abcdef", raw)]))
    assert block.content == normalise_content(raw)


@PROPERTY
@given(contents, st.integers(min_value=1, max_value=80))
def test_preview_is_one_nonempty_line(content: str, width: int) -> None:
    heading = preview(content, width)
    assert heading
    assert heading == heading.strip()
    assert len(heading) <= max(width, len("(empty)"))
    assert " ".join(heading.split()) == heading
    assert not any(ch in heading for ch in "\n\r\u2028\x85")


MARKUP = list("*_`[]()!<>&#~|\\-+=.:/ 1") + ["**", "<!--", "-->", "&amp;", "](x)", "    "]


@PROPERTY
@given(
    st.lists(
        st.one_of(st.sampled_from(MARKUP), st.characters(exclude_categories=["Cs", "Cc"])),
        max_size=20,
    ).map("".join)
)
def test_preview_shortcuts_agree_with_full_mistune(line: str) -> None:
    words = " ".join(plain_text(line).split())
    assert preview(line, width=1000) == (words or "(empty)")
