"""Token counting and greedy packing into a frame's budget."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from elfmem.errors import InvalidInput
from elfmem.retrieval.budget import count_tokens, pack


def _counted_per_character(text: str) -> int:
    """The formula of the module docstring, one character at a time."""
    if not text:
        return 0
    plain = sum(1 for ch in text if ch.isascii() and (ch.isalnum() or ch.isspace()))
    punctuation = sum(1 for ch in text if ch.isascii()) - plain
    non_ascii = len(text) - plain - punctuation
    by_chars = math.ceil(plain / 4.5 + punctuation * 0.6 + non_ascii)
    return max(by_chars, math.ceil(len(text.split()) * 4 / 3))


def test_count_tokens_takes_the_larger_of_chars_and_words() -> None:
    assert count_tokens("") == 0
    # 11 plain chars / 4.5 = 2.44 → 3;  2 words · 4/3 = 2.67 → 3
    assert count_tokens("hello world") == 3
    # 11 plain → 3;  6 words · 4/3 = 8 → 8 (short words are a token each, or more)
    assert count_tokens("a b c d e f") == 8
    # 20 plain / 4.5 = 4.44 → 5;  1 word → 2 → 5 (a long word is several tokens)
    assert count_tokens("internationalization") == 5


def test_count_tokens_charges_punctuation_and_non_ascii_more() -> None:
    # "self.items[index].value": 19 plain / 4.5 + 4 punctuation · 0.6 = 4.22 + 2.4 → 7; 1 word → 2
    assert count_tokens("self.items[index].value") == 7
    # 3 CJK chars → 3;  1 word → 2 → 3
    assert count_tokens("日本語") == 3
    # "café au lait": 11 plain / 4.5 + 1 non-ASCII = 3.44 → 4;  3 words → 4 → 4
    assert count_tokens("café au lait") == 4


@given(st.text(max_size=300) | st.text(alphabet=st.characters(max_codepoint=127), max_size=300))
def test_count_tokens_is_the_formula_for_any_text(text: str) -> None:
    # control characters, the separators Python counts as whitespace, astral characters
    assert count_tokens(text) == _counted_per_character(text)
    assert count_tokens(text + "\x1c\x7f\x00 ü😀") == _counted_per_character(
        text + "\x1c\x7f\x00 ü😀"
    )


def test_pack_keeps_items_in_order_and_skips_what_does_not_fit() -> None:
    items = [("a", 300), ("b", 250), ("c", 100), ("d", 50)]
    got = pack(items, budget=600)
    # a 300; b 550; c would be 650 > 600 → dropped; d 600 ≤ 600 → kept
    assert got.kept == ["a", "b", "d"]
    assert got.dropped == [("c", "budget")]
    assert (got.used, got.budget, got.overrun) == (600, 600, False)


def test_a_first_item_bigger_than_the_budget_is_kept_whole_as_an_overrun() -> None:
    got = pack([("big", 900), ("small", 10)], budget=600)
    assert got.kept == ["big"]
    assert got.dropped == [("small", "budget")]
    assert got.used == 900
    assert got.overrun


def test_a_big_item_after_others_is_dropped_not_overrun() -> None:
    got = pack([("a", 100), ("big", 900)], budget=600)
    assert (got.kept, got.dropped, got.overrun) == (["a"], [("big", "budget")], False)


def test_pack_edge_cases() -> None:
    assert pack([], budget=10).kept == []
    assert pack([("a", 10), ("free", 0)], budget=10).kept == ["a", "free"]
    for bad in (0, -5, True, 1.5):
        with pytest.raises(InvalidInput):
            pack([("a", 1)], budget=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        pack([("a", -1)], budget=10)
