"""From scored candidates to the final top k: tiers, corrections, diversity.

The order is built in three tiers: guaranteed blocks first (a frame's reserved slots), then every
relevant block that outcomes have not refuted, in diversity (MMR) order, then refuted blocks,
which appear only when fewer than k others bear on the query. A block that a holding correction
supersedes stays in the relevant tier, below its correction and marked. Once a correction is
claimed, the older block's confirmations from before it stop counting, whether or not the
correction holds, and its refutations do not (``truth.superseded_standing``), until outcomes
refute the correction (``truth.claim_refuted``). Two rival answers captured together are
ordered by outcomes once their records differ by two (``rivals``). ``truth`` says
how a score is made and which correction holds; this module only orders.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from elfmem.index.passagevecs import is_long
from elfmem.index.queries import BlockRow
from elfmem.retrieval import confirmed, mmr, rivals, signals, truth
from elfmem.retrieval.state import BlockState

TWIN_COSINE = 0.90
"""Cosine at which two blocks are near-twins (dream's look-alike cut): the newer is exempt from
the diversity penalty for resembling the older. The embedded model's value; recall passes the
configured model's calibrated look-alike cut (``index/calibration.py``)."""
INBOX = "inbox"
# Two long blocks (passage-indexed documents) never pay MMR's penalty for resembling each other:
# their whole-block vectors are means over dozens of passages, and any two sessions of the
# long-document benchmark sit at cosine 0.84-0.95 (10th-90th percentile; median 0.89 across
# conversations, 0.93 within one), so the penalty measured style, not repetition, and cost
# recall_all@5 0.007 there (docs/benchmarks.md, "Long documents").

Vectors = Callable[[Sequence[str]], Mapping[str, npt.NDArray[np.float32]]]


@dataclass(frozen=True, slots=True)
class Ranked:
    index: int
    """Position in the candidate rows."""
    score: float
    """What the block was ranked by within its tier (the MMR gain for relevant blocks)."""
    composite: float
    """Relevance × evidence × lift, after the revision rule: the score before diversity."""
    tier: str
    """guaranteed, relevant or refuted."""
    note: str = ""


def lift_in_time(
    rel: npt.NDArray[np.float64], inside: Sequence[bool], boost: float, most: float
) -> npt.NDArray[np.float64]:
    """Relevance with the blocks said in the named time lifted by ``boost``, by at most ``most``
    of the top candidate's relevance, then rescaled so the top keeps its value: a boost that
    lifts every candidate (or none) changes nothing, and MMR's balance of relevance against
    diversity stays where it was."""
    if not any(inside) or all(inside) or not rel.size:
        return rel
    top = float(rel.max())
    lift = np.minimum((boost - 1.0) * rel, most * top)
    lifted = rel + np.where(np.array(inside), lift, 0.0)
    new_top = float(lifted.max())
    return lifted * (top / new_top) if new_top > 0 else rel


def composite_scores(
    rows: Sequence[BlockRow],
    relevance: npt.NDArray[np.float64],
    raw: Mapping[str, npt.NDArray[np.float64]],
    states: Sequence[BlockState],
    weights: Mapping[str, float],
) -> npt.NDArray[np.float64]:
    """relevance × evidence factor × lift per candidate; an inbox block by relevance alone."""
    norm = signals.normalise_signals({k: v for k, v in raw.items() if k in truth.SECONDARY})
    out = np.zeros(len(rows), dtype=np.float64)
    for i, (row, state) in enumerate(zip(rows, states, strict=True)):
        if row.status == INBOX:
            out[i] = relevance[i]
            continue
        secondary = {name: float(norm[name][i]) for name in truth.SECONDARY}
        if not truth.earns_use(state):
            secondary["centrality"] = secondary["reinforcement"] = 0.0
        out[i] = relevance[i] * truth.evidence_factor(state) * truth.lift(secondary, weights)
    return out


def order(
    rows: Sequence[BlockRow],
    composite: npt.NDArray[np.float64],
    states: Sequence[BlockState],
    guaranteed: set[int],
    pairs: Sequence[tuple[str, str]],
    k: int,
    vectors: Vectors,
    *,
    use_mmr: bool = True,
    lam: float = mmr.MMR_LAMBDA,
    twin: float = TWIN_COSINE,
    relevance: Sequence[float] | None = None,
) -> list[Ranked]:
    """The top ``k`` in final order, guaranteed blocks always included; ``twin`` is the model's
    near-twin cosine. With ``relevance``, a confirmed block stands above an unjudged note on its
    subject that answers nothing (``confirmed.over_notes``)."""
    ids = [r.id for r in rows]
    placed = truth.place_revisions(ids, list(composite), states, pairs)
    score = placed.scores
    above = list(placed.above)
    rival = rivals.over_rivals(rows, states, placed.standing, placed.above, score, 4 * k)
    if rival:
        score, rival = rivals.placed(score, rival)
        above += rival
    if relevance is not None:
        over = confirmed.over_notes(rows, relevance, states, placed.above)
        score, over = confirmed.lifted(score, over)
        above += over
    notes = dict(placed.notes)
    for i, (row, state) in enumerate(zip(rows, states, strict=True)):
        if row.status == INBOX:
            notes.setdefault(i, "in the inbox: not yet consolidated")
        elif truth.is_refuted(state):
            notes.setdefault(i, "refuted by outcomes")
        elif truth.is_contested(state):
            notes.setdefault(i, "contested: refuted as often as confirmed")
    stale = [placed.standing.get(i, states[i]) for i in range(len(rows))]
    refuted = {
        i
        for i, (row, st) in enumerate(zip(rows, stale, strict=True))
        if row.status != INBOX and truth.is_refuted(st) and i not in guaranteed
    }
    first = sorted(guaranteed, key=lambda i: (-score[i], ids[i]))
    out = [Ranked(i, score[i], score[i], "guaranteed", notes.get(i, "")) for i in first]
    room = max(0, k - len(out))
    relevant = [i for i in range(len(rows)) if i not in guaranteed | refuted]
    contested = {i for i in relevant if truth.is_contested(stale[i])}
    standing = [i for i in relevant if i not in contested]
    winners = placed.winners
    picks = _diverse(rows, standing, score, room, vectors, use_mmr, lam, winners, twin)
    picks = winners_first(picks, above, set(standing))
    if contested:
        unrefuted = {i for i in standing if truth.is_unrefuted(stale[i])}
        picks = behind_unrefuted(picks, sorted(contested), unrefuted, score, room)
    for i, gain in picks:
        out.append(Ranked(i, gain, score[i], "relevant", notes.get(i, "")))
    room = max(0, k - len(out))
    for i in sorted(refuted, key=lambda i: (-score[i], ids[i]))[:room]:
        out.append(Ranked(i, score[i], score[i], "refuted", notes.get(i, "")))
    return out


def winners_first(
    picks: list[tuple[int, float]], above: Sequence[tuple[int, int]], candidates: set[int]
) -> list[tuple[int, float]]:
    """``picks`` with the winner of every revision pair ahead of its loser.

    Diversity weighs each pick against those before it, so it can reorder two blocks whose
    scores the revision rule set a hair apart, or leave the winner out. Then the winner takes
    the loser's place and the loser moves one down; a winner that was left out displaces the
    last pick. Gains stay with their positions, so they still never increase down the list.
    """
    order = [i for i, _ in picks]
    gains = [g for _, g in picks]
    for _ in range(len(above) + 1):
        moved = False
        for winner, loser in above:
            if loser not in order or winner not in candidates:
                continue
            at = order.index(loser)
            if winner in order:
                if order.index(winner) < at:
                    continue
                order.remove(winner)
            else:
                order.pop()
                at = min(at, len(order))
            order.insert(at, winner)
            moved = True
        if not moved:
            break
    return list(zip(order, gains, strict=True))


def behind_unrefuted(
    picks: list[tuple[int, float]],
    contested: Sequence[int],
    unrefuted: set[int],
    score: Sequence[float],
    k: int,
) -> list[tuple[int, float]]:
    """The top ``k`` with each contested block added below every unrefuted one.

    Below the last unrefuted pick a contested block takes its place by score among the picks
    that drew refutations too; past the top ``k`` it is left out, so it leaves the top ``k`` as
    soon as ``k`` other blocks bear on the query (``picks`` holds the best ``k`` of them), and
    whenever an unrefuted block (``unrefuted``: all of them among the candidates) is past it.
    Gains stay with their positions, so they still never increase down the list.
    """
    if not contested:
        return picks
    order = [i for i, _ in picks]
    if unrefuted - set(order):  # an unrefuted block past the top k: contested ones come later
        return picks
    gains = [g for _, g in picks]
    floor = max((at for at, i in enumerate(order) if i in unrefuted), default=-1) + 1
    for c in sorted(contested, key=lambda i: -score[i]):
        at = floor
        while at < len(order) and score[order[at]] >= score[c]:
            at += 1
        order.insert(at, c)
        gains.append(float(score[c]))
    gains.sort(reverse=True)
    return list(zip(order, gains, strict=True))[:k]


def _diverse(
    rows: Sequence[BlockRow],
    candidates: list[int],
    score: list[float],
    k: int,
    vectors: Vectors,
    use_mmr: bool,
    lam: float,
    winners: set[int],
    twin: float = TWIN_COSINE,
) -> list[tuple[int, float]]:
    """(row index, gain) for the top ``k`` of ``candidates``: MMR over the best few."""
    by_score = sorted(candidates, key=lambda i: (-score[i], rows[i].id))
    if k <= 0:
        return []
    if not use_mmr or len(by_score) <= 1:
        return [(i, float(score[i])) for i in by_score[:k]]
    head = by_score[: k * 4]
    vecs = vectors([rows[i].id for i in head])
    if len(vecs) < len(head):
        return [(i, float(score[i])) for i in by_score[:k]]
    matrix = np.stack([vecs[rows[i].id] for i in head]).astype(np.float64)
    sims = matrix @ matrix.T
    born = [_epoch(rows[i].created) for i in head]
    newer = np.array([[a > b for b in born] for a in born], dtype=bool)
    exempt = (sims >= twin) & newer
    for x, i in enumerate(head):
        if i in winners:  # a holding correction never pays for resembling what it corrects
            exempt[x, :] |= sims[x, :] >= twin
    long = np.array([is_long(rows[i].content) for i in head], dtype=bool)
    exempt |= np.outer(long, long)  # long pairs: see the note above Vectors
    picked = mmr.mmr_ranked([score[i] for i in head], sims, k, lam, exempt)
    return [(head[x], gain) for x, gain in picked]


def _epoch(created: str) -> float:
    try:
        return datetime.fromisoformat(created).timestamp()
    except ValueError:
        return 0.0
