"""The one synchronous core every interface goes through: store + index + embedder + config.

``MemorySystem`` (api.py) is a thin async face over this; the CLI and MCP server are thin faces
over that. Derived state is brought up to date here, lazily, on the first read that needs it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elfmem.block.model import new_block_id
from elfmem.clock import WALL, Clock, iso_micros
from elfmem.config import ElfmemConfig
from elfmem.index import IndexDB, SyncReport, VectorModel, find_by_hash, open_index, sync
from elfmem.index.embedding import backlog, reembeds_itself
from elfmem.progress import Progress, silent
from elfmem.rhythms import staging
from elfmem.rhythms.adaptive import LedgerView
from elfmem.store import Store, anchor_for_block
from elfmem.store.ledger import encode, make_event

if TYPE_CHECKING:  # the index writers load with the first write (docs/startup.md)
    from elfmem.index import WrittenFile
    from elfmem.store import WriteResult

DEFERRED_WRITES = 32
"""Remembers whose index update may wait; the next read, or the 32nd, applies them at once."""

LIVE = ("inbox", "active")
"""The statuses of blocks still in use; ``archive/`` holds the rest."""
STATUSES = (*LIVE, "archived")


@dataclass(slots=True)
class _Deferred:
    """Remembers this process committed but has not indexed yet, merged file by file."""

    parent: str | None
    """The memory tree the first of them was built on."""
    tree: str
    """The memory tree the last of them made."""
    files: dict[str, bytes | WrittenFile | None] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)
    """Content hash → id of every block they added, for the duplicate check."""
    count: int = 0


def _written_files(result: WriteResult) -> dict[str, bytes | WrittenFile | None]:
    """The files a commit wrote, as the index takes them: parsed where the writer parsed them."""
    from elfmem.index import WrittenFile

    files: dict[str, bytes | WrittenFile | None] = dict(result.blobs)
    files.update({path: WrittenFile(oid, blocks) for path, (oid, blocks) in result.parsed.items()})
    return files


EMBED_IN_RECALL = 256
"""Blocks a recall embeds itself before it answers: about a second of the embedded transformer
on two cores. Past it the rest waits for ``dream`` or ``index update``
(``Core.sync_for_recall``)."""


class Core:
    """Everything one open memory needs, opened once per process and reused."""

    def __init__(
        self,
        store: Store,
        config: ElfmemConfig,
        embedder: VectorModel,
        clock: Clock | None = None,
        new_id: Callable[[], str] | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.embedder = embedder
        self.clock: Clock = clock or WALL
        """What decay, sessions, ``created`` stamps and event times read (elfmem/clock.py)."""
        self.new_id: Callable[[], str] = new_id or new_block_id
        """Where new block ids come from: random by default; a simulation may fix them."""
        self._db: IndexDB | None = None
        self._deferred: _Deferred | None = None
        self.last_sync: SyncReport | None = None
        self.ledger = LedgerView(store, clock=self.clock)
        self._started = int(self.clock.time())
        self.last_recall_block_ids: list[str] = []
        self.staged_pairs: dict[str, set[tuple[str, str]]] = {}
        """Co-retrieval pairs already staged, per session: a pair counts once per session."""
        self.before_sync: Callable[[Core], object] | None = None
        """Run before each sync (the API sets the reconciliation check after a merge)."""
        self.progress: Progress = silent
        """Hears long work a read starts by itself (re-embedding after a change of model)."""
        self.warnings: dict[str, None] = {}
        """Every file problem a sync reported (file:line each), in order, once: what a command
        warns about (a conflicted or damaged bucket, a block id in two files)."""

    @property
    def agent(self) -> str:
        return self.config.project.agent_name

    @property
    def index_path(self) -> Path:
        return self.store.state_dir / "index.db"

    def db(self) -> IndexDB:
        """The index, opened (and healed if need be) on first use, with every write indexed."""
        db = self._index()
        if self._deferred is not None:
            self._apply_deferred(db)
        return db

    def _index(self) -> IndexDB:
        if self._db is None:
            self._db = open_index(self.index_path)
        return self._db

    def sync(self, vectors: bool = False, overlay: bool = True) -> SyncReport:
        """Bring the index to the branch tip plus uncommitted hand edits.

        ``vectors`` also embeds whatever lacks a vector (loading the model); capture skips it.
        ``overlay`` False skips the hand-edit check, a stat of every memory file: ``remember``
        needs only the committed blocks (to find duplicates), and the writer reads hand edits
        from disk itself.
        """
        if self.before_sync is not None:
            self.before_sync(self)
        model = self.embedder if vectors else None
        db = self.db()
        before = db.meta().get("model_identity") if model is not None else None
        local = reembeds_itself(model)
        changing = model is not None and before is not None and before != model.identity
        self.last_sync = sync(
            db,
            self.store.source(),
            model,
            overlay=overlay,
            allow_model_change=local,
            progress=self.progress if local and changing else silent,
        )
        self._warn(self.last_sync)
        if changing and model is not None:
            self.warnings[
                f"the embedding model changed from {before} to {model.identity}: "
                f"re-embedded {self.last_sync.embedded} texts (the rest came from the cache)"
            ] = None
        return self.last_sync

    def sync_for_recall(self) -> bool:
        """Bring the index up to date for a recall; True when its dense arm can be used.

        A recall embeds what lacks a vector itself when that is at most ``EMBED_IN_RECALL``
        blocks (a capture or a few: milliseconds each). More (a new model, a bulk import) is
        left to ``dream`` or ``index update``, which embed with a progress bar: this recall
        ranks those blocks by their words alone and the warning says how many and what to run.
        With the stored vectors all another model's, the dense arm is off for this recall.
        """
        first = self.sync(vectors=False)
        pending, other_model = backlog(self.db(), self.embedder)
        if pending <= EMBED_IN_RECALL:
            if pending or other_model:
                embedded = self.sync(vectors=True, overlay=False).embedded
                self.last_sync = replace(first, embedded=embedded)  # what this read did
            return True
        self.warnings[
            f"{pending} blocks are not embedded with {self.embedder.identity} yet, so this "
            "recall ranked them by their words alone: `elfmem dream` (or `elfmem index "
            "update`) embeds them, with a progress bar"
        ] = None
        return not other_model

    def _warn(self, report: SyncReport) -> None:
        self.warnings.update((line, None) for e in report.errors for line in str(e).split("\n"))
        self._warn_ledger()

    def _warn_ledger(self) -> None:
        broken = self.store.ledger_broken()
        if broken is not None:
            self.warnings[f"{broken.message} {broken.recovery}"] = None

    def sync_committed(self) -> None:
        """Bring the index to the branch tip for capture: committed blocks, no hand edits.

        Remembers this process deferred count as indexed while the tip is the one the last of
        them made; when anything else moved the branch they are applied and the rest diffed in.
        """
        deferred = self._deferred
        if deferred is not None and self.store.memory_tree_oid() == deferred.tree:
            return
        self.sync(overlay=False)

    def live_duplicate(self, content_hash: str) -> str | None:
        """The id of a live block with exactly this content, deferred remembers included."""
        if self._deferred is not None and content_hash in self._deferred.hashes:
            return self._deferred.hashes[content_hash]
        found = find_by_hash(self._index(), content_hash, LIVE)
        return found[0] if found else None

    def after_remember(
        self, result: WriteResult, parent_tree: str | None, hashes: Mapping[str, str]
    ) -> None:
        """Index a remember later: at the next read, or once ``DEFERRED_WRITES`` have gathered.

        The index is derived and heals from the tree diff, so nothing is lost if the process
        dies first. Gathered, a run of remembers into one bucket costs one index transaction
        that adds their blocks, instead of one transaction each.
        """
        deferred = self._deferred
        if deferred is not None and deferred.tree != parent_tree:
            self._apply_deferred(self._index())  # another writer committed in between
            deferred = None
        if deferred is None:
            deferred = self._deferred = _Deferred(parent_tree, result.tree_oid)
        deferred.files.update(_written_files(result))
        deferred.hashes.update(hashes)
        deferred.tree = result.tree_oid
        deferred.count += 1
        if deferred.count >= DEFERRED_WRITES:
            self._apply_deferred(self._index())

    def _apply_deferred(self, db: IndexDB) -> None:
        from elfmem.index import apply_files

        deferred, self._deferred = self._deferred, None
        if deferred is None:
            return
        report = apply_files(
            db,
            deferred.files,
            None,
            deferred.tree or None,
            parent_tree_oid=deferred.parent,
            only_from_parent=True,
        )
        if report.tree_oid != (deferred.tree or None):
            # Another writer moved the index meanwhile, perhaps past newer versions of these
            # files: they are not applied, and a diff from wherever it is keyed brings them in.
            self.last_sync = sync(db, self.store.source(), None, overlay=False)
            self._warn(self.last_sync)

    def after_write(self, result: WriteResult, parent_tree: str | None) -> None:
        """Update the index with exactly the files a commit wrote (text now, vectors lazily).

        Capture must stay milliseconds, so no model is loaded here; the next read that ranks
        (recall, dream) embeds whatever lacks a vector, from the cache when it can.
        """
        from elfmem.index import apply_files

        apply_files(
            self.db(),
            _written_files(result),
            None,
            result.tree_oid or None,
            parent_tree_oid=parent_tree,
        )

    @property
    def agent_id(self) -> str:
        """The agent as ledger events name it: its name without spaces."""
        return "-".join(self.agent.split()) or "elf"

    def event(self, kind: str, block: str | None = None, **data: Any) -> str:
        """One ledger line, stamped by the memory's clock unless ``ts`` is given (an import
        keeps the time an event happened elsewhere)."""
        ts = data.pop("ts", None) or iso_micros(self.clock)
        return encode(make_event(kind, agent=self.agent_id, block=block, ts=ts, **data))

    def record(self, lines_by_block: Mapping[str, Sequence[str]], message: str) -> None:
        """Ledger lines as one notes commit: for operations on many blocks at once. The events
        of a write already committed go to the spool while the ledger ref is broken: the write
        is reported as done, with a warning naming the ref and its repair."""
        if not self.store.append_or_spool(lines_by_block, message):
            self._warn_ledger()

    def require_ledger(self) -> None:
        """Refuse, before anything is done, an operation whose whole effect is on the ledger."""
        broken = self.store.ledger_broken()
        if broken is not None:
            raise broken

    def spool(self, block_id: str, line: str) -> None:
        """One block's event through the fsynced spool: the heartbeat's path (remember, edit,
        forget), which a notes commit per call would slow down by a third. It reaches the notes
        ref at the next flush (close, session end, pre-push, or a full spool)."""
        self.store.spool_events([(anchor_for_block(block_id), line)])

    @property
    def session_id(self) -> str:
        """The open session, or one per process when the caller opened none."""
        if self.ledger.open_session is not None:
            return self.ledger.open_session[0]
        return f"process-{os.getpid()}-{self._started}"

    def close(self) -> None:
        self.store.flush_spool()
        if self._deferred is not None:
            self._apply_deferred(self._index())
        if self._db is not None:
            if self._db.written:  # the next write costs no sync to disk: see rhythms/staging.py
                staging.keep_up(self.store.ledger, self._db)
            self._db.close()
            self._db = None
        self.store.close()
