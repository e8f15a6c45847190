"""What makes two look-alike sentences different statements: their numbers, names and negations.

Embeddings cannot see that "100 req/min" and "1000 req/min" disagree (cosine 0.98 with the static
model), so a near-identical vector is a duplicate only when these facts match too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUMBER = re.compile(r"\d+(?:[.,:/]\d+)*")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_NEGATIONS = frozenset(
    (
        "not no never none nobody nothing neither nor cannot without nowhere disallowed forbidden"
    ).split()
)


@dataclass(frozen=True, slots=True)
class Facts:
    numbers: tuple[str, ...]
    names: frozenset[str]
    negations: int


def facts(text: str) -> Facts:
    """Numbers (in order), capitalised words not opening a sentence, and the count of negations."""
    numbers = tuple(_NUMBER.findall(text))
    names: set[str] = set()
    negations = 0
    sentence_start = True
    for m in _WORD.finditer(text):
        word = m.group(0)
        lower = word.lower()
        if lower in _NEGATIONS or lower.endswith(("n't", "n’t")):
            negations += 1
        if word[0].isupper() and not sentence_start:
            names.add(lower)
        tail = text[m.end() : m.end() + 2]
        sentence_start = bool(re.match(r"\s*[.!?]", tail)) or tail.startswith((".", "!", "?"))
    return Facts(numbers, frozenset(names), negations)


def same_facts(a: str, b: str) -> bool:
    return facts(a) == facts(b)


def differences(a: str, b: str) -> list[str]:
    """Which kinds of fact differ (for the review note on a look-alike pair)."""
    fa, fb = facts(a), facts(b)
    out = []
    if fa.numbers != fb.numbers:
        out.append("numbers")
    if fa.names != fb.names:
        out.append("names")
    if fa.negations != fb.negations:
        out.append("negation")
    return out
