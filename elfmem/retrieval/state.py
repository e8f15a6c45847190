"""What the ledger knows about a block, in the units the signals need.

The retrieval maths never read the ledger themselves: the caller folds it and passes one
``BlockState`` per candidate. A block the ledger has never heard of gets the prior.
"""

from __future__ import annotations

from dataclasses import dataclass

from elfmem.retrieval.confidence import JEFFREYS_PRIOR


@dataclass(frozen=True, slots=True)
class BlockState:
    alpha: float = JEFFREYS_PRIOR[0]
    beta: float = JEFFREYS_PRIOR[1]
    reinforcements: int = 0
    hours_since_use: float = 0.0
    """Active (session) hours since the block was last used, or since it was born."""
    lam: float = 0.01
    """Effective decay rate: the tier's λ, doubled per penalty, capped."""
    degree: float = 0.0
    """Weighted degree in the graph (declared relations and learned edges)."""
    revises: tuple[str, ...] = ()
    """Blocks this one is a candidate revision of: learned ``revises`` edges and declared
    ``supersedes`` relations (see docs/ledger.md, "Candidate revisions")."""
    revised_by: tuple[str, ...] = ()
    """Blocks that revise this one."""
    since_revision: tuple[tuple[str, tuple[float, float]], ...] = ()
    """(newer block, (confirming, refuting)): the outcome weight given to this block since that
    newer block claimed to correct it, the evidence that still counts for it against that
    correction: since its learned ``revises`` edge, or for a declared ``supersedes`` since the
    newer block's ``created`` second. Absent when the claim has no time."""

    @property
    def confirmed(self) -> float:
        """Confirming outcome weight: α past the prior."""
        return self.alpha - JEFFREYS_PRIOR[0]

    @property
    def refuted(self) -> float:
        """Refuting outcome weight: β past the prior."""
        return self.beta - JEFFREYS_PRIOR[1]


PRIOR = BlockState()
