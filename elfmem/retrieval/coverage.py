"""How much of a question a lexical hit holds, and the floor under which a word match is incidental.

Any block sharing one word with a question is a bm25 hit, and among short facts the top of that
list is often a block that shares one everyday word ("prod", "database") and nothing of the
meaning: asked in other words, the answer shares none. Ranked by rank fusion, such hits pushed
the dense arm's answer out of the top five (paraphrase R@5 0.04 against 0.66 for the dense model
alone; docs/benchmarks.md, "Questions in other words").

A hit's coverage is the share of the question's word weight it holds: the smoothed IDF of each
query word it contains over the sum for all of the query's words, words no block holds included
(so a question naming an identifier nobody stored is never fully covered), words of a named
time left out (the time lift weighs those). A hit under
``COVERAGE_MIN`` leaves the lexical ranking; it is still a candidate if the dense arm finds it
on its own. A question
that names what it asks for (a service, a version, a ticket) covers its answer well above the
floor, so names, numbers and paths keep their lexical lead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from elfmem.index.termhits import TermHits
from elfmem.retrieval.dates import MONTHS
from elfmem.retrieval.fusechoice import smooth_idf

COVERAGE_MIN = 0.4
"""Chosen on the tune half of bench/sets with LoCoMo: names keep R@5 1.0 at every floor tried;
paraphrase R@5 on the tune half is 0.04 with no floor, 0.58 at 0.4 and 0.61 at 0.5, while LoCoMo
R@10 is 0.714 with no floor, 0.703 at 0.4 and 0.660 at 0.5 (a LoCoMo answer often shares one
rare word of the question). Keeping thin hits that the vector corroborates instead (cosine 0.3 to
0.5) lost more paraphrase questions than it won LoCoMo ones (docs/benchmarks.md, "Questions in
other words")."""


TIME_WORDS = frozenset(
    [*MONTHS, "yesterday", "today", "tonight", "tomorrow", "ago", "last", "week", "month", "year"]
    + "monday tuesday wednesday thursday friday saturday sunday".split()
)
LIGHT_WORDS = frozenset(
    """about also any anything go goes going gone went get gets got getting make makes made take
    takes took let lets just some much many more most very one ones thing things way kind
    know think tell say again ever still""".split()
)
"""Words that carry the shape of a question, not what it asks for ("where did I go", "what do
you think"); bm25 still scores them, but a block need not hold them to cover the question."""
_YEAR = re.compile(r"(19|20)\d\d")


def counted(term: str) -> bool:
    """A word that counts toward coverage: not a light word, nor a named time (months, years,
    "last week"), which the time lift weighs (``ranking.lift_in_time``) and no block need spell."""
    return term not in TIME_WORDS and term not in LIGHT_WORDS and not _YEAR.fullmatch(term)


def coverage(hits: TermHits) -> dict[str, float]:
    """Per block of ``hits``: the share of the query's smoothed-IDF weight its words hold."""
    weight = {t: smooth_idf(n, hits.rows) for t, n in hits.holding.items() if counted(t)}
    total = sum(weight.values())
    out: dict[str, float] = {}
    if total <= 0:
        return out
    for term, parts in hits.parts.items():
        if term not in weight:
            continue
        for block_id in parts:
            out[block_id] = out.get(block_id, 0.0) + weight[term] / total
    return out


def covered(
    scores: Mapping[str, float], shares: Mapping[str, float], floor: float
) -> dict[str, float]:
    """``scores`` (best first) less the hits whose coverage is under ``floor``; order kept."""
    return {b: v for b, v in scores.items() if shares.get(b, 0.0) >= floor}
