"""The care half of ``MemorySystem``: the derived index, git hooks, the graph page and health.

A mixin keeps ``api.py`` a readable size; ``MemorySystem`` inherits these, so the CLI, the MCP
table and the guide see them as its own methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elfmem.progress import Progress

if TYPE_CHECKING:
    from elfmem.adapters.llm import LLM
    from elfmem.care import doctor as doctor_mod
    from elfmem.care import hooks as hooks_mod
    from elfmem.care import maintenance, secretaudit
    from elfmem.care.rescue import RescueResult
    from elfmem.care.status import StatusResult
    from elfmem.care.visualise import VisualiseResult
    from elfmem.retrieval.result import FrameResult
    from elfmem.rhythms.core import Core
    from elfmem.rhythms.results import BlockInfo, HistoryResult, LedgerResult, ListResult

# Each method imports what it runs: a command loads only its own layers (docs/startup.md).


class CareOperations:
    """Keeping a memory healthy: its index, its hooks, its picture and its checks."""

    if TYPE_CHECKING:
        _core: Core

        @property
        def llm(self) -> LLM | None: ...

        @property
        def root(self) -> Path: ...

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

    async def status(self) -> StatusResult:
        """Session, inbox depth, active blocks, Hebbian staging, health and a suggestion."""
        from elfmem.care import status as status_mod

        return status_mod.status(self._core)

    # ---- the index ------------------------------------------------------------------------------

    async def index_check(self) -> maintenance.CheckResult:
        """Parse every memory file; report errors with file:line. Touches nothing."""
        from elfmem.care import maintenance

        return maintenance.check(self._core)

    async def index_status(self) -> maintenance.IndexStatus:
        """Where the derived index stands: counts, the tree it is keyed to, size on disk."""
        from elfmem.care import maintenance

        return maintenance.status(self._core)

    async def index_rebuild(
        self, to: str | Path, progress: Progress | None = None
    ) -> maintenance.RebuildResult:
        """Rebuild an index from git at ``to`` (never the live one). Zero LLM calls.

        ``progress(stage, done, total)`` hears each file parsed and each batch embedded.
        """
        from elfmem.care import maintenance

        return maintenance.rebuild_to(self._core, Path(to), progress)

    async def index_update(self, progress: Progress | None = None) -> maintenance.UpdateResult:
        """Embed every block that lacks a vector from the configured model, with ``progress``:
        what a recall leaves to it after a change of model or a bulk import."""
        from elfmem.care import maintenance

        return maintenance.update(self._core, progress)

    async def index_parity(self, probes: int = 20) -> maintenance.ParityResult:
        """Compare retrieval in the live index with a throwaway rebuild. Read-only."""
        from elfmem.care import maintenance

        return maintenance.parity(self._core, probes)

    async def doctor_frames(self, query: str = "what matters right now") -> list[FrameResult]:
        """Render every frame; each result lists what it dropped and why."""
        from elfmem.rhythms import recall as recall_mod

        out = []
        for name, spec in recall_mod.frames(self._core).items():
            out.append(recall_mod.frame(self._core, name, None if spec.queryless else query))
        return out

    # ---- git hooks and the graph page -----------------------------------------------------------

    async def hooks_install(self) -> hooks_mod.HooksReport:
        """Install elfmem's git hooks where git looks for them, chaining any hook already there;
        also let plain ``git fetch`` bring the ledger into a remote-tracking notes ref."""
        from elfmem.care import hooks as hooks_mod
        from elfmem.sharing import driver as merge_driver
        from elfmem.sharing import plaingit

        merge_driver.register(self.root)
        report = hooks_mod.install(self.root)
        plaingit.setup(self._core.store.repo)
        return report

    async def hooks_uninstall(self) -> hooks_mod.HooksReport:
        """Remove elfmem's git hooks and put back the hooks they chained, byte for byte."""
        from elfmem.care import hooks as hooks_mod

        return hooks_mod.uninstall(self.root)

    async def hooks_status(self) -> hooks_mod.HooksReport:
        """Each git hook: ours, chained (ours, running an earlier hook first), foreign or
        missing."""
        from elfmem.care import hooks as hooks_mod

        return hooks_mod.status(self.root)

    async def check_staged(self, paths: Sequence[str] = ()) -> hooks_mod.StagedCheck:
        """Validate memory files as git's index holds them (``paths``, or those staged)."""
        from elfmem.care import hooks as hooks_mod

        return hooks_mod.check_staged(self.root, paths)

    async def hook_reindex(self) -> hooks_mod.ReindexResult:
        """Bring the index to the checked-out memory (after checkout, merge, rebase/amend)."""
        from elfmem.care import hooks as hooks_mod

        return hooks_mod.reindex(self._core)

    async def flush_ledger(self) -> hooks_mod.FlushResult:
        """Write spooled ledger events to refs/notes/elfmem now (before a push)."""
        from elfmem.care import hooks as hooks_mod

        return hooks_mod.flush(self._core)

    async def visualise(
        self, out: str | Path | None = None, include_archived: bool = False, max_nodes: int = 100
    ) -> VisualiseResult:
        """Write the memory graph as one self-contained HTML page (default
        <gitdir>/elfmem/graph.html)."""
        from elfmem.care import visualise as visualise_mod

        return visualise_mod.visualise(
            self._core, Path(out) if out is not None else None, include_archived, max_nodes
        )

    # ---- health -------------------------------------------------------------------------------

    async def doctor(self, resolve: bool = False) -> doctor_mod.DoctorResult:
        """Paths, config, git state, hooks, ledger, loose objects, index, embedder, keys; each
        problem with its fix.

        ``resolve`` makes one real LLM call to prove the key, endpoint and model work.
        """
        from elfmem.adapters.llm import key_env_for, resolve_check
        from elfmem.care import doctor as doctor_mod

        llm_cfg = self._core.config.llm
        key_env = key_env_for(llm_cfg)
        probe = None
        if resolve and llm_cfg.model:

            def probe() -> str:
                llm = self.llm
                return resolve_check(llm) if llm is not None else ""

        return doctor_mod.doctor(self._core, probe, key_env)

    async def rescue(self) -> RescueResult:
        """Say why nothing needs rescuing (the index moves with the git dir and heals itself)
        and run ``doctor``."""
        from elfmem.care import rescue as rescue_mod

        return rescue_mod.rescue(self._core)

    async def doctor_secrets(self) -> secretaudit.SecretAudit:
        """Credentials already in the memory's history and the notes, with how to purge them;
        reads only, never rewrites history."""
        from elfmem.care import secretaudit

        return secretaudit.audit(self._core)

    async def migrate_embeddings(self, progress: Progress | None = None) -> dict[str, Any]:
        """Re-embed every block with the configured model. An endpoint model needs this after a
        change; a local one (the embedded model, a model2vec folder) re-embeds by itself at the
        next read. ``progress(stage, done, total)`` hears each batch embedded."""
        from elfmem.care import maintenance

        report = maintenance.migrate_embeddings(self._core, progress)
        return {
            "embedded": report.embedded,
            "model": self._core.embedder.identity,
            "summary": f"Re-embedded {report.embedded} texts with {self._core.embedder.identity}.",
        }
