"""Search settings: the knobs of recall's first stages and their measured defaults.

``SearchSettings()`` is what the product ranks with; benchmarks pass other values to measure
them (``bench/locomo.py``, ``bench/longdoc.py``). Cosine knobs left unset are filled in from the
configured model's calibrated cuts (``calibrated_settings``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date

from elfmem.index import FieldWeights
from elfmem.index.calibration import Cuts
from elfmem.retrieval import contiguity as contig
from elfmem.retrieval import fusion, late, mmr
from elfmem.retrieval.coverage import COVERAGE_MIN, COVERAGE_POWER, COVERAGE_WHOLE
from elfmem.retrieval.dense_query import FEEDBACK, FEEDBACK_DEPTH

DENSE_FLOOR = 0.35
"""Cosine at which a vector hit bears on the query, for the embedded model. On the LoCoMo dev
file 90% of question–evidence pairs score above it; short facts on other subjects score 0.1–0.3
(docs/benchmarks.md). Another embedding model gets it moved to its own scale
(``calibrated_settings``, ``index/calibration.py``)."""
INHERIT = 0.5
"""Share of a relevant block's relevance its declared graph neighbours inherit."""
TIME_BOOST = 1.5
"""Relevance multiplier for a block whose ``when:`` date falls in the time a query names ("in May
2023", "last week"). A multiplier, not a filter: a block without a date, or a question whose time
expression was read wrongly, still ranks by what it says."""
TIME_LIFT_MAX = 0.15
"""The most a named time lifts a block, as a share of the top candidate's relevance: the date
decides among blocks that bear on the question about as much, never for one that bears on it
much less. Long blocks' relevance is compressed (another conversation's sessions at 0.74-0.81 of
the top), and the bare multiplier lifted those over the answer; from 0.22 up the long-document
benchmark loses questions, and rank-fused relevance puts a block equal but for its date as low
as 0.875 of the top (docs/decisions/0010-time-lift.md)."""


@dataclass(frozen=True)
class SearchSettings:
    """Knobs of the first stages; the defaults are the ones measured on the dev benchmark."""

    seeds: int = 50
    coverage_min: float = COVERAGE_MIN
    """A lexical hit holding less of the question's word weight leaves the lexical ranking
    (``retrieval.coverage``); 0: every word match counts, as before."""
    coverage_power: float = COVERAGE_POWER
    """Rank fusion weighs each lexical hit by its coverage to this power
    (``retrieval.coverage.weights``); 0: every hit counts whole."""
    coverage_whole: float = COVERAGE_WHOLE
    """The coverage at which a lexical hit counts whole in rank fusion."""
    rrf_k: int = fusion.RRF_K
    fusion_weights: tuple[float, float] = fusion.FUSION_WEIGHTS
    """RRF weights of (lexical, dense) rankings."""
    fuse_by: str = "auto"
    """How the two rankings meet: ``rrf`` (ranks), ``score`` (scaled scores, ``score_share``), or
    ``auto``: scores when most of the lexical search's top hits are long documents, else RRF
    (``fusechoice``)."""
    score_share: float = fusion.LEXICAL_SHARE
    """Lexical share of score fusion (``fusion.score_fusion``)."""
    score_idf: str = "smooth"
    """IDF of score fusion's bm25: ``smooth`` or FTS5's own, ``fts`` (``fusechoice.IDF_KINDS``)."""
    dense_fill: bool = True
    """Score fusion gives a lexical hit the dense search did not return its own cosine, not 0
    (``fusechoice.filled_dense``). Rank fusion never uses it."""
    late_share: float = late.LATE_SHARE
    """Weight of late interaction in score fusion (``retrieval.late``); 0: off. Used only when
    the embedder exposes its tokens (the embedded static model)."""
    use_mmr: bool = True
    mmr_lambda: float = mmr.MMR_LAMBDA
    expand_from: int = 10
    """How many top seeds pull their 1-hop neighbours into the pool."""
    field_weights: FieldWeights = field(default_factory=FieldWeights)
    dense_floor: float | None = None
    """The relevance gate; None: ``DENSE_FLOOR`` on the configured model's scale."""
    twin_cosine: float | None = None
    """Near-twin cosine for diversity; None: the configured model's look-alike cut."""
    search_inbox: bool = True
    inherit: float = INHERIT
    time_boost: float = TIME_BOOST
    time_lift_max: float = TIME_LIFT_MAX
    today: date | None = None
    """Where "yesterday" or "last week" count from; None: today (UTC)."""
    dense_feedback: float = FEEDBACK
    """Weight of the first pass's top blocks in a second dense search (``dense_query``); 0: off."""
    dense_feedback_depth: int = FEEDBACK_DEPTH
    """How many of the first pass's best-ranked blocks that second search moves toward."""
    contiguity: float = contig.CONTIGUITY
    """Share of a top hit's relevance the candidates captured next to it inherit; 0: off."""
    contiguity_from: int = contig.CONTIGUITY_FROM
    contiguity_span: int = contig.CONTIGUITY_SPAN


def calibrated_settings(s: SearchSettings | None, cuts: Cuts) -> SearchSettings:
    """``s`` with the cosine knobs left unset filled in from a model's calibrated cuts."""
    s = s or SearchSettings()
    floor = cuts.scaled(DENSE_FLOOR) if s.dense_floor is None else s.dense_floor
    twin = cuts.lookalike if s.twin_cosine is None else s.twin_cosine
    return replace(s, dense_floor=floor, twin_cosine=twin)
