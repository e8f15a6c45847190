"""``MemorySystem``: the one facade. Async, as the seed specifies, over one synchronous core.

Every interface (CLI, MCP server, git hooks) calls these methods and renders their results; no
behaviour lives anywhere else. Each method imports the layer it runs, and the result types are
imported for type checking only, so a command loads what it uses and nothing else: hooks and
scripts start elfmem all day (docs/startup.md).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elfmem.care.operations import CareOperations
from elfmem.config import ElfmemConfig
from elfmem.encodable import checked
from elfmem.identity.operations import IdentityOperations
from elfmem.index.damage import healing
from elfmem.sharing.archiving import ArchiveOperations
from elfmem.sharing.exchanging import ExchangeOperations
from elfmem.sharing.merging import MergingOperations
from elfmem.sharing.operations import SyncOperations

if TYPE_CHECKING:
    from elfmem.adapters.llm import LLM
    from elfmem.block.model import Block
    from elfmem.care.status import StatusResult
    from elfmem.clock import Clock
    from elfmem.identity.setup import InitResult
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
    from elfmem.rhythms.results import (
        BatchResult,
        BlockInfo,
        ChangeResult,
        HistoryResult,
        LedgerResult,
        ListResult,
        RememberResult,
        UndoResult,
    )
    from elfmem.store import Store


READS = (
    *("ls", "inbox", "show", "block_history", "ledger", "history", "frame", "recall", "status"),
    *("index_check", "index_status", "index_parity", "doctor_frames", "doctor", "visualise"),
    *("rescue", "migrate_status", "migrate_plan"),
)
"""Methods that only read the memory: safe to run again after the index heals."""

ConfigLike = ElfmemConfig | str | Path | Mapping[str, Any] | None


def _resolve_config(store: Store, config: ConfigLike) -> ElfmemConfig:
    from elfmem import config as config_mod

    if isinstance(config, ElfmemConfig):
        return config
    if isinstance(config, Mapping):
        return config_mod.from_mapping(config)
    if isinstance(config, (str, Path)):
        return config_mod.load(Path(config))
    return _stored_config(store) or ElfmemConfig()


def _stored_config(store: Store) -> ElfmemConfig | None:
    """The memory's own ``.elfmem/config.yaml``: on disk in a work tree, else (a bare
    repository, or ref mode) as the memory ref's tip commits it; None when there is none."""
    from elfmem import config as config_mod
    from elfmem.config import CONFIG_PATH

    if store.memory_workdir is not None:
        path = store.memory_workdir / CONFIG_PATH
        return config_mod.load(path) if path.exists() else None
    data = store.committed_file(CONFIG_PATH)
    if data is None:
        return None
    return config_mod.loads(data.decode("utf-8", "replace"), f"HEAD:{CONFIG_PATH}")


