"""The edges dream writes for a look-alike pair: ``similar`` for review, ``revises`` for a
candidate revision.

A look-alike is a block at or above the model's look-alike cut (0.90 on the reference scale,
0.970 for the embedded model: ``index/calibration.py``) to one already kept that does not carry
the same information (``block/facts.py``). Both stay; the newer one's note gets a ``similar``
edge naming the differences. When the newer block states the older one's subject with another
value of any kind (``rhythms/revisions.py``), it also gets a ``revises`` edge to the older,
however far below the look-alike cut: the ledger form of "B is a candidate revision of A"
(docs/ledger.md). With an LLM the judgement decides instead, so no ``revises`` edge is guessed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from elfmem.block.facts import compare
from elfmem.block.model import Block
from elfmem.index.calibration import LOOKALIKE_FLOOR, REVISION_FLOOR, Cuts, model_cuts
from elfmem.rhythms.core import Core

LOOKALIKE_COSINE = LOOKALIKE_FLOOR
"""A block this close to one already kept is a look-alike: linked (``similar``) for review.
The cut on the reference scale; the configured model's is calibrated (``lookalike_cuts``)."""
REVISION_COSINE = REVISION_FLOOR
"""Down to this cosine a candidate revision also gets a ``similar`` edge; below it, only the
``revises`` edge (a correction in plain words sits far from what it corrects)."""


def lookalike_cuts(core: Core) -> Cuts:
    """The configured embedding model's cuts: 0.90 and 0.80 on the reference scale, 0.970 and
    0.941 for the embedded model, whose unrelated statements sit close (index/calibration.py)."""
    return model_cuts(core.embedder)


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
