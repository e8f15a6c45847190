"""The identity half of ``MemorySystem``: review, amendments and minds, as async one-liners.

A mixin keeps ``api.py`` a readable size; ``MemorySystem`` inherits these, so the CLI, the MCP
table and the guide see them as its own methods.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from elfmem.adapters.llm import LLM
    from elfmem.identity.amendments import AmendmentHistory, AmendResult
    from elfmem.identity.corpus import CorpusReview
    from elfmem.identity.minds import MindList, MindResult, MindStats
    from elfmem.identity.review import ReviewResult
    from elfmem.rhythms.core import Core
    from elfmem.rhythms.results import UndoResult


class IdentityOperations:
    """Identity changes only by deliberate review; minds are models kept honest by predictions."""

    if TYPE_CHECKING:
        _core: Core
        llm: LLM | None

    async def review_constitutional(
        self, no_llm: bool = False, host_analyses: Mapping[str, Any] | None = None
    ) -> ReviewResult:
        """Propose amendments where learning contradicts or leaves a principle bare; writes
        nothing. ``host_analyses`` ({block_id: {text, reason}}) supplies the proposal text."""
        from elfmem.adapters.usage import tokens_since, usage_of
        from elfmem.identity import review

        llm = None if no_llm or host_analyses is not None else self.llm
        if llm is None:
            return review.review(self._core, llm, host_analyses)
        before = usage_of(llm)
        result = review.review(self._core, llm, host_analyses)
        return dataclasses.replace(result, tokens=tokens_since(llm, before))

    async def review_corpus(self, apply: bool = False) -> CorpusReview:
        """Stale active blocks with archive or re-check proposals; ``apply`` archives (one
        commit)."""
        from elfmem.identity import corpus

        return corpus.review_corpus(self._core, apply)

    async def accept_amendment(
        self,
        content: str,
        block_id: str | None = None,
        proposal: str | None = None,
        reason: str = "",
    ) -> AmendResult:
        """Rewrite one constitutional block as one ``amend`` commit naming the proposal."""
        from elfmem.identity import amendments

        return amendments.accept(self._core, content, block_id, proposal, reason)

    async def list_amendments(self, limit: int = 20) -> AmendmentHistory:
        """Amendments, their reverts and hand edits of self.md, newest first, from git."""
        from elfmem.identity import amendments

        return amendments.history(self._core, limit)

    async def revert_amendment(self) -> UndoResult:
        """Undo the newest standing amendment with a new commit."""
        from elfmem.identity import amendments

        return amendments.revert(self._core)

    async def mind_create(self, name: str, content: str, cue: str = "") -> MindResult:
        """A mind block (tag ``mind/<name>``) modelling another agent, person or system."""
        from elfmem.identity import minds

        return minds.create(self._core, name, content, cue)

    async def mind_predict(self, mind: str, content: str, cue: str = "") -> MindResult:
        """A falsifiable prediction from a mind (by name or id), linked ``derived-from`` it."""
        from elfmem.identity import minds

        return minds.predict(self._core, mind, content, cue)

    async def mind_outcome(self, prediction_id: str, hit: bool, note: str = "") -> MindResult:
        """Close a prediction as hit or miss; the mind's Beta confidence moves with it."""
        from elfmem.identity import minds

        return minds.outcome(self._core, prediction_id, hit, note)

    async def mind_list(self) -> MindList:
        """Every active mind with hits, misses, open predictions and confidence."""
        from elfmem.identity import minds

        return minds.list_minds(self._core)

    async def mind_show(self, mind: str) -> MindStats:
        """One mind (by name or id) with all its predictions."""
        from elfmem.identity import minds

        return minds.show(self._core, mind)
