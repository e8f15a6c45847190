"""The API side of merging: ``MemorySystem`` inherits ``MergingOperations``."""

from __future__ import annotations

from elfmem.rhythms.core import Core
from elfmem.sharing import reconcile as reconcile_mod
from elfmem.sharing.reconcile import ReconcileResult


class MergingOperations:
    """Reconciliation after merges; the merge driver itself needs no open memory."""

    _core: Core

    async def reconcile(self, after_merge: bool = True) -> ReconcileResult:
        """One block per id across files and no bucket past its bound, in one commit.

        ``after_merge``: take the merge base of the tip (a merge commit's parents, or the
        rebase's starting point) as the base, so an unchanged copy yields to an edited one;
        False keeps every distinct version instead."""
        repo = self._core.store.repo
        base = reconcile_mod.merge_base_tree(repo) if after_merge else None
        return reconcile_mod.reconcile_memory(self._core, base)


def attach(core: Core) -> Core:
    """Have every sync of ``core`` first run the reconciliation check (``reconcile_if_needed``)."""
    core.before_sync = reconcile_mod.reconcile_if_needed
    return core
