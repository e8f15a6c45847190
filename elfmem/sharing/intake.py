"""Where blocks from elsewhere enter this memory: one commit, their ledger lines after it.

Peer messages and bundle imports both land here, so quarantine and idempotence are one rule:
a block whose id this memory already has (in any status) is skipped, and every other one is
committed in one write through the store's writer (the secret gate, locks, crash journal and
``undo`` apply), its ledger lines stamped with that commit so ``undo`` cancels them too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from elfmem.block.model import Block
from elfmem.block.render import validate_block
from elfmem.index import queries
from elfmem.rhythms.capture import append_blocks
from elfmem.rhythms.core import Core
from elfmem.store import MemoryView, Plan

EventsFor = Callable[[Block, str], list[str]]
"""(block, commit id) → the ledger lines to record for it."""


@dataclass(frozen=True)
class Incoming:
    block: Block
    status: str = "active"
    """``active`` (notes/) or ``inbox`` (log/)."""
    events: list[str] = field(default_factory=list)
    """Ledger lines carried as they are (a self-merge brings its own events)."""


def known_ids(core: Core, ids: Sequence[str]) -> set[str]:
    """The ids among ``ids`` this memory already holds, in any status."""
    core.sync()
    return set(queries.get_blocks(core.db(), list(ids)))


def commit_incoming(
    core: Core,
    items: Sequence[Incoming],
    op: str,
    subject: str,
    trailers: Sequence[tuple[str, str]],
    events_for: EventsFor,
) -> tuple[str | None, list[str]]:
    """Commit the new ``items`` (those whose id is unknown here) in one write: the commit id
    (None when every one was here already) and the ids it added."""
    have = known_ids(core, [i.block.id for i in items])
    fresh = [i for i in items if i.block.id not in have]
    if not fresh:
        return None, []
    for item in fresh:
        validate_block(item.block)

    def build(view: MemoryView) -> Plan:
        plan = Plan(
            op=op, subject=subject, block_ids=[i.block.id for i in fresh], trailers=list(trailers)
        )
        return append_blocks(view, plan, [(item.status, item.block) for item in fresh])

    result = core.store.write(build, core.after_write)
    assert result is not None  # the plan always adds a block
    lines = {i.block.id: [*i.events, *events_for(i.block, result.commit_id)] for i in fresh}
    core.record(lines, f"elfmem: {op}")
    return result.commit_id, [i.block.id for i in fresh]


def birth(core: Core, block: Block, commit_id: str) -> str:
    return core.event("birth", block.id, cls=block.cls, created=block.created, commit=commit_id)
