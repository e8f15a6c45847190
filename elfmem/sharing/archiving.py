"""The archive part of ``MemorySystem``: backup, restore, migrate and the upstream import.

A mixin keeps ``api.py`` a readable size; ``MemorySystem`` inherits these, so the CLI, the MCP
table and the guide see them as its own methods.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from elfmem.progress import Progress
    from elfmem.rhythms.core import Core
    from elfmem.sharing.backup import BackupResult, RestoreResult
    from elfmem.sharing.migrate import MigrateResult
    from elfmem.sharing.upstream import UpstreamImportResult


class ArchiveOperations:
    """Whole memories moved between files, formats and systems; each write one commit."""

    if TYPE_CHECKING:
        _core: Core

    async def backup(self, path: str | Path) -> BackupResult:
        """Write a ``git bundle`` of the memory's branch and its ledger to ``path``."""
        from elfmem.sharing import backup as backup_mod

        return backup_mod.backup(self._core, Path(path))

    @staticmethod
    async def restore(source: str | Path, target: str | Path | None = None) -> RestoreResult:
        """Clone a backup bundle into a new folder, ledger included; needs no open memory."""
        from elfmem.sharing import backup as backup_mod

        return backup_mod.restore(Path(source), Path(target) if target is not None else None)

    async def migrate_status(self) -> MigrateResult:
        """The memory's format version and the steps pending; reads only."""
        from elfmem.sharing import migrate as migrate_mod

        return migrate_mod.status(self._core)

    async def migrate_plan(self) -> MigrateResult:
        """Every pending step with the files it writes or deletes and their hashes; reads only."""
        from elfmem.sharing import migrate as migrate_mod

        return migrate_mod.status(self._core)

    async def migrate_apply(self) -> MigrateResult:
        """Apply every pending step as one ``migrate`` commit (``undo`` reverts it)."""
        from elfmem.sharing import migrate as migrate_mod

        return migrate_mod.apply(self._core)

    async def import_upstream(
        self, path: str | Path, progress: Progress | None = None
    ) -> UpstreamImportResult:
        """Bring a memory made by upstream elfmem 0.20 (its project folder or database) in as
        one ``import`` commit: ids, cues, tags, links, edges and confidence kept. Idempotent."""
        from elfmem.sharing import upstream as upstream_mod

        return upstream_mod.import_upstream(self._core, Path(path), progress)
