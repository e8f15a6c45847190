"""Switching from upstream elfmem (PyPI `elfmem` 0.20): its SQLite memory as our blocks and ledger.

Every block keeps its id, so references to it (in prompts, notes, other tools) stay valid. What a
block declares (content, category, cue, tags, pinned, and the six typed links) goes into the
block files in one ``import`` commit; what upstream learned about it goes into the ledger: its
Beta posterior as a ``prior`` event (minus the outcomes it recorded, which come across one by
one with their signal, weight and source) and learned edges as ``edge`` events. Every event
carries the import commit, so ``elfmem undo`` of it takes the whole import back. Blocks whose id
this memory already holds are left alone, which makes a second import of the same memory a no-op.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import yaml

from elfmem.block.model import (
    RELATIONS,
    Block,
    Relation,
    is_valid_category,
    is_valid_tag,
    normalise_content,
    now_iso,
)
from elfmem.block.render import validate_block
from elfmem.errors import ElfmemError, InvalidInput, NotFound
from elfmem.index import queries
from elfmem.index.upstreamdb import UpstreamBlock, UpstreamEdge, UpstreamMemory, read_upstream
from elfmem.progress import Progress, silent
from elfmem.rhythms.capture import append_blocks
from elfmem.rhythms.core import Core
from elfmem.rhythms.results import Result
from elfmem.store import MemoryView, Plan

STATUSES = {"inbox": "inbox", "active": "active", "archived": "archived"}
"""Upstream status → the folder it lands in; anything else is archived (and says so)."""
EDGE_SOURCES = {"outcome": "outcome", "co_retrieval": "co_retrieval", "similarity": "similar"}
"""Upstream edge origin → our ledger edge source; others (``agent``, …) become ``related``."""
CONFIG = Path(".elfmem") / "config.yaml"


@dataclass(frozen=True)
class UpstreamImportResult(Result):
    source: str
    """The upstream database read."""
    imported: list[str] = field(default_factory=list)
    already_present: list[str] = field(default_factory=list)
    """Ids this memory held already: left as they are (a re-import changes nothing)."""
    skipped: list[dict[str, str]] = field(default_factory=list)
    """``{id, reason}`` for blocks that could not come across."""
    relations: int = 0
    """Typed links written into block files."""
    edges: int = 0
    """Learned edges written to the ledger."""
    commit_id: str | None = None

    @property
    def summary(self) -> str:
        head = f"imported {len(self.imported)} blocks from {self.source}"
        if self.commit_id:
            head += f" in {self.commit_id[:12]} (undo with `elfmem undo`)"
        parts = [head, f"{self.relations} links, {self.edges} learned edges"]
        if self.already_present:
            parts.append(f"{len(self.already_present)} already here")
        if self.skipped:
            parts.append(
                f"{len(self.skipped)} skipped: "
                + "; ".join(f"{s['id']}: {s['reason']}" for s in self.skipped[:5])
            )
        return ", ".join(parts)


def find_database(path: Path) -> Path:
    """The upstream database for ``path``: the file itself, or ``project.db`` from the
    ``.elfmem/config.yaml`` of the project folder ``path`` (relative paths are taken from the
    project folder, then from the current directory, as upstream did)."""
    if path.is_file():
        return path
    config = path / CONFIG
    if not config.is_file():
        raise NotFound(
            f"{path} is neither an upstream database nor a project with {CONFIG}.",
            "Pass the upstream project folder, or its database file (e.g. ~/.elfmem/agent.db).",
        )
    try:
        data = yaml.safe_load(config.read_text("utf-8")) or {}
        raw = str((data.get("project") or {}).get("db") or "")
    except (yaml.YAMLError, AttributeError, OSError) as exc:
        raise InvalidInput(f"{config} is not readable YAML ({exc}).", f"Fix {config}.") from exc
    if not raw:
        raise NotFound(
            f"{config} names no database (project.db).",
            "Pass the database file itself: `elfmem import-upstream PATH/TO/agent.db`.",
        )
    db = Path(raw).expanduser()
    for candidate in [db] if db.is_absolute() else [path / db, Path.cwd() / db]:
        if candidate.is_file():
            return candidate
    raise NotFound(
        f"{config} names the database {raw}, which does not exist.",
        "Pass the database file itself: `elfmem import-upstream PATH/TO/agent.db`.",
    )


def _created(raw: str) -> str:
    try:
        when = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return now_iso()
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).replace(microsecond=0).isoformat()


def _links(edges: Iterable[UpstreamEdge]) -> dict[str, list[Relation]]:
    """Typed links, on the block that declared them (upstream stores endpoints sorted, so the
    lower id is taken as the declaring side when it did not record one)."""
    out: dict[str, list[Relation]] = {}
    for e in edges:
        if e.relation not in RELATIONS:
            continue
        source = e.declared_by if e.declared_by in (e.from_id, e.to_id) else e.from_id
        target = e.to_id if source == e.from_id else e.from_id
        out.setdefault(source, []).append(Relation(e.relation, target))
    return out


def to_block(up: UpstreamBlock, links: Sequence[Relation]) -> Block:
    """Our block for one upstream block; InvalidInput when it cannot be one."""
    cls = up.category if is_valid_category(up.category) else "knowledge"
    extra: list[tuple[str, str]] = []
    if cls != up.category:
        extra.append(("upstream-category", up.category.replace(" ", "_")[:40] or "none"))
    if up.status not in STATUSES:
        extra.append(("upstream-status", up.status.replace(" ", "_")[:40]))
    if up.archive_reason:
        extra.append(("archive-reason", up.archive_reason.replace(" ", "_")[:40]))
    if up.superseded_by:
        extra.append(("superseded-by", up.superseded_by.replace(" ", "_")[:40]))
    block = Block(
        id=up.id,
        content=normalise_content(up.content),
        cls=cls,
        tags=tuple(dict.fromkeys(t for t in up.tags if is_valid_tag(t))),
        pinned=up.pinned,
        created=_created(up.created),
        cue=" ".join(up.cue.split()),
        relations=tuple(dict.fromkeys(links)),
        extra=tuple(extra),
    )
    validate_block(block)
    return block


def _plan(view: MemoryView, blocks: Sequence[tuple[str, Block]], source: str) -> Plan:
    plan = Plan(
        op="import",
        subject=f"import: {len(blocks)} blocks from upstream elfmem",
        block_ids=[b.id for _, b in blocks],
        body=f"From the upstream elfmem database {source}.",
        trailers=[("Elfmem-Import", "upstream")],
    )
    return append_blocks(view, plan, blocks)


def _events(
    core: Core, memory: UpstreamMemory, classes: dict[str, str], commit: str
) -> tuple[dict[str, list[str]], int]:
    """Ledger lines for the imported blocks (id → category), each stamped with the import
    commit."""
    ids = set(classes)
    lines: dict[str, list[str]] = {}
    stamp = {"commit": commit, "from": "upstream"}
    for up in memory.blocks:
        if up.id not in ids:
            continue
        events = [
            core.event("birth", up.id, cls=classes[up.id], created=_created(up.created), **stamp)
        ]
        alpha = up.alpha - sum(o.weight * o.signal for o in up.outcomes)
        beta = up.beta - sum(o.weight * (1 - o.signal) for o in up.outcomes)
        if alpha > 0 and beta > 0 and (round(alpha, 9), round(beta, 9)) != (0.5, 0.5):
            events.append(core.event("prior", up.id, alpha=alpha, beta=beta, **stamp))
        for o in up.outcomes:
            events.append(
                core.event(
                    "outcome",
                    up.id,
                    ts=_ts(o.created),
                    signal=o.signal,
                    weight=o.weight,
                    source=o.source,
                    **stamp,
                )
            )
        lines[up.id] = events
    learned = 0
    for e in memory.edges:
        if e.relation in RELATIONS or not {e.from_id, e.to_id} <= ids:
            continue
        source = EDGE_SOURCES.get(e.origin, "related")
        relation = "related" if source == "related" else e.relation
        for a, b in ((e.from_id, e.to_id), (e.to_id, e.from_id)):
            lines[a].append(
                core.event(
                    "edge", a, target=b, relation=relation, weight=e.weight, source=source, **stamp
                )
            )
        learned += 1
    return lines, learned


def _ts(raw: str) -> str | None:
    """An upstream time as a ledger ``ts`` (microseconds, UTC); None (now) when unreadable."""
    try:
        when = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
    when = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat(timespec="microseconds")


def import_upstream(
    core: Core, path: Path, progress: Progress | None = None
) -> UpstreamImportResult:
    report = progress or silent
    db_path = find_database(path)
    memory = read_upstream(db_path)
    core.sync(overlay=False)
    present = set(queries.get_blocks(core.db(), [b.id for b in memory.blocks]))
    links = _links(memory.edges)
    wanted: list[tuple[str, Block]] = []
    skipped: list[dict[str, str]] = []
    total = len(memory.blocks)
    report("check", 0, total)
    for done, up in enumerate(memory.blocks, 1):
        report("check", done, total)
        if up.id in present:
            continue
        try:
            wanted.append((STATUSES.get(up.status, "archived"), to_block(up, links.get(up.id, []))))
        except ElfmemError as exc:
            skipped.append({"id": up.id, "reason": exc.message})
    source = str(db_path)
    already = sorted(present)
    if not wanted:
        return UpstreamImportResult(source, [], already, skipped)
    result = core.store.write(lambda view: _plan(view, wanted, source), core.after_write)
    if result is None:
        return UpstreamImportResult(source, [], already, skipped)
    lines, learned = _events(core, memory, {b.id: b.cls for _, b in wanted}, result.commit_id)
    core.record(lines, "elfmem: import from upstream")
    relations = sum(len(b.relations) for _, b in wanted)
    return UpstreamImportResult(
        source, [b.id for _, b in wanted], already, skipped, relations, learned, result.commit_id
    )
