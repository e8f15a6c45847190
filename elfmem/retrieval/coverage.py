"""How much of a question a lexical hit holds, and the floor under which a word match is incidental.

Any block sharing one word with a question is a bm25 hit, and among short facts the top of that
list is often a block that shares one everyday word ("prod", "database") and nothing of the
meaning: asked in other words, the answer shares none. Ranked by rank fusion, such hits pushed
the dense arm's answer out of the top five (paraphrase R@5 0.04 against 0.66 for the dense model
alone; docs/benchmarks.md, "Questions in other words").

A hit's coverage is the share of the question's word weight it holds: the smoothed IDF of each
query word it contains over the sum for all of the query's words, words no block holds included
(so a question naming an identifier nobody stored is never fully covered). A hit under
``COVERAGE_MIN`` leaves the lexical ranking unless the dense arm corroborates it
(``settings.LEXICAL_COSINE``); it may still come back through the dense arm alone. A question
that names what it asks for (a service, a version, a ticket) covers its answer well above the
floor, so names, numbers and paths keep their lexical lead.
"""

from __future__ import annotations

from collections.abc import Mapping

from elfmem.index.termhits import TermHits
from elfmem.retrieval.fusechoice import smooth_idf

COVERAGE_MIN = 0.5
"""Chosen on the tune half of bench/sets (paraphrase and names questions): from 0.5 up the
paraphrase questions rank as the dense model alone ranks them, and names keep R@5 1.0; 0.4 lost
paraphrase questions to one-word matches (docs/benchmarks.md, "Questions in other words")."""


def coverage(hits: TermHits) -> dict[str, float]:
    """Per block of ``hits``: the share of the query's smoothed-IDF weight its words hold."""
    weight = {term: smooth_idf(n, hits.rows) for term, n in hits.holding.items()}
    total = sum(weight.values())
    out: dict[str, float] = {}
    if total <= 0:
        return out
    for term, parts in hits.parts.items():
        for block_id in parts:
            out[block_id] = out.get(block_id, 0.0) + weight[term] / total
    return out


def covered(
    scores: Mapping[str, float], shares: Mapping[str, float], floor: float
) -> dict[str, float]:
    """``scores`` (best first) less the hits whose coverage is under ``floor``; order kept."""
    return {b: v for b, v in scores.items() if shares.get(b, 0.0) >= floor}
