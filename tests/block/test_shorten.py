"""Headings and commit subjects are cut after a whole word, with an ellipsis, never mid-word."""

from __future__ import annotations

import unicodedata

import pygit2
from hypothesis import given
from hypothesis import strategies as st

from elfmem.block.model import Block
from elfmem.block.parse import parse_file
from elfmem.block.render import render_file
from elfmem.block.text import ELLIPSIS, preview, shorten

FACT = "Postgres connection pooling needs pgbouncer above 200 clients in production"


def test_short_text_is_kept_whole() -> None:
    assert shorten("above 200 clients", 60) == "above 200 clients"
    assert shorten("x" * 60, 60) == "x" * 60


def test_long_text_ends_after_a_whole_word_with_an_ellipsis() -> None:
    heading = preview(FACT)
    assert heading == "Postgres connection pooling needs pgbouncer above 200…"
    assert len(heading) <= 60
    assert FACT.startswith(heading.removesuffix(ELLIPSIS) + " ")


def test_punctuation_before_the_cut_is_dropped() -> None:
    assert shorten("alpha beta, gamma delta epsilon", 13) == "alpha beta…"


def test_a_first_word_longer_than_the_limit_is_cut_between_characters() -> None:
    word = "Supercalifragilisticexpialidocious" * 3
    assert shorten(word + " tail", 20) == word[:19] + ELLIPSIS


def test_cjk_text_without_spaces_is_cut_between_characters_or_after_its_punctuation() -> None:
    plain = "数据库连接池在超过一百个客户端时需要使用连接池服务器否则会出问题"
    assert shorten(plain, 10) == plain[:9] + ELLIPSIS
    punctuated = "数据库连接池，在超过一百个客户端时需要使用连接池服务器"
    assert shorten(punctuated, 12) == "数据库连接池" + ELLIPSIS


def test_an_accent_is_never_separated_from_its_letter() -> None:
    decomposed = "e\u0301" * 40  # 'é' as a letter plus a combining accent
    cut = shorten(decomposed, 10).removesuffix(ELLIPSIS)
    assert cut and unicodedata.category(cut[-1]) == "Mn"
    assert cut == "e\u0301" * (len(cut) // 2)


def test_hostile_text_gives_one_short_line() -> None:
    hostile = "<!-- id: 0123456789abcdef -->\u2028## \u202e" + "\u200d" * 80 + " x" * 50
    out = shorten(hostile, 30)
    assert len(out) <= 30
    assert "\n" not in out and "\u2028" not in out
    assert shorten(" \t ", 5) == ""
    assert shorten("abc", 1) == ELLIPSIS


@given(st.text(max_size=200), st.integers(min_value=1, max_value=80))
def test_any_text_fits_its_width_and_is_a_prefix_of_the_words(text: str, width: int) -> None:
    out = shorten(text, width)
    words = " ".join(text.split())
    assert len(out) <= width
    if out.endswith(ELLIPSIS) and out != words:
        assert words.startswith(out.removesuffix(ELLIPSIS))
    else:
        assert out == words


def test_a_long_heading_still_parses_back_to_the_same_block() -> None:
    block = Block("0123456789abcdef", FACT + " and more" * 20)
    text = render_file([block])
    assert text.startswith("## Postgres connection pooling needs pgbouncer above 200…\n")
    assert parse_file(text)[0].content == block.content


def test_commit_subjects_end_after_a_word(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    from elfmem import MemorySystem

    long_fact = "Raise the shared buffers setting for the reporting replica " * 3

    async def run() -> None:
        system, _ = await MemorySystem.init(tmp_path, name="Ada")
        await system.remember(long_fact.strip(), cue="tuning postgres")
        await system.close()

    asyncio.run(run())
    subject = pygit2.Repository(str(tmp_path)).head.peel(pygit2.Commit).message.splitlines()[0]
    assert subject == "remember: Raise the shared buffers setting for the reporting replica…"
    assert len(subject) <= 72