@checked  # text UTF-8 cannot encode is InvalidInput at the door, before any read or write
@healing(lambda system: system._core.db(), READS)  # a damaged index page heals, then reads again
class MemorySystem(
    IdentityOperations,
    CareOperations,
    MergingOperations,
    SyncOperations,
    ArchiveOperations,
    ExchangeOperations,
):
    """An agent's memory in a git repository. Open with ``from_config`` (or ``managed``)."""

    def __init__(self, core: Core) -> None:

        self._core = core
        self._llm: LLM | None = None
        self._llm_resolved = False

    @property
    def llm(self) -> LLM | None:
        """The configured model (None when ``llm.model`` is empty); built on first use."""
        from elfmem.adapters.llm import make_llm

        if not self._llm_resolved:
            self._llm = make_llm(self._core.config.llm, self._core.store.root)
            self._llm_resolved = True
        return self._llm

    @llm.setter
    def llm(self, value: LLM | None) -> None:
        """Use this model instead (a ``ScriptedLLM`` in tests, any object with ``complete``)."""
        self._llm = value
        self._llm_resolved = True

    # ---- opening ------------------------------------------------------------------------------

    @classmethod
    async def from_config(
        cls,
        path: str | Path | None = None,
        config: ConfigLike = None,
        *,
        clock: Clock | None = None,
        new_id: Callable[[], str] | None = None,
    ) -> MemorySystem:
        """Open the memory in the repository containing ``path`` (default: the current directory).

        ``config`` may be an ElfmemConfig, a YAML path, a dict, or None to read
        ``.elfmem/config.yaml`` from the repository. ``clock`` (default: the wall clock) is what
        decay, sessions and stamps read, and ``new_id`` makes block ids (default: random); a
        simulation passes both to make a run repeatable (elfmem/clock.py).
        """
        from elfmem.adapters.embedding import make_embedder
        from elfmem.rhythms.core import Core
        from elfmem.sharing import plaingit
        from elfmem.sharing.backup import adopt_origin_notes
        from elfmem.sharing.merging import attach
        from elfmem.store import Store

        store = Store.open(Path(path) if path else None, "elf")
        plaingit.on_open(store)  # adopt a cloned memory ref, merge notes plain git fetched
        cfg = _resolve_config(store, config)
        store = Store(store.repo, cfg.project.agent_name)
        core = attach(Core(store, cfg, make_embedder(cfg.embeddings), clock, new_id))
        adopt_origin_notes(core)  # a clone of a backup bundle: its ledger comes in here
        branch = store.memory_elsewhere()
        if branch is not None:  # an empty clone: said on every command, before anyone inits
            core.warnings[
                f"this checkout holds no memory, but branch {branch} does: run "
                f"`git switch {branch}` (not `elfmem init`, which would start a second memory)"
            ] = None
        advice = store.pull_advice()
        if advice is not None:  # a pull stopped on memory files: said on every command
            core.warnings[advice] = None
        return cls(core)

    @classmethod
    async def from_env(cls, path: str | Path | None = None) -> MemorySystem:
        """Configuration from ``ELFMEM_<SECTION>__<KEY>`` variables; ``ELFMEM_PATH`` names the
        repo."""
        from elfmem import config as config_mod

        cfg = config_mod.from_env()
        return await cls.from_config(path or os.environ.get("ELFMEM_PATH"), cfg)

    @classmethod
    @asynccontextmanager
    async def managed(
        cls, path: str | Path | None = None, config: ConfigLike = None
    ) -> AsyncIterator[MemorySystem]:
        """Open, start a session, yield, end the session and close: right for scripts."""
        system = await cls.from_config(path, config)
        try:
            async with system.session():
                yield system
        finally:
            await system.close()

    @classmethod
    async def init(
        cls,
        path: str | Path | None = None,
        *,
        name: str | None = None,
        seed: bool = False,
        self_text: str | None = None,
        template: str | None = None,
        ref: str | None = None,
        clock: Clock | None = None,
        new_id: Callable[[], str] | None = None,
    ) -> tuple[MemorySystem, InitResult]:
        """Scaffold a memory (creating the repository if there is none) or refresh one.

        ``ref`` puts memory on its own ref (e.g. ``elfmem`` → refs/heads/elfmem) instead of the
        checked-out branch; on an existing branch-mode memory it moves it there. ``clock`` and
        ``new_id`` are as for ``from_config``."""
        from elfmem.adapters.embedding import make_embedder
        from elfmem.identity import setup
        from elfmem.rhythms.core import Core
        from elfmem.sharing import driver as merge_driver
        from elfmem.sharing import mode as mode_mod
        from elfmem.sharing import plaingit
        from elfmem.sharing.merging import attach
        from elfmem.store import Store

        root = Path(path or Path.cwd()).resolve()
        store, created = Store.open_or_init(root, name or "elf")
        plaingit.on_open(store)
        if ref is not None:
            boot = Store(store.repo, name or "elf")
            cfg0, _ = setup.config_for(_stored_config(boot), name)
            mode_mod.to_ref(Core(boot, cfg0, make_embedder(cfg0.embeddings)), ref)
        existing = _stored_config(store)
        cfg, write_config = setup.config_for(existing, name)
        old_name = existing.project.agent_name if existing is not None else None
        renamed_from = old_name if name and old_name and old_name != name else None
        store = Store(store.repo, cfg.project.agent_name)
        core = Core(store, cfg, make_embedder(cfg.embeddings), clock, new_id)
        result = setup.init(
            core,
            created,
            write_config=write_config,
            seed=seed,
            self_text=self_text,
            template=template,
            renamed_from=renamed_from,
        )
        merge_driver.register(core.store.root, attributes=False)
        plaingit.setup(store.repo)
        return cls(attach(core)), result

    async def setup(
        self, name: str | None = None, seed: bool = False, template: str | None = None
    ) -> InitResult:
        """State-aware setup of the memory this system has open (``init`` on its repository).

        Idempotent: on an established memory it only refreshes — a new ``name``, the seed or a
        template's blocks for roles no live block fills yet. The system then carries on with the
        refreshed config, in a new session if one was open; its model stays as it was set."""
        had_session = self._core.ledger.open_session is not None
        fresh, result = await MemorySystem.init(self.root, name=name, seed=seed, template=template)
        await self.end_session()
        self._core.close()
        self._core = fresh._core
        if had_session:
            await self.begin_session()
        return result

    @staticmethod
    def templates() -> dict[str, str]:
        """Profession templates for ``init --template``: name → description."""
        from elfmem.identity.templates import TEMPLATES

        return {name: desc for name, (desc, _) in TEMPLATES.items()}

    @property
    def config(self) -> ElfmemConfig:
        return self._core.config

    @property
    def root(self) -> Path:
        return self._core.store.root

    # ---- sessions -----------------------------------------------------------------------------

    @asynccontextmanager
    async def session(self) -> AsyncIterator[MemorySystem]:
        """Decay advances only inside sessions; nested calls join the open one."""
        if self._core.ledger.open_session is not None:
            yield self
            return
        await self.begin_session()
        try:
            yield self
        finally:
            await self.end_session()

    async def begin_session(self) -> str:
        """Start the decay clock (a no-op returning the open id if one is running)."""
        from elfmem.rhythms import sessions

        if self._core.ledger.open_session is None:
            return sessions.begin(self._core)
        return self._core.ledger.open_session[0]

    async def end_session(self) -> None:
        """Stop the decay clock and flush the ledger spool."""
        from elfmem.rhythms import sessions

        sessions.end(self._core)

    async def close(self) -> None:
        """End any open session and flush the ledger spool."""
        await self.end_session()
        self._core.close()

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

    def take_warnings(self) -> list[str]:
        """Problems in memory files seen since the last call (``file:line: what``, each once):
        a conflicted or unparsable bucket whose readable blocks were served, a block id in two
        files. Interfaces show them once per command (the CLI on stderr and as ``warnings``)."""
        taken = list(self._core.warnings)
        self._core.warnings.clear()
        return taken

    # ---- reading ------------------------------------------------------------------------------

    async def ls(
        self,
        tag: str | None = None,
        category: str | None = None,
        status: str | None = None,
        limit: int | None = None,
    ) -> ListResult:
        """Deterministic, unscored listing. ``tag`` is a pattern like ``self/%``."""
        from elfmem.care import inspect

        return inspect.ls(self._core, tag, category, status, limit)

    async def inbox(self) -> ListResult:
        """Blocks captured but not yet consolidated, oldest first."""
        from elfmem.care import inspect

        return inspect.inbox(self._core)

    async def show(self, block_id: str) -> BlockInfo:
        """One block in full."""
        from elfmem.care import inspect
        from elfmem.rhythms.ids import resolve

        return inspect.show(self._core, resolve(self._core, block_id))

    async def block_history(self, block_id: str) -> HistoryResult:
        """The commits that touched a block, newest first."""
        from elfmem.care import inspect
        from elfmem.rhythms.ids import resolve

        return inspect.history(self._core, resolve(self._core, block_id))

    async def ledger(self, block_id: str) -> LedgerResult:
        """A block's ledger events (its git note)."""
        from elfmem.care import inspect
        from elfmem.rhythms.ids import resolve

        return inspect.ledger(self._core, resolve(self._core, block_id))

    async def history(self, limit: int = 20) -> list[dict[str, Any]]:
        """The most recent elfmem operations, newest first."""
        return [c.to_dict() for c in self._core.store.recent(limit)]

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

    async def status(self) -> StatusResult:
        """Session, inbox depth, active blocks, Hebbian staging, health and a suggestion."""
        from elfmem.care import status as status_mod

        return status_mod.status(self._core)

    async def guide(self, operation: str | None = None) -> str:
        """How to use an operation (or all of them); never raises."""
        from elfmem import guide as guide_mod

        return guide_mod.guide(operation)
