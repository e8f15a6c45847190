"""The edges dream writes for a look-alike pair: ``similar`` for review, ``revises`` for a
candidate revision.

A look-alike is a block at or above the model's look-alike cut (0.90 on the reference scale,
0.970 for the embedded model: ``index/calibration.py``) to one already kept that does not carry
the same information (``block/facts.py``). Both stay; the newer one's note gets a ``similar``
edge naming the differences. When the pair is about the same subject and only a value differs
(a number, unit, version, date, negation, antonym or state), the newer block also gets a
``revises`` edge to the older: the ledger form of "B is a candidate revision of A"
(docs/ledger.md). With an LLM the judgement decides instead, so no ``revises`` edge is guessed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from elfmem.block.facts import compare, keys, replaced_stretches
from elfmem.block.model import Block
from elfmem.index.calibration import LOOKALIKE_FLOOR, REVISION_FLOOR, Cuts, model_cuts
from elfmem.rhythms.core import Core

LOOKALIKE_COSINE = LOOKALIKE_FLOOR
"""A block this close to one already kept is a look-alike: linked (``similar``) for review.
The cut on the reference scale; the configured model's is calibrated (``lookalike_cuts``)."""
REVISION_COSINE = REVISION_FLOOR
"""Down to this cosine a pair that passes the strict textual test of a revision (the same
subject, one value replaced: ``Comparison.revision_like``) is linked too. A correction usually
adds words ("now", "since the March upgrade") that pull its vector away from what it corrects;
the textual test, not the cosine, is what makes the pair a candidate revision."""


def lookalike_cuts(core: Core) -> Cuts:
    """The configured embedding model's cuts: 0.90 and 0.80 on the reference scale, 0.970 and
    0.941 for the embedded model, whose unrelated statements sit close (index/calibration.py)."""
    return model_cuts(core.embedder)


def revision_like(a: str, b: str) -> bool:
    """``compare(a, b).revision_like``, refusing cheaply first: a revision replaces at most one
    stretch of words, and counting replaced stretches needs only the alignment, not the kinds of
    every difference (naming kinds is most of ``compare``'s cost, and dream asks this of every
    near pair)."""
    ka, kb = keys(a), keys(b)  # the cached words: most pairs are refused before tokens
    if ka == kb:
        return False
    if replaced_stretches(ka, kb) > 1:
        return False
    return compare(a, b).revision_like


def lookalike_pair(
    block: Block, other: Block, cos: float, *, revises: tuple[str, str] | None = None
) -> dict[str, object]:
    """A look-alike pair, its differences named (older text on the left), and, on the
    deterministic path, ``revises``: (newer, older) when one is a candidate revision of the
    other (``rhythms/revisions.py``)."""
    newer, older = (block, other) if block.created >= other.created else (other, block)
    if revises is not None:
        newer, older = (block, other) if revises[0] == block.id else (other, block)
    found = compare(older.content, newer.content)
    pair: dict[str, object] = {
        "id": block.id,
        "other": other.id,
        "cosine": round(cos, 4),
        "differs": [d.as_dict() for d in found.differences],
    }
    if revises is not None:
        pair["revises"] = {"newer": newer.id, "older": older.id}
    return pair


def lookalike_lines(
    core: Core, pairs: Sequence[Mapping[str, object]], commit_id: str | None
) -> dict[str, list[str]]:
    """A ``similar`` edge per look-alike pair, differences named, and for a candidate revision a
    ``revises`` edge on the newer block with ``revised_by`` on the older, so a query meets the
    pair from either end. All carry the run's commit: ``undo`` cancels them."""
    stamp = {"commit": commit_id} if commit_id else {}
    lines: dict[str, list[str]] = {}
    for pair in pairs:
        block_id, other = str(pair["id"]), str(pair["other"])
        if pair.get("similar", True):
            lines.setdefault(block_id, []).append(
                core.event(
                    "edge",
                    block_id,
                    target=other,
                    relation="similar",
                    weight=pair["cosine"],
                    source="similar",
                    differs=pair["differs"],
                    **stamp,
                )
            )
        revises = pair.get("revises")
        if isinstance(revises, dict):
            newer = str(revises["newer"])
            lines.setdefault(newer, []).append(
                core.event(
                    "edge",
                    newer,
                    target=revises["older"],
                    relation="revises",
                    weight=pair["cosine"],
                    source="dream",
                    differs=pair["differs"],
                    **stamp,
                )
            )
            older = str(revises["older"])  # the same edge seen from the block it revises
            lines.setdefault(older, []).append(
                core.event(
                    "edge",
                    older,
                    target=newer,
                    relation="revised_by",
                    weight=pair["cosine"],
                    source="dream",
                    **stamp,
                )
            )
    return lines
