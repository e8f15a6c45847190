"""Looking after the derived index: check the files, report freshness, rebuild elsewhere, parity.

None of these writes to the memory; ``rebuild`` writes only where it is told to (never the live
index) and ``parity`` compares a throwaway rebuild with the live index without touching it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elfmem.block.layout import MEMORY_DIR
from elfmem.block.parse import parse_partial
from elfmem.errors import BlockFormatError, InvalidInput
from elfmem.index import SyncReport, open_index, open_memory_index, queries, rebuild, sync
from elfmem.index import status as index_status
from elfmem.index.damage import moved_aside, pages
from elfmem.index.embedding import backlog
from elfmem.progress import Progress, silent
from elfmem.retrieval.late import late_fn
from elfmem.retrieval.pipeline import run_frame
from elfmem.rhythms.core import Core
from elfmem.rhythms.recall import embedder_fn, frames, states_fn
from elfmem.rhythms.results import Result


@dataclass(frozen=True)
class CheckResult(Result):
    files: int
    """Memory files read (the working tree where it has them, else the committed tree)."""
    blocks: int
    """Blocks in the files that parsed."""
    errors: list[dict[str, Any]] = field(default_factory=list)
    """One ``{path, line, message, recovery}`` per problem: a line that does not parse, an
    unresolved conflict, a block left out because of one, a block id in two files."""
    index_damage: str | None = None
    """Damage found in the index file now (it was moved aside and rebuilt from git), else None."""
    index_note: str | None = None
    """A damaged index an earlier command moved aside and rebuilt (still kept), else None."""

    @property
    def ok(self) -> bool:
        return not self.errors and self.index_damage is None

    @property
    def summary(self) -> str:
        notes = [f"Index: {x}" for x in (self.index_damage, self.index_note) if x]
        if not self.errors:
            verdict = "OK" if self.ok else "Index damaged"
            head = f"{verdict}: {self.files} files, {self.blocks} blocks parse cleanly."
            return "\n".join([head, *notes])
        lines = [f"{e['path']}:{e['line']}: {e['message']}" for e in self.errors]
        files = len({e["path"] for e in self.errors})
        return "\n".join([*lines, *notes, f"{len(self.errors)} problem(s) in {files} file(s)."])


def check(core: Core) -> CheckResult:
    """Parse every memory file as it is on disk (or in the tree); report every problem (a
    conflict, a block that does not parse, a block id in two files) with file:line; touch
    nothing."""
    source = core.store.source()
    tree = source.memory_tree_oid()
    files = source.tree_files(tree) if tree else {}
    on_disk = source.worktree_stats()
    paths = sorted(set(files) | set(on_disk or {}))
    problems: list[BlockFormatError] = []
    blocks = 0
    first_seen: dict[str, tuple[str, int]] = {}
    for path in paths:
        data = (
            source.read_worktree(path)
            if on_disk is not None and path in on_disk
            else (source.read_blob(files[path]))
        )
        parsed = parse_partial(data, f"{MEMORY_DIR}/{path}")
        problems.extend(parsed.problems)
        blocks += len(parsed.located)
        for block, line in parsed.located:
            where = (f"{MEMORY_DIR}/{path}", line)
            if block.id in first_seen:
                problems.append(_duplicate(block.id, first_seen[block.id], where))
            else:
                first_seen[block.id] = where
    errors = [
        {"path": e.path, "line": e.line, "message": e.detail, "recovery": e.recovery}
        for e in problems
    ]
    damage, note = inspect_index(core)
    return CheckResult(len(paths), blocks, errors, damage, note)


def inspect_index(core: Core) -> tuple[str | None, str | None]:
    """Damage in the live index's pages, healed now, and a damaged file an earlier heal kept.

    Reads every page (``PRAGMA quick_check``); a damaged index is moved aside and rebuilt from
    git at once, so the report is the only trace the caller needs to act on.
    """
    db = core.db()
    found = pages(db)
    if found is not None:
        db.heal(f"index pages were damaged ({found}); moved aside and rebuilt from git")
        core.sync()
    damage = db.healed
    return damage, None if damage else moved_aside(db.path)


def _duplicate(block_id: str, first: tuple[str, int], second: tuple[str, int]) -> BlockFormatError:
    return BlockFormatError(
        f"block id {block_id} is also at {first[0]}:{first[1]}; reads serve the copy in the "
        "file whose path sorts first and writes to this id are refused",
        second[0],
        second[1],
        "Give one copy a new id (16 lowercase hex digits) or delete it, then commit and run "
        "`elfmem index check`.",
    )


@dataclass(frozen=True)
class IndexStatus(Result):
    details: dict[str, Any]
    """The index's own figures: ``counts`` by status, ``memory_tree_oid``, ``size_bytes``, …"""
    fresh: bool
    """True when the index is keyed to the memory tree at HEAD."""

    @property
    def summary(self) -> str:
        counts = self.details.get("counts", {})
        state = "up to date" if self.fresh else "stale (the next call brings it up to date)"
        waiting = int(self.details.get("not_embedded", 0) or 0)
        vectors = (
            f"; {waiting} blocks not embedded with {self.details.get('model')} yet "
            "(`elfmem index update` or `elfmem dream` embeds them)"
            if waiting
            else ""
        )
        return (
            f"Index {state}: {counts.get('active', 0)} active, {counts.get('inbox', 0)} inbox, "
            f"{counts.get('archived', 0)} archived; keyed to tree "
            f"{str(self.details.get('memory_tree_oid'))[:12]}; "
            f"{int(self.details.get('size_bytes', 0) or 0) // 1024} KiB{vectors}"
        )


