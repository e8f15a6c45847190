"""Feedback for the lexical side of a search, scored over the first pass's candidates only.

The lexical twin of ``dense_query``'s feedback (RM3-style pseudo-relevance feedback). A question
names one side of a fact ("what did Caroline research?"); the turn that answers it best holds words
the question lacks ("adoption agencies"), and the other turns about that fact share them. After the
first fusion, the words of the ``FEEDBACK_DEPTH`` best-ranked blocks that the question does not
hold are weighed by how often those blocks use them and how rare they are among the candidates;
the ``FEEDBACK_WORDS`` best are scored with bm25 over the candidates' texts, and that ranking joins
rank fusion as a third list at weight ``LEXICAL_FEEDBACK``.

Every count is taken over the candidates the first pass found (a hundred blocks at most with the
default 50 seeds a search), never over the whole memory: no second full-text search and no
per-word count in the index, so the step costs the same at 1k blocks and at 100k. The measured
version that searched the whole index cost 61 ms a recall at 10k blocks (docs/benchmarks.md,
"Contiguity and lexical feedback"). It only reorders: a block that no first-pass search returned
never becomes a candidate, and the two first rankings keep their weights.

Only rank fusion takes it: long documents are fused by score (``fusechoice``), where one block
holds most words anyway.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from elfmem.errors import InvalidInput
from elfmem.index.search import STOP_WORDS
from elfmem.retrieval import fusion

LEXICAL_FEEDBACK = 0.4
"""RRF weight of the feedback words' ranking (the question's own lexical ranking has 1.0); 0: off.
Chosen with contiguity by leave-one-conversation-out on the LoCoMo dev file, one setting for both
forms, in all five folds (docs/benchmarks.md, "Contiguity among the candidates"): it adds little
with the date in the cue and most of the gain without it."""
FEEDBACK_WORDS = 5
"""How many words of the first pass's best blocks the feedback ranking scores (5 was probed ahead
of 10 in the pass that searched the whole index)."""
FEEDBACK_DEPTH = 2
"""How many of the first pass's best-ranked blocks give words (2 was probed ahead of 1)."""
WITH_CUE = True
"""Whether a candidate's cue counts as part of its text (bm25 searches the cue too). Not tuned."""
BM25_K1 = 1.2
BM25_B = 0.75
_WORD = re.compile(r"[^\W_]+")


def stem(word: str) -> str:
    """A light normalisation so that "agency" and "agencies", "bowl" and "bowls" meet: a few plural
    endings cut. Not a stemmer; both sides of every comparison go through it."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def tokens(text: str) -> tuple[str, ...]:
    """The searchable words of ``text``, lower-cased and normalised, repeats kept, in order: what
    bm25 would look for (no stop words, no one-letter words except digits). Kept per text: a
    memory's candidates recur from one recall to the next."""
    return _tokens(text)


@lru_cache(maxsize=16384)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(n for w in _WORD.findall(text.casefold()) if (n := _normal(w)) is not None)


@lru_cache(maxsize=65536)
def _normal(word: str) -> str | None:
    """``word`` as ``tokens`` keeps it, or None for a stop word or a one-letter word."""
    if word in STOP_WORDS or (len(word) < 2 and not word.isdigit()):
        return None
    return stem(word)


def feedback_words(
    top: Sequence[str], query: str, pool: Mapping[str, Sequence[str]], count: int
) -> list[str]:
    """The ``count`` best words of the ``top`` blocks (their ids in ``pool``) for a second scoring,
    best first.

    ``pool`` maps every candidate to its ``tokens``. A word's weight is its occurrences in the top
    blocks times its IDF among the candidates, ln((N − n + ½)/(n + ½)) with n the candidates that
    hold it and N all of them. Words of the query are left out (the first search had them), and so
    are words held by one candidate only (scoring them reorders nothing) and words held by half of
    the candidates or more (no IDF). Ties go to the earlier word.
    """
    if count < 0:
        raise InvalidInput(f"feedback word count must be ≥ 0, got {count}", "Use 5.")
    asked = set(tokens(query))
    tf: Counter[str] = Counter()
    for block_id in top:
        tf.update(w for w in pool.get(block_id, ()) if w not in asked)
    if not tf or count == 0:
        return []
    held = _holding(pool.values(), set(tf))
    rows = len(pool)
    weight = {}
    for word in tf:
        n = held.get(word, 0)
        if n <= 1 or 2 * n >= rows:
            continue
        weight[word] = tf[word] * math.log((rows - n + 0.5) / (n + 0.5))
    return sorted(weight, key=lambda w: -weight[w])[:count]  # stable: earlier words win ties


def _holding(texts: Iterable[Sequence[str]], words: set[str]) -> dict[str, int]:
    """How many of ``texts`` (token lists) hold each of ``words``."""
    held: Counter[str] = Counter()
    for toks in texts:
        held.update(words.intersection(toks))
    return held


def ranking(pool: Mapping[str, Sequence[str]], words: Sequence[str]) -> list[str]:
    """The candidates holding any of ``words``, best first by bm25 over the candidates (IDF and
    mean length taken among them); ties by the pool's order."""
    if not words or not pool:
        return []
    wanted = set(words)
    rows = len(pool)
    held = _holding(pool.values(), wanted)
    idf = {w: math.log(1.0 + (rows - held[w] + 0.5) / (held[w] + 0.5)) for w in wanted}
    mean = sum(len(t) for t in pool.values()) / rows or 1.0
    scores: dict[str, float] = {}
    for block_id, toks in pool.items():
        found = [t for t in toks if t in wanted]
        if not found:
            continue
        norm = BM25_K1 * (1 - BM25_B + BM25_B * len(toks) / mean)
        scores[block_id] = sum(
            idf[w] * n * (BM25_K1 + 1) / (n + norm) for w, n in Counter(found).items()
        )
    return sorted(scores, key=lambda b: -scores[b])


def fused(
    candidates: Sequence[str],
    lexical: Sequence[str],
    dense: Mapping[str, float],
    extra: Sequence[str],
    rrf: tuple[float, Sequence[float]],
    weight: float,
) -> dict[str, float]:
    """Rank fusion of the lexical ranking, the dense ranking and the feedback ranking ``extra``
    (at ``weight``), normalised so the top is 1.0, for every candidate (0.0 for one no list
    holds). With ``extra`` empty or ``weight`` 0 this is ``fusion.query_similarity``'s RRF."""
    k, weights = rrf
    if not lexical:
        return fusion.query_similarity(candidates, lexical, dense, k, list(weights))
    dense_ranking = sorted(dense, key=lambda doc_id: -dense[doc_id])
    scores = fusion.normalise_top(
        fusion.rrf([lexical, dense_ranking, extra], k=k, weights=[*weights, weight])
    )
    return {doc_id: scores.get(doc_id, 0.0) for doc_id in candidates}
