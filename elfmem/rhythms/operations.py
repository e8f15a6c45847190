"""The rhythms half of ``MemorySystem``: remember, recall, dream, outcome, connect and curate.

A mixin keeps ``api.py`` a readable size; ``MemorySystem`` inherits these, so the CLI, the MCP
table and the guide see them as its own methods. Each method imports the rhythm it runs, so a
command loads only its own layers (docs/startup.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from elfmem.encodable import checked

if TYPE_CHECKING:
    from elfmem.adapters.llm import LLM
    from elfmem.block.model import Block
    from elfmem.progress import Progress
    from elfmem.retrieval.result import FrameResult
    from elfmem.rhythms import dream as dream_mod
    from elfmem.rhythms import lookalikes as lookalikes_mod
    from elfmem.rhythms.capture import Capture
    from elfmem.rhythms.core import Core
    from elfmem.rhythms.curate import CurateResult
    from elfmem.rhythms.dream import DreamResult
    from elfmem.rhythms.feedback import OutcomeResult
    from elfmem.rhythms.graph import ConnectResult, ConnectSpec
    from elfmem.rhythms.results import BatchResult, ChangeResult, RememberResult, UndoResult


@checked  # text UTF-8 cannot encode is InvalidInput at the door, before any read or write
class RhythmOperations:
    """What the agent does with its memory: capture, recall, consolidation and feedback."""

    if TYPE_CHECKING:
        _core: Core
        llm: LLM | None

    # ---- the heartbeat ------------------------------------------------------------------------

    async def remember(
        self,
        content: str,
        cue: str = "",
        tags: Sequence[str] = (),
        category: str = "knowledge",
        pinned: bool = False,
        allow_secret: bool = False,
        when: str = "",
        supersedes: str | Sequence[str] = (),
    ) -> RememberResult:
        """Store one block in the inbox: one commit, milliseconds, no LLM. Always pass a cue.

        ``when`` is the date it was said or learned (``2023-05-08``, ``8 May 2023``,
        ``yesterday``…, or a period: ``8 May 2023 to 9 June 2023``): recall uses it for
        questions that ask when or name a time. ``supersedes`` names the block(s) this one
        corrects (ids or unique prefixes): the relation is written in the same commit, and
        recall ranks the correction above them until outcomes refute it."""
        from elfmem.rhythms import capture
        from elfmem.rhythms.capture import Capture

        targets = (supersedes,) if isinstance(supersedes, str) else tuple(supersedes)
        item = Capture(content, cue, tuple(tags), category, pinned, when, self._targets(targets))
        return capture.remember(self._core, item, allow_secret)

    def _targets(self, refs: Sequence[str]) -> tuple[str, ...]:
        named = [r for r in refs if r.strip()]
        if not named:
            return ()
        from elfmem.rhythms.ids import resolve_all

        return tuple(resolve_all(self._core, named))

    async def remember_many(
        self,
        items: Sequence[Mapping[str, Any] | Capture],
        allow_secret: bool = False,
        progress: Progress | None = None,
    ) -> BatchResult:
        """Store many blocks in ONE commit. Items are dicts with content, cue, tags, category
        and optionally pinned, when and supersedes (an id or a list of ids it corrects).

        ``progress(stage, done, total)`` hears each item as it is checked.
        """
        from elfmem.rhythms import capture
        from elfmem.rhythms.capture import Capture

        caps = [i for i in items if isinstance(i, Capture)]
        caps += capture.captures_from([i for i in items if not isinstance(i, Capture)])
        caps = [
            dataclasses.replace(c, supersedes=self._targets(c.supersedes)) if c.supersedes else c
            for c in caps
        ]
        return capture.remember_many(self._core, caps, allow_secret, progress)

    async def edit(
        self,
        block_id: str,
        content: str | None = None,
        cue: str | None = None,
        tags: Sequence[str] | None = None,
        allow_secret: bool = False,
    ) -> ChangeResult:
        """Correct a block's content, cue or tags; its id survives."""
        from elfmem.rhythms import capture
        from elfmem.rhythms.ids import resolve

        block_id = resolve(self._core, block_id)
        return capture.edit(self._core, block_id, content, cue, tags, allow_secret)

    async def forget(self, block_id: str) -> ChangeResult:
        """Archive a block (kept, not deleted; `undo` brings it back). Idempotent."""
        from elfmem.rhythms import capture
        from elfmem.rhythms.ids import resolve

        return capture.forget(self._core, resolve(self._core, block_id))

    async def undo(self, commit: str | None = None) -> UndoResult:
        """Revert the last elfmem commit (or ``commit``) with a new commit."""
        from elfmem.rhythms import undo as undo_mod

        return undo_mod.undo(self._core, commit)

    # ---- retrieval and consolidation ------------------------------------------------------------

    async def frame(
        self,
        name: str,
        query: str | None = None,
        *,
        top_k: int | None = None,
        at: str | None = None,
        reinforce: bool = True,
    ) -> FrameResult:
        """Rank and render a frame: ``self`` (queryless), ``attention``, ``task``, ``simulate``.

        ``at`` answers from the memory as it was at that commit (``HEAD~20``, a tag, an id).
        Returned blocks are reinforced unless ``reinforce=False``.
        """
        from elfmem.rhythms import recall as recall_mod

        return recall_mod.frame(self._core, name, query, top_k=top_k, at=at, reinforce=reinforce)

    async def recall(
        self,
        query: str,
        frame: str = "attention",
        *,
        top_k: int | None = None,
        at: str | None = None,
        reinforce: bool = True,
    ) -> FrameResult:
        """``frame(frame, query)`` with the query first: what the agent knows that bears on it."""
        from elfmem.rhythms import recall as recall_mod

        return recall_mod.frame(self._core, frame, query, top_k=top_k, at=at, reinforce=reinforce)

    async def dream(
        self,
        max_blocks: int | None = None,
        no_llm: bool = False,
        host_analyses: Mapping[str, Mapping[str, Any]] | None = None,
        progress: Progress | None = None,
        rescore: bool = False,
    ) -> DreamResult:
        """Consolidate the inbox: embed, drop duplicates, link similar blocks, promote; one commit.

        With an LLM each block gets one call (alignment, tags, summary, revision of an older
        look-alike). ``host_analyses`` supplies those judgements instead ({block_id: {...}}).
        With no LLM configured (or ``no_llm``) the deterministic path runs and says so.
        ``progress(stage, done, total)`` hears each block as it is consolidated.
        ``rescore`` adds deep sleep: aged active blocks are judged again against the current SELF
        (new ``analysis`` evidence, never overwriting); without an LLM only their edges refresh.
        """
        from elfmem.adapters.analysis import analyse
        from elfmem.adapters.usage import tokens_since, usage_of
        from elfmem.rhythms import dream as dream_mod

        if host_analyses is not None:
            host = dream_mod.host_judge(self._core, host_analyses)
            return dream_mod.dream(
                self._core,
                max_blocks,
                host,
                note="judged by the host agent",
                rescore=rescore,
                progress=progress,
            )
        llm = None if no_llm else self.llm
        if llm is None:
            note = (
                "" if no_llm else "no LLM configured: deterministic path (set llm.model to use one)"
            )
            return dream_mod.dream(
                self._core, max_blocks, None, note=note, rescore=rescore, progress=progress
            )
        self_text = self._core.store.read_self()
        before = usage_of(llm)

        def judge(block: Block, lookalikes: list[tuple[str, str]]) -> dream_mod.Judgement:
            a = analyse(llm, self_text, block.content, block.cue, lookalikes)
            return dream_mod.Judgement(
                a.alignment, a.tags, a.summary, a.revision_of, a.malformed, a.duplicate_of
            )

        result = dream_mod.dream(
            self._core,
            max_blocks,
            judge,
            note=f"judged by {llm.identity}",
            rescore=rescore,
            progress=progress,
        )
        return dataclasses.replace(result, tokens=tokens_since(llm, before))

    @property
    def should_dream(self) -> bool:
        """True when the inbox holds at least ``memory.inbox_threshold`` blocks."""
        from elfmem.rhythms import dream as dream_mod

        return dream_mod.should_dream(self._core)

    # ---- adaptive memory ----------------------------------------------------------------------

    @property
    def last_recall_block_ids(self) -> list[str]:
        """Ids the last frame/recall rendered, in rank order: what ``outcome`` usually scores."""
        return list(self._core.last_recall_block_ids)

    async def outcome(
        self,
        block_ids: Sequence[str],
        signal: float,
        weight: float = 1.0,
        source: str = "",
        allow_constitutional: bool = False,
    ) -> OutcomeResult:
        """Fold a 0..1 ground-truth signal into each block's confidence (Beta update)."""
        from elfmem.rhythms import feedback
        from elfmem.rhythms.ids import resolve_all

        block_ids = resolve_all(self._core, block_ids)
        return feedback.outcome(self._core, block_ids, signal, weight, source, allow_constitutional)

    async def record_use(self, block_ids: Sequence[str]) -> int:
        """The weaker signal: these blocks were relevant (not necessarily right)."""
        from elfmem.rhythms import recall as recall_mod
        from elfmem.rhythms.ids import resolve_all

        return recall_mod.record_use(self._core, resolve_all(self._core, block_ids))

    async def connect(self, source: str, target: str, relation: str = "related") -> ConnectResult:
        """Link two blocks: one of the six declared relations (committed) or ``related``."""
        from elfmem.rhythms import graph
        from elfmem.rhythms.graph import ConnectSpec
        from elfmem.rhythms.ids import resolve

        spec = ConnectSpec(resolve(self._core, source), resolve(self._core, target), relation)
        return graph.connect_many(self._core, [spec])

    async def connects(self, specs: Sequence[ConnectSpec]) -> ConnectResult:
        """Many links at once: declared ones in one commit."""
        from elfmem.rhythms import graph
        from elfmem.rhythms.ids import resolve_specs

        return graph.connect_many(self._core, resolve_specs(self._core, specs))

    async def disconnect(
        self, source: str, target: str, relation: str = "related"
    ) -> ConnectResult:
        """Remove a link (a declared line, or a ledger edge)."""
        from elfmem.rhythms import graph
        from elfmem.rhythms.graph import ConnectSpec
        from elfmem.rhythms.ids import resolve

        spec = ConnectSpec(resolve(self._core, source), resolve(self._core, target), relation)
        return graph.connect_many(self._core, [spec], add=False)

    async def connect_by_query(
        self, query_a: str, query_b: str, relation: str = "related", min_confidence: float = 0.70
    ) -> ConnectResult:
        """Link the best matches for two descriptions, if both match closely enough."""
        from elfmem.rhythms import graph

        return graph.connect_by_query(self._core, query_a, query_b, relation, min_confidence)

    async def lookalikes(self) -> lookalikes_mod.LookalikesResult:
        """Look-alike pairs dream linked and kept, not yet reviewed, with their differences."""
        from elfmem.rhythms import lookalikes as lookalikes_mod

        return lookalikes_mod.lookalikes(self._core)

    async def resolve_lookalike(
        self, block_id: str, other: str, action: str
    ) -> lookalikes_mod.ResolveResult:
        """Settle a look-alike pair in one undoable commit: ``keep`` both, ``block_id``
        ``supersede``s ``other``, or ``merge`` ``other`` into ``block_id``."""
        from elfmem.rhythms import lookalikes as lookalikes_mod

        return lookalikes_mod.resolve(self._core, block_id, other, action)

    async def curate(self, top_k: int | None = None) -> CurateResult:
        """Archive decayed or refuted blocks, prune weak edges, reinforce the top-K; one commit."""
        from elfmem.rhythms import curate as curate_mod

        return curate_mod.curate(self._core, top_k)
