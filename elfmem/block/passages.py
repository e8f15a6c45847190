"""Cutting a long block's text into passages: bounded spans that overlap a little.

One mean-pooled vector for a 10 KB block is an average of everything in it, so a question about one
paragraph barely moves it. The index embeds each passage of a long block and scores the block by its
best passages. A passage ends on a paragraph, line or sentence boundary when one falls in its second
half, else on a space, else at the size; the next one starts at a boundary no further back than the
overlap, so a sentence cut between two passages is whole in one of them. Spans cover the text: every
character is in at least one passage. A text no longer than ``size`` is one passage, itself.

Pure: no I/O. The numbers are the index's (``PASSAGE_CHARS`` and ``PASSAGE_OVERLAP``), chosen on
the long-document benchmark by leave-one-conversation-out (docs/benchmarks.md, "Long documents").
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

PASSAGE_CHARS = 250
"""Longest passage, in characters (about 50 words: a turn or two of a conversation)."""

PASSAGE_OVERLAP = 60
"""How far back the next passage may start, in characters."""

_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
_LINE = re.compile(r"\n\s*")
_SENTENCE = re.compile(r"(?<=[.!?…:;])[\"')\]]*\s+")
_SPACE = re.compile(r"\s+")


def passage_spans(
    text: str, size: int = PASSAGE_CHARS, overlap: int = PASSAGE_OVERLAP
) -> list[tuple[int, int]]:
    """(start, end) offsets of the passages of ``text``; ``[(0, len(text))]`` when it is short."""
    if size <= 0:
        raise ValueError("passage size must be positive")
    overlap = max(0, min(overlap, size // 2))
    n = len(text)
    if n <= size:
        return [(0, n)]
    strong = _boundaries(text, (_PARAGRAPH, _LINE, _SENTENCE))
    weak = _boundaries(text, (_SPACE,))
    spans: list[tuple[int, int]] = []
    start = 0
    while True:
        if n - start <= size:
            spans.append((start, n))
            return spans
        limit = start + size
        end = _last_in(strong, start + size // 2, limit) or _last_in(weak, start + size // 2, limit)
        end = end or limit
        spans.append((start, end))
        # The next passage starts at the earliest boundary within ``overlap`` of the end, but
        # always past this passage's start (a passage is never repeated).
        back = _first_in(strong, max(start + 1, end - overlap), end)
        start = back if back is not None else end


def passages(text: str, size: int = PASSAGE_CHARS, overlap: int = PASSAGE_OVERLAP) -> list[str]:
    """The passage texts of ``text`` (see ``passage_spans``)."""
    return [text[a:b] for a, b in passage_spans(text, size, overlap)]


def _boundaries(text: str, patterns: tuple[re.Pattern[str], ...]) -> list[int]:
    """Offsets where a passage may end or begin: just after each match, sorted."""
    found = {m.end() for pattern in patterns for m in pattern.finditer(text)}
    return sorted(found)


def _last_in(points: list[int], low: int, high: int) -> int | None:
    """The largest point in ``[low, high]``, if any."""
    i = bisect_right(points, high)
    if i and points[i - 1] >= low:
        return points[i - 1]
    return None


def _first_in(points: list[int], low: int, high: int) -> int | None:
    """The smallest point in ``[low, high)``, if any."""
    i = bisect_left(points, low)
    if i < len(points) and points[i] < high:
        return points[i]
    return None
