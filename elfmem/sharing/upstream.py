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

import json
import re
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
from elfmem.config import ProjectConfig
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
"""Upstream edge origin → our ledger edge source; others (``agent``, …) become ``related``.
The relation keeps its upstream name whatever the source."""
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
    agent_name: str | None = None
    """Upstream's agent name, when this import gave it to the memory (else None)."""
    dropped: list[str] = field(default_factory=list)
    """What upstream held that did not come across as it was, one line each."""

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
        if self.agent_name:
            parts.append(f"the agent is now called {self.agent_name}")
        text = ", ".join(parts)
        if self.dropped:
            text += "\nDropped or changed (no place for it here):\n" + "\n".join(
                f"  - {line}" for line in self.dropped
            )
        return text


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


SHARE_LEVELS = ("public", "peer", "private")
SYMMETRIC = ("contradicts",)
"""Typed links that read the same from either end: their direction never matters."""


@dataclass(frozen=True, slots=True)
class _Links:
    declared: dict[str, list[Relation]]
    """Block id → the typed links it declares (written into its block file)."""
    undirected: list[UpstreamEdge]
    """Typed links whose declaring side upstream did not record: kept as ledger edges."""


def _links(edges: Iterable[UpstreamEdge]) -> _Links:
    """Typed links, on the block that declared them. Upstream stores endpoints sorted, so a
    directed link (``supports``, ``requires``, …) without ``declared_by`` has lost its arrow
    (upstream's own ``connect`` never records it): it is not written either way round."""
    out: dict[str, list[Relation]] = {}
    undirected: list[UpstreamEdge] = []
    for e in edges:
        if e.relation not in RELATIONS:
            continue
        if e.declared_by in (e.from_id, e.to_id):
            source = e.declared_by
        elif e.relation in SYMMETRIC:
            source = e.from_id
        else:
            undirected.append(e)
            continue
        target = e.to_id if source == e.from_id else e.from_id
        out.setdefault(source, []).append(Relation(e.relation, target))
    return _Links(out, undirected)


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
    if up.share in SHARE_LEVELS:
        extra.append(("share", up.share))
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


def _plan(
    view: MemoryView, blocks: Sequence[tuple[str, Block]], source: str, raw: dict[str, bytes]
) -> Plan:
    plan = Plan(
        op="import",
        subject=f"import: {len(blocks)} blocks from upstream elfmem",
        block_ids=[b.id for _, b in blocks],
        body=f"From the upstream elfmem database {source}.",
        trailers=[("Elfmem-Import", "upstream")],
    )
    plan.raw = dict(raw)
    return append_blocks(view, plan, blocks)


def _events(
    core: Core,
    memory: UpstreamMemory,
    classes: dict[str, str],
    commit: str,
    undirected: Sequence[UpstreamEdge] = (),
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
    for e in [*(e for e in memory.edges if e.relation not in RELATIONS), *undirected]:
        if not {e.from_id, e.to_id} <= ids:
            continue
        source = EDGE_SOURCES.get(e.origin, "related")
        relation = e.relation or "related"  # elaborates, validates, predicts, co_occurs, …
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


def upstream_agent_name(path: Path, db_path: Path) -> str:
    """``project.agent_name`` of the upstream project ``path`` (or of the project the database
    sits in, ``<project>/.elfmem/agent.db``); empty when there is none."""
    for config in (path / CONFIG, db_path.parent / "config.yaml"):
        try:
            data = yaml.safe_load(config.read_text("utf-8")) or {}
            name = str((data.get("project") or {}).get("agent_name") or "").strip()
        except (OSError, yaml.YAMLError, AttributeError):
            continue
        if name:
            return name
    return ""


def _renamed_config(core: Core, name: str) -> bytes | None:
    """``.elfmem/config.yaml`` with ``project.agent_name`` set to ``name``, every other line
    as it is; None when the file cannot be read or has no such line to change."""
    workdir = core.store.memory_workdir
    try:
        data = (
            (workdir / CONFIG).read_bytes()
            if workdir is not None
            else core.store.committed_file(str(CONFIG))
        )
    except OSError:
        return None
    if data is None:
        return None
    text = data.decode("utf-8", "replace")
    new, count = _AGENT_LINE.subn(lambda m: m.group(1) + json.dumps(name), text, count=1)
    return new.encode() if count == 1 else None


_AGENT_LINE = re.compile(r"^(\s+agent_name:[ \t]*)[^\n#]*", re.MULTILINE)


def _carry_name(core: Core, name: str, dropped: list[str]) -> dict[str, bytes]:
    """The config change that gives this memory upstream's agent name, when it still has the
    default one; otherwise what was not carried goes into ``dropped``."""
    ours = core.config.project.agent_name
    if not name or name == ours:
        return {}
    if ours != ProjectConfig.agent_name:
        dropped.append(f"upstream's agent name {name!r}: this memory is already called {ours!r}")
        return {}
    if len(name) > 80 or not name.isprintable():
        dropped.append(f"upstream's agent name {name!r}: not a name this memory can use")
        return {}
    config = _renamed_config(core, name)
    if config is None:
        dropped.append(f"upstream's agent name {name!r}: {CONFIG} has no agent_name line")
        return {}
    return {str(CONFIG): config}


def _dropped(memory: UpstreamMemory, undirected: Sequence[UpstreamEdge]) -> list[str]:
    lines = []
    if undirected:
        kinds = ", ".join(sorted({e.relation for e in undirected}))
        lines.append(
            f"{len(undirected)} typed link(s) ({kinds}) whose direction upstream did not record "
            "(declared_by empty): kept as learned edges in the ledger, not as links in a block "
            "file, so they are never written the wrong way round"
        )
    lines.extend(f"{what}: {n}" for what, n in memory.left_out.items())
    if (Path(memory.path).parent / "memory" / "self.md").is_file():
        lines.append(
            "upstream's self.md: this memory keeps its own .elfmem/memory/self.md (copy lines "
            "across by hand to keep them)"
        )
    lines.append("embeddings: computed again here with this memory's model")
    return lines


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
            block = to_block(up, links.declared.get(up.id, []))
            wanted.append((STATUSES.get(up.status, "archived"), block))
        except ElfmemError as exc:
            skipped.append({"id": up.id, "reason": exc.message})
    source = str(db_path)
    already = sorted(present)
    if not wanted:
        return UpstreamImportResult(source, [], already, skipped)
    dropped = _dropped(memory, links.undirected)
    name = upstream_agent_name(path, db_path)
    raw = _carry_name(core, name, dropped)
    result = core.store.write(lambda view: _plan(view, wanted, source, raw), core.after_write)
    if result is None:
        return UpstreamImportResult(source, [], already, skipped)
    if raw:
        core.config = core.config.with_agent_name(name)
    classes = {b.id: b.cls for _, b in wanted}
    lines, learned = _events(core, memory, classes, result.commit_id, links.undirected)
    core.record(lines, "elfmem: import from upstream")
    relations = sum(len(b.relations) for _, b in wanted)
    return UpstreamImportResult(
        source,
        [b.id for _, b in wanted],
        already,
        skipped,
        relations,
        learned,
        result.commit_id,
        name if raw else None,
        dropped,
    )
