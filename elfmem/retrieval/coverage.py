"""How much of a question a lexical hit holds, and the floor under which a word match is incidental.

Any block sharing one word with a question is a bm25 hit, and among short facts the top of that
list is often a block that shares one everyday word ("prod", "database") and nothing of the
meaning: asked in other words, the answer shares none. Ranked by rank fusion, such hits pushed
the dense arm's answer out of the top five (paraphrase R@5 0.04 against 0.66 for the dense model
alone; docs/benchmarks.md, "Questions in other words").

A hit's coverage is the share of the question's word weight it holds: the smoothed IDF of each
query word it contains over the sum for all of the query's words, words no block holds included
(so a question naming an identifier nobody stored is never fully covered), words of a named
time left out (the time lift weighs those). Two rules use it, both only where a dense arm
exists (without one the words are all there is):

- a hit under ``COVERAGE_MIN`` leaves the lexical ranking; it is still a candidate if the dense
  arm finds it on its own;
- in rank fusion every other hit's term is weighed by its coverage to the power
  ``COVERAGE_POWER`` (``weights``): bm25's score grows with the share of the question a block
  holds, and ranks alone throw that away, so a hit sharing half of the question's weight placed
  first by bm25 outranked the dense arm's answer as if it held all of it.

A question that names what it asks for (a service, a version, a ticket) covers its answer well
above the floor and close to whole, so names, numbers and paths keep their lexical lead.

The noun a question asks by ("what **state** is the firewall in", "which **version** does it
pin", "which **city** did she visit") names the kind of the answer, and the answer states a value
of that kind, not the noun: "the firewall of Kestrel is open". Counted, that noun went to
whatever block happens to repeat it (a note planning a review of another project's firewall
state) and held the answer under the weighing's whole; like the light words, it is left out of
coverage (``answer_kinds``) and bm25 still scores it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from elfmem.block.lexicon import STATES
from elfmem.index.fulltext import STOP_WORDS
from elfmem.index.termhits import TermHits
from elfmem.retrieval.dates import MONTHS
from elfmem.retrieval.fusechoice import smooth_idf

COVERAGE_MIN = 0.2
"""Chosen with ``COVERAGE_POWER`` and ``COVERAGE_WHOLE`` on the tune half of bench/sets and on
LoCoMo (docs/benchmarks.md, "Questions in other words"). The trade: a paraphrase question's best
lexical hit covers 0.33 of it at the median (0.46 at the 90th percentile), a LoCoMo answer that
is a lexical hit covers 0.56 (0.34 at the 25th percentile), so a floor high enough for the first
drops many of the second. As a hard floor alone, 0.4 was the best (paraphrase R@5 on the tune
half 0.58, LoCoMo R@10 0.699); the weighing below beats it on both (0.63, 0.700). Keeping thin
hits that the vector corroborates lost: a word-sharing distractor is near in meaning too."""
COVERAGE_POWER = 4.0
"""The power of a hit's coverage (over ``COVERAGE_WHOLE``) that weighs its rank-fusion term; 0:
every hit counts whole."""
COVERAGE_WHOLE = 0.6
"""The coverage from which a hit's rank-fusion term counts whole."""


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
_ASKING = frozenset("what which whose".split())
_AUXILIARIES = frozenset(
    """is are was were be been am do does did has have had can could will would shall should
    may might must""".split()
)
_KIND_WORDS = 3
"""Most words between "what" and its verb that are read as the answer's kind ("which Python
version does")."""
_WORD = re.compile(r"\w+")


def counted(term: str) -> bool:
    """A word that counts toward coverage: not a light word, nor a named time (months, years,
    "last week"), which the time lift weighs (``ranking.lift_in_time``) and no block need spell."""
    return term not in TIME_WORDS and term not in LIGHT_WORDS and not _YEAR.fullmatch(term)


def answer_kinds(query: str) -> frozenset[str]:
    """The words ``query`` asks by, as the lexical search spells them: the last word of a short
    run between "what", "which" or "whose" and the verb after it ("what state is", "which Python
    version does"), and the state a yes-or-no question ends on ("is the endpoint of X open"). A
    run that meets any other small word first ("what kind of", "what is") names none.

    Either is the answer's kind or a value of it: the block that answers states X's state, which
    may be another one ("the endpoint of X is now paused"), while a block that holds the word is
    as likely about another subject ("the endpoint of Y is open")."""
    words = [w.strip("_") for w in _WORD.findall(query.casefold())]
    kinds: set[str] = set()
    if len(words) > 2 and words[0] in _AUXILIARIES and words[-1] in STATES:
        kinds.add(words[-1])
    for at, word in enumerate(words):
        if word not in _ASKING:
            continue
        run: list[str] = []
        for following in words[at + 1 : at + 2 + _KIND_WORDS]:
            if following in _AUXILIARIES:
                if run:
                    kinds.add(run[-1])
                break
            if following in STOP_WORDS or not following:
                break
            run.append(following)
    return frozenset(kinds)


def coverage(hits: TermHits, kinds: frozenset[str] = frozenset()) -> dict[str, float]:
    """Per block of ``hits``: the share of the query's smoothed-IDF weight its words hold, the
    answer's kind (``answer_kinds``) left out."""
    weight = {
        t: smooth_idf(n, hits.rows)
        for t, n in hits.holding.items()
        if counted(t) and t not in kinds
    }
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


def weights(shares: Mapping[str, float], power: float, whole: float = 1.0) -> dict[str, float]:
    """Each hit's rank-fusion factor: (coverage / ``whole``) to ``power``, at most 1.0, so a hit
    holding ``whole`` of the question or more counts whole; power 0: all 1.0."""
    if power <= 0 or whole <= 0:
        return dict.fromkeys(shares, 1.0)
    return {b: min(1.0, max(0.0, share) / whole) ** power for b, share in shares.items()}
