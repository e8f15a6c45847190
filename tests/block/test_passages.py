"""Cutting long text into passages: bounded, overlapping a little, covering every character."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elfmem.block.passages import PASSAGE_CHARS, passage_spans, passages

_TEXT = st.lists(
    st.sampled_from(list("abcde fgh.!?\n\t,;:é—") + ["\n\n", ". ", "Zoë ", "word " * 40]),
    max_size=800,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=_TEXT, size=st.integers(20, 1500), overlap=st.integers(0, 400))
def test_every_character_is_in_some_passage_and_no_passage_is_too_long(
    text: str, size: int, overlap: int
) -> None:
    spans = passage_spans(text, size, overlap)
    covered = [False] * len(text)
    for start, end in spans:
        assert 0 <= start < end <= len(text) or (start, end) == (0, len(text)) == (0, 0)
        assert end - start <= size
        for i in range(start, end):
            covered[i] = True
    assert all(covered)
    starts = [a for a, _ in spans]
    assert starts == sorted(set(starts))  # every passage starts later than the one before
    ends = [b for _, b in spans]
    assert ends == sorted(set(ends)) and ends[-1] == len(text)


@given(text=st.text(max_size=PASSAGE_CHARS))
def test_a_short_text_is_one_passage_itself(text: str) -> None:
    assert passages(text) == [text]


def test_passages_end_on_sentence_or_paragraph_boundaries_and_overlap_a_little() -> None:
    sentences = [f"Sentence number {i} talks about topic {i} at some length." for i in range(60)]
    text = " ".join(sentences[:30]) + "\n\n" + " ".join(sentences[30:])
    cut = passages(text, 600, 120)
    assert len(cut) > 4
    for piece in cut[:-1]:
        assert piece.rstrip().endswith(".")  # never mid-sentence when a boundary is near
    for a, b in zip(passage_spans(text, 600, 120), passage_spans(text, 600, 120)[1:], strict=False):
        assert b[0] < a[1] and a[1] - b[0] <= 120  # the next one starts inside this one, a little


def test_text_without_any_boundary_is_cut_at_the_size() -> None:
    text = "x" * 2500
    assert passage_spans(text, 1000, 100) == [(0, 1000), (1000, 2000), (2000, 2500)]


def test_a_size_of_zero_is_refused() -> None:
    with pytest.raises(ValueError):
        passage_spans("text", 0)
