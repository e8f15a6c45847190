"""The sharing half of ``MemorySystem``: sync through a remote and where memory lives.

A mixin keeps ``api.py`` a readable size; ``MemorySystem`` inherits these, so the CLI, the MCP
table and the guide see them as its own methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from elfmem.progress import silent

if TYPE_CHECKING:
    from elfmem.progress import Progress
    from elfmem.rhythms.core import Core
    from elfmem.sharing import plaingit
    from elfmem.sharing.mode import ModeResult
    from elfmem.sharing.sync import SyncResult


class SyncOperations:
    """Memory travels through ordinary git remotes; these are its verbs."""

    if TYPE_CHECKING:
        _core: Core

    async def sync(self, remote: str | None = None, progress: Progress = silent) -> SyncResult:
        """Fetch, merge and push memory through ``remote`` (default: origin or the only one).

        Ref mode: the memory ref and the notes. Branch mode: the notes only (memory files
        travel with your own git pull/push). Never forced; retried while the remote moves."""
        from elfmem.sharing.sync import sync as sync_run

        return sync_run(self._core, remote, progress)

    async def mode(self, where: str | None = None, ref: str | None = None) -> ModeResult:
        """Where memory lives: ``None`` reports; ``"ref"`` moves it onto its own ref (``ref``,
        default refs/heads/elfmem); ``"branch"`` moves it back onto the checked-out branch."""
        from elfmem.sharing import mode as mode_mod

        if where is None:
            return mode_mod.current(self._core)
        if where == "ref":
            return mode_mod.to_ref(self._core, ref)
        if where == "branch":
            return mode_mod.to_branch(self._core)
        from elfmem.errors import InvalidInput

        raise InvalidInput(f"unknown mode {where!r}.", "Use `ref` or `branch`.")

    async def hook_pre_push(self, remote: str, lines: Sequence[str] = ()) -> plaingit.PrePush:
        """The pre-push hook's part: flush the ledger and note what the push sends (git's
        pre-push input lines); the notes go once the remote took it. Never fails."""
        from elfmem.sharing import plaingit

        return plaingit.pre_push(self._core.store, remote, lines)

    async def hook_after_push(self, lines: Sequence[str]) -> plaingit.PrePush:
        """The reference-transaction hook's part: when a pending push moved a remote-tracking
        ref (git's input lines ``<old> <new> <ref>``), push the notes there. Never fails."""
        from elfmem.sharing import plaingit

        return plaingit.after_push(self._core.store, lines)
