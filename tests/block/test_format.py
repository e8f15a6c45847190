"""The memory file format on hand-written files: what parses, what is refused, and where."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from elfmem.block import (
    Block,
    Relation,
    parse_bytes,
    parse_file,
    parse_located,
    plain_text,
    preview,
    render_block,
    render_file,
    validate_block,
)
from elfmem.errors import BlockFormatError, InvalidInput

A = "a1b2c3d4e5f6a7b8"
B = "b2c3d4e5f6a1b2c3"
C = "c3d4e5f6a1b2c3d4"

FRONTMATTER_A = (
    f"<!-- id: {A}  cls: knowledge  tags: [db/postgres, self/value]  pinned: true  "
    "created: 2026-04-07T16:31:27+00:00  owner: bob  tom-belief: likes pools -->"
)

SAMPLE = f"""## Use PgBouncer in transaction mode.
{FRONTMATTER_A}
cue:: choosing a connection pooling strategy
supports:: [[{B}]]
supersedes:: [[{C}]]
somekey:: an unknown inline field, kept

Use **PgBouncer** in transaction mode.

## Why
<!-- a plain comment stays in the body -->
Session mode pins one server connection per client: [[not-a-link]] and a::b stay text.

## Session state lives in Redis with a 30 minute TTL.
<!-- id: {B}  cls: knowledge  tags: []  created: 2026-04-08T09:00:00+00:00 -->

Session state lives in Redis with a 30 minute TTL.
related:: [[{A}]] is body text here.

## Keep sessions small.
<!-- id: {C}  cls: decision  tags: [web]  created: 2026-04-09T10:00:00+00:00 -->
related:: [[{A}]]
supports:: [[{A}]] [[{B}]]

Keep sessions small.
"""

EXPECTED = [
    Block(
        id=A,
        content=(
            "Use **PgBouncer** in transaction mode.\n\n## Why\n"
            "<!-- a plain comment stays in the body -->\n"
            "Session mode pins one server connection per client: [[not-a-link]] and a::b stay text."
        ),
        cls="knowledge",
        tags=("db/postgres", "self/value"),
        pinned=True,
        created="2026-04-07T16:31:27+00:00",
        cue="choosing a connection pooling strategy",
        relations=(Relation("supports", B), Relation("supersedes", C)),
        fields=(("somekey", "an unknown inline field, kept"),),
        extra=(("owner", "bob"), ("tom-belief", "likes pools")),
    ),
    Block(
        id=B,
        content=(
            "Session state lives in Redis with a 30 minute TTL.\n"
            f"related:: [[{A}]] is body text here."
        ),
        created="2026-04-08T09:00:00+00:00",
    ),
    Block(
        id=C,
        content="Keep sessions small.",
        cls="decision",
        tags=("web",),
        created="2026-04-09T10:00:00+00:00",
        relations=(Relation("supports", A), Relation("supports", B)),
        fields=(("related", f"[[{A}]]"),),
    ),
]

CANONICAL_C = f"""## Keep sessions small.
<!-- id: {C}  cls: decision  tags: [web]  created: 2026-04-09T10:00:00+00:00 -->
supports:: [[{A}]]
supports:: [[{B}]]
related:: [[{A}]]