def status(core: Core) -> IndexStatus:
    details = dict(index_status(core.db()))
    fresh = details.get("memory_tree_oid") == core.store.memory_tree_oid()
    pending, _ = backlog(core.db(), core.embedder)
    details.update(model=core.embedder.identity, not_embedded=pending)
    return IndexStatus(details, fresh)


@dataclass(frozen=True)
class UpdateResult(Result):
    model: str
    """The identity of the configured embedding model."""
    waiting: int
    """Blocks that had no vector from it before this update."""
    embedded: int
    """Texts embedded by the model now; the rest came from the embedding cache."""

    @property
    def summary(self) -> str:
        if not self.waiting:
            return f"Index up to date: every block is embedded with {self.model}."
        return (
            f"Embedded {self.waiting} blocks with {self.model} ({self.embedded} texts computed, "
            "the rest from the cache): recall now ranks them by meaning as well as words."
        )


def update(core: Core, progress: Progress | None = None) -> UpdateResult:
    """Bring the live index to the tip and embed every block that lacks a vector from the
    configured model (after a change of model, all of them), with ``progress``."""
    core.sync(vectors=False)
    waiting, _ = backlog(core.db(), core.embedder)
    before, core.progress = core.progress, progress or silent
    try:
        report = core.sync(vectors=True, overlay=False)
    finally:
        core.progress = before
    return UpdateResult(core.embedder.identity, waiting, report.embedded)


@dataclass(frozen=True)
class RebuildResult(Result):
    path: str
    """The index file written."""
    blocks: int
    """Blocks in the rebuilt index."""
    embedded: int
    """Texts embedded by the model now; the rest came from the embedding cache."""
    files_parsed: int
    """Memory files read and parsed."""
    errors: list[str] = field(default_factory=list)
    """Files that did not parse, as ``path:line: message``."""

    @property
    def summary(self) -> str:
        return (
            f"Rebuilt {self.path}: {self.files_parsed} files, {self.blocks} blocks, "
            f"{self.embedded} texts embedded (the rest from the cache); zero LLM calls."
        )


def rebuild_to(core: Core, path: Path, progress: Progress | None = None) -> RebuildResult:
    """A fresh index at ``path`` from git alone; ``progress`` hears files parsed, texts embedded."""
    target = path.resolve()
    if target == core.index_path.resolve():
        raise InvalidInput(
            "`index rebuild --to` never writes the live index.",
            "Name another path; to heal the live index just delete it, the next call rebuilds it.",
        )
    db = open_index(target)
    try:
        report = rebuild(db, core.store.source(), core.embedder, progress=progress or silent)
        total = sum(queries.counts(db).values())
    finally:
        db.close()
    return RebuildResult(
        str(target), total, report.embedded, report.files_parsed, [str(e) for e in report.errors]
    )


@dataclass(frozen=True)
class ParityResult(Result):
    probes: int
    """Queries ranked in both indexes (the SELF frame, then one per active block)."""
    differences: list[dict[str, Any]] = field(default_factory=list)
    """Probes that ranked differently: ``{frame, query, live, rebuilt}`` with the id lists."""

    @property
    def ok(self) -> bool:
        return not self.differences

    @property
    def summary(self) -> str:
        if self.ok:
            return (
                f"Parity OK: {self.probes} probes rank identically in the live and a rebuilt index."
            )
        return f"Parity FAILED: {len(self.differences)} of {self.probes} probes rank differently."


def parity(core: Core, probes: int = 20) -> ParityResult:
    """Rank the same probes in the live index and in a fresh rebuild; compare ids.

    The live index is first brought to the tip with its vectors, as any recall would: an edit or
    a ``git pull`` leaves vectors to compute lazily, and a missing vector is not a ranking fault.
    """
    core.sync(vectors=True)
    live = core.db()
    fresh = open_memory_index()
    try:
        rebuild(fresh, core.store.source(), core.embedder)
        rows = queries.list_blocks(fresh, status="active")[:probes]
        queries_ = [r.cue or r.content[:80] for r in rows]
        differences: list[dict[str, Any]] = []
        specs = frames(core)
        checks = [("self", None)] + [("attention", q) for q in queries_]
        embed = embedder_fn(core)
        late = late_fn(core.embedder)
        for name, query in checks:
            spec = specs[name]
            got = [
                run_frame(
                    db,
                    spec,
                    query,
                    embed=embed if query else None,
                    states=states_fn(core.ledger, db),
                    agent_name=core.agent,
                    late=late if query else None,
                ).ranked
                for db in (live, fresh)
            ]
            a = [(b.id, b.content) for b in got[0]]
            b = [(x.id, x.content) for x in got[1]]
            if a != b:
                differences.append(
                    {
                        "frame": name,
                        "query": query,
                        "live": [i for i, _ in a],
                        "rebuilt": [i for i, _ in b],
                    }
                )
    finally:
        fresh.close()
    return ParityResult(len(checks), differences)


def migrate_embeddings(core: Core, progress: Progress | None = None) -> SyncReport:
    """Switch the index to the configured embedding model, re-embedding what the cache lacks.

    ``progress`` hears ``("embed", done, total)`` per batch of texts embedded."""
    report = sync(
        core.db(),
        core.store.source(),
        core.embedder,
        allow_model_change=True,
        progress=progress or silent,
    )
    core.last_sync = report
    return report
