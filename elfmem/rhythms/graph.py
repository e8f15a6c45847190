"""Edges: declared relations written into block files (and committed), learned ones in the ledger.

The six declared words are closed on purpose; ``related`` is an undirected association kept in
the ledger with the edges learned from use. Any other word is refused with the vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from elfmem.block.model import RELATIONS, Block, Relation
from elfmem.errors import BlockNotFound, InvalidInput
from elfmem.index import queries, vector_store
from elfmem.rhythms.capture import locate
from elfmem.rhythms.core import Core
from elfmem.rhythms.recall import embedder_fn, frame
from elfmem.rhythms.results import Result
from elfmem.store import FileEdit, MemoryView, Plan

LEDGER_RELATIONS = ("related",)


@dataclass(frozen=True)
class ConnectSpec:
    source: str
    target: str
    relation: str = "related"


@dataclass(frozen=True)
class ConnectResult(Result):
    op: str
    """``connect`` or ``disconnect``."""
    edges: list[dict[str, str]] = field(default_factory=list)
    """Edges added or removed: ``{source, target, relation}``; ``related`` edges always count."""
    commit_id: str | None = None
    unchanged: list[dict[str, str]] = field(default_factory=list)
    """Requested declared relations already present (connect) or already absent (disconnect)."""

    @property
    def summary(self) -> str:
        where = f" in commit {self.commit_id[:12]}" if self.commit_id else ""
        done, state = ("added", "present") if self.op == "connect" else ("removed", "absent")
        return (
            f"{self.op}: {len(self.edges)} edge(s) {done}{where}; "
            f"{len(self.unchanged)} already {state}."
        )


def _check(core: Core, specs: Sequence[ConnectSpec]) -> None:
    for s in specs:
        if s.relation not in RELATIONS + LEDGER_RELATIONS:
            raise InvalidInput(
                f"Unknown relation {s.relation!r}.",
                f"Use one of: {', '.join(RELATIONS + LEDGER_RELATIONS)}.",
            )
        if s.source == s.target:
            raise InvalidInput("A block cannot be connected to itself.", "Pass two different ids.")
    core.sync()
    ids = {i for s in specs for i in (s.source, s.target)}
    missing = sorted(ids - set(queries.get_blocks(core.db(), ids)))
    if missing:
        raise BlockNotFound(
            f"Unknown block id(s): {', '.join(missing)}.", "List ids with `elfmem ls`."
        )


def _relations_plan(
    core: Core,
    view: MemoryView,
    specs: Sequence[ConnectSpec],
    add: bool,
    changed: list[dict[str, str]],
) -> Plan | None:
    """Add or remove typed lines in the source blocks' files; one commit for all of them."""
    original: dict[str, tuple[str, Block]] = {}
    current: dict[str, Block] = {}
    changed.clear()
    for s in specs:
        if s.source not in original:
            original[s.source] = locate(core, view, s.source)
            current[s.source] = original[s.source][1]
        block = current[s.source]
        rel = Relation(s.relation, s.target)
        present = rel in block.relations
        if add and not present:
            block = block.with_changes(relations=(*block.relations, rel))
        elif not add and present:
            block = block.with_changes(relations=tuple(r for r in block.relations if r != rel))
        else:
            continue
        current[s.source] = block
        changed.append({"source": s.source, "target": s.target, "relation": s.relation})
    touched = {sid for sid in current if current[sid] != original[sid][1]}
    if not touched:
        return None
    files: dict[str, list[Block]] = {}
    for sid in touched:
        path = original[sid][0]
        base = files.get(path) or list(view.read(path))
        files[path] = [current[sid] if b.id == sid else b for b in base]
    op = "connect" if add else "disconnect"
    return Plan(
        op=op,
        subject=f"{op}: {len(changed)} relation(s)",
        block_ids=sorted(touched),
        files={p: FileEdit(tuple(bs)) for p, bs in files.items()},
    )


def connect_many(core: Core, specs: Sequence[ConnectSpec], add: bool = True) -> ConnectResult:
    """Declared relations in one commit; ``related`` edges as ledger events (both directions)."""
    _check(core, specs)
    declared = [s for s in specs if s.relation in RELATIONS]
    learned = [s for s in specs if s.relation in LEDGER_RELATIONS]
    changed: list[dict[str, str]] = []
    commit_id = None
    if declared:
        result = core.store.write(
            lambda view: _relations_plan(core, view, declared, add, changed), core.after_write
        )
        commit_id = result.commit_id if result else None
        if result is None:
            changed = []
    lines: dict[str, list[str]] = {}
    for s in learned:
        if not add and not _linked(core, s.source, s.target):
            continue  # nothing to remove: reported as unchanged, not as a change
        kind = "edge" if add else "edge_remove"
        extra: dict[str, object] = {"weight": 1.0, "source": "related"} if add else {}
        for a, b in ((s.source, s.target), (s.target, s.source)):
            lines.setdefault(a, []).append(
                core.event(kind, a, target=b, relation="related", **extra)
            )
        changed.append({"source": s.source, "target": s.target, "relation": s.relation})
    if lines:
        core.record(lines, "elfmem: connect" if add else "elfmem: disconnect")
    done = {(c["source"], c["target"], c["relation"]) for c in changed}
    unchanged = [
        {"source": s.source, "target": s.target, "relation": s.relation}
        for s in specs
        if (s.source, s.target, s.relation) not in done
    ]
    return ConnectResult("connect" if add else "disconnect", changed, commit_id, unchanged)


def _linked(core: Core, a: str, b: str) -> bool:
    """Whether the ledger holds a live ``related`` edge between ``a`` and ``b`` (either way)."""
    return any(
        core.ledger.folded(x).edges.get((y, "related"), 0.0) > 0 for x, y in ((a, b), (b, a))
    )


def connect_by_query(
    core: Core, query_a: str, query_b: str, relation: str = "related", min_confidence: float = 0.70
) -> ConnectResult:
    """Connect the best match for each description, if both matches are close enough."""
    picks = []
    embed = embedder_fn(core)
    for q in (query_a, query_b):
        result = frame(core, "attention", q, top_k=1, reinforce=False)
        if not result.ranked:
            raise BlockNotFound(
                f"Nothing matches {q!r}.", "Remember it first, then dream, then connect."
            )
        block = result.ranked[0]
        vec = vector_store(core.db()).vectors_for([block.id]).get(block.id)
        cosine = float(np.dot(embed(q), vec)) if vec is not None else 0.0
        if cosine < min_confidence:
            raise InvalidInput(
                f"The best match for {q!r} ({block.id}) has similarity {cosine:.2f}, below "
                f"min_confidence {min_confidence:.2f}; nothing was connected.",
                "Describe the block more precisely, lower min_confidence, or connect by id.",
            )
        picks.append(block.id)
    return connect_many(core, [ConnectSpec(picks[0], picks[1], relation)])