Keep sessions small.
"""


def test_sample_file_parses_into_its_blocks() -> None:
    assert parse_file(SAMPLE, "notes/knowledge/2026-04.md") == EXPECTED


def test_crlf_file_parses_like_lf() -> None:
    assert parse_file(SAMPLE.replace("\n", "\r\n")) == EXPECTED


def test_parse_bytes_decodes_utf8_and_bom() -> None:
    data = (
        "\ufeff" + SAMPLE.replace("Keep sessions small.\n", "Keep sessions small — ✓.\n")
    ).encode()
    assert parse_bytes(data)[2].content == "Keep sessions small — ✓."


def test_located_lines_are_heading_lines() -> None:
    assert [line for _, line in parse_located(SAMPLE)] == [1, 14, 20]


def test_render_is_canonical_and_stable() -> None:
    text = render_file(parse_file(SAMPLE))
    assert text == SAMPLE[: SAMPLE.index("## Keep")] + CANONICAL_C
    assert render_file(parse_file(text)) == text
    assert parse_file(text) == EXPECTED


def test_heading_text_is_derived_and_ignored() -> None:
    edited = SAMPLE.replace("## Use PgBouncer in transaction mode.", "## anything at all")
    assert parse_file(edited) == EXPECTED
    assert render_block(EXPECTED[0]).startswith("## Use PgBouncer in transaction mode.\n")


def test_hand_edited_block_is_normalised() -> None:
    text = (
        "\n\n## x\n"
        f"<!-- id: {A}  created: 2026  tags: [a,b]  pinned: false  cls: note --> \t\n"
        "cue::   spaced cue  \n"
        "\n\n"
        "body line   \n\n\n"
    )
    [block] = parse_file(text)
    assert block == Block(A, "body line", "note", ("a", "b"), False, "2026", "spaced cue")
    assert render_block(block) == (
        f"## body line\n<!-- id: {A}  cls: note  tags: [a, b]  created: 2026 -->\n"
        "cue:: spaced cue\n\nbody line\n"
    )


def test_escaped_frontmatter_lines_in_a_body_round_trip() -> None:
    body = f"## looks like a heading\n<!-- id: {B} -->\n\\<!-- id: x\n<!--id: no space"
    block = Block(A, body)
    text = render_block(block)
    assert f"\n\\<!-- id: {B} -->\n\\\\<!-- id: x\n<!--id: no space\n" in text
    assert parse_file(text) == [block]


def test_empty_inputs() -> None:
    assert parse_file("") == []
    assert parse_file("\n\n  \n") == []
    assert render_file([]) == ""


def _error(text: str) -> BlockFormatError:
    with pytest.raises(BlockFormatError) as info:
        parse_file(text, "notes/x/2026-01.md")
    assert info.value.path == "notes/x/2026-01.md"
    assert info.value.recovery
    assert str(info.value).startswith(f"notes/x/2026-01.md:{info.value.line}: ")
    return info.value


def _one(frontmatter: str, fields: str = "", body: str = "\nbody\n") -> str:
    return f"## h\n<!-- id: {A}{frontmatter} -->\n{fields}{body}"


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (f"## h\n<!-- id: {A.upper()} -->\n\nbody\n", 2, "invalid id"),
        ("## h\n<!-- id: 123 -->\n\nbody\n", 2, "invalid id"),
        (f"## h\n<!-- id: {A}  cls: knowledge\n\nbody\n", 2, "not closed"),
        (_one("  cls: a  cls: b"), 2, "duplicate key"),
        (_one("  owner: a --> b"), 2, "`-->` inside"),
        (_one("  Owner: bob"), 2, "not `key: value`"),
        (_one("  tags: [bad tag]"), 2, "invalid tag"),
        (_one("  tags: a, b"), 2, "tags must be written"),
        (_one("  cls: Bad"), 2, "invalid category"),
        (_one("  pinned: yes"), 2, "pinned must be true or false"),
        (_one("", "cue:: x\nsupports:: [[nothex]]\n"), 4, "supports::"),
        (_one("", f"refines:: {B}\n"), 3, "refines::"),
        (_one("", "requires::\n"), 3, "requires::"),
        (_one("", f"supports:: [[{B}]] and more\n"), 3, "supports::"),
        (_one("", "cue:: a\ncue:: b\n"), 4, "second `cue::`"),
        (_one("", "cue:: a\nThe body without a blank line\n", ""), 4, "inline field"),
        (_one("", "", "\n\n"), 1, "no body"),
        ("\n\nstray preamble\n" + _one(""), 3, "before the first block"),
        ("just text\n", 1, "before the first block"),
        (f"{_one('')}\n## h\n<!-- id: {A} -->\n\nagain\n", 7, "duplicate block id"),
        (f"{_one('')}\nprose\n<!-- id: {B} -->\n\nbody\n", 7, "without a `## ` heading"),
        (f"<!-- id: {B} -->\n\nbody\n", 1, "without a `## ` heading"),
    ],
)
def test_malformed_text_is_refused_at_its_line(text: str, line: int, words: str) -> None:
    error = _error(text)
    assert error.line == line
    assert words in error.message


def test_unknown_relation_word_is_a_field() -> None:
    [block] = parse_file(_one("", f"related:: [[{B}]]\nsupport:: x\n"))
    assert block.fields == (("related", f"[[{B}]]"), ("support", "x"))
    assert block.relations == ()


def test_invalid_utf8_names_file_and_line() -> None:
    data = f"## h\n<!-- id: {A} -->\n\nfine\nbad \xff byte\n".encode("latin-1")
    with pytest.raises(BlockFormatError) as info:
        parse_bytes(data, "log/x/2026-01.md")
    assert (info.value.path, info.value.line) == ("log/x/2026-01.md", 5)
    assert "0xff" in info.value.message


@pytest.mark.parametrize(
    "change",
    [
        {"id": "ABCDEF0123456789"},
        {"id": "abc"},
        {"cls": "Has Space"},
        {"tags": ("ok", "not ok")},
        {"tags": ("trailing\n",)},
        {"content": " \n \n"},
        {"created": "2026  04"},
        {"extra": (("owner", "a -->"),)},
        {"extra": (("owner", "two\nlines"),)},
        {"extra": (("owner", " padded"),)},
        {"extra": (("owner", "double  space"),)},
        {"extra": (("cls", "dup"),)},
        {"extra": (("owner", "a"), ("owner", "b"))},
        {"extra": (("Owner", "a"),)},
        {"fields": (("cue", "hidden"),)},
        {"fields": (("supports", f"[[{B}]]"),)},
        {"fields": (("note", "ends with space "),)},
        {"cue": "two\nlines"},
        {"relations": (Relation("related", B),)},
        {"relations": (Relation("supports", "nothex"),)},
    ],
)
def test_unwritable_blocks_are_refused(change: dict[str, object]) -> None:
    block = Block(A, "body").with_changes(**change)
    with pytest.raises(InvalidInput) as info:
        validate_block(block)
    assert info.value.recovery
    with pytest.raises(InvalidInput):
        render_block(block)


def test_render_file_refuses_duplicate_ids() -> None:
    with pytest.raises(InvalidInput, match="twice"):
        render_file([Block(A, "one"), Block(A, "two")])


def test_empty_extra_value_round_trips() -> None:
    block = Block(A, "body", extra=(("flag", ""), ("owner", "bob")))
    text = render_block(block)
    assert "  flag:  owner: bob -->" in text
    assert parse_file(text) == [block]


def test_plain_text_strips_markup_and_html() -> None:
    md = (
        "# Title *x*\n\n- item `code` [link](http://x) ![alt](y)\n\n<!-- gone -->\n\na &amp; b<br>c"
    )
    assert plain_text(md) == "Title x\nitem code link alt\na & bc"


def test_preview_is_one_short_line_with_words() -> None:
    assert preview("```python\nprint('hi')\n```") == "print('hi')"
    assert preview("<!-- only a comment -->\n---") == "(empty)"
    assert preview("  \n**Bold** start\nsecond") == "Bold start"
    assert preview("é" * 100) == "é" * 59 + "…"
    assert preview("word " * 30, width=12) == "word word…"
    assert preview("a\u2028b") == "a b"


def test_docs_example_is_canonical() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "format.md").read_text(encoding="utf-8")
    example = re.search(r"```markdown\n(.*?)```", doc, re.DOTALL)
    assert example is not None
    [block] = parse_file(example[1])
    assert block.relations and block.cue and block.fields and block.extra and block.pinned
    assert render_file([block]) == example[1]
