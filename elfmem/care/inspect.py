"""Reading without ranking: ls, inbox, show, a block's commits and its ledger lines."""

from __future__ import annotations

from elfmem.block.layout import MEMORY_DIR
from elfmem.errors import BlockNotFound, InvalidInput
from elfmem.index import queries
from elfmem.index.queries import BlockRow
from elfmem.rhythms.core import LIVE, STATUSES, Core
from elfmem.rhythms.results import BlockInfo, HistoryResult, LedgerResult, ListResult
from elfmem.store import anchor_for_block
from elfmem.store.ledger import decode


def info(row: BlockRow) -> BlockInfo:
    return BlockInfo(
        id=row.id,
        content=row.content,
        cls=row.cls,
        tags=list(row.tags),
        status=row.status,
        path=f"{MEMORY_DIR}/{row.path}",
        cue=row.cue,
        pinned=row.pinned,
        created=row.created,
        relations=[[k, t] for k, t in row.relations],
        extra=dict(row.extra),
    )


def ls(
    core: Core,
    tag: str | None = None,
    category: str | None = None,
    status: str | None = None,
    limit: int | None = None,
) -> ListResult:
    """Deterministic, unscored listing; by default the live blocks (inbox and active)."""
    if status is not None and status not in (*STATUSES, "all"):
        raise InvalidInput(
            f"Unknown status {status!r}.", f"Use one of: {', '.join(STATUSES)}, all."
        )
    core.sync()
    wanted = STATUSES if status == "all" else (status,) if status else LIVE
    rows = [
        r
        for s in wanted
        for r in queries.list_blocks(core.db(), status=s, cls=category, tag_pattern=tag)
    ]
    rows.sort(key=lambda r: (r.created, r.id))
    return ListResult([info(r) for r in rows[:limit]])


def inbox(core: Core) -> ListResult:
    """Pending blocks, oldest first (FIFO), read-only."""
    return ls(core, status="inbox")


def show(core: Core, block_id: str) -> BlockInfo:
    core.sync()
    row = queries.get_blocks(core.db(), [block_id]).get(block_id)
    if row is None:
        raise BlockNotFound(
            f"No block has id {block_id!r}.", "List ids with `elfmem ls --status all`."
        )
    return info(row)


def history(core: Core, block_id: str) -> HistoryResult:
    """The commits that touched a block, newest first, read from their trailers."""
    commits = core.store.history(block_id)
    if not commits:
        show(core, block_id)
    return HistoryResult(block_id, [c.to_dict() for c in commits])


def ledger(core: Core, block_id: str) -> LedgerResult:
    """A block's ledger lines: its note (``git notes --ref=elfmem show <anchor>``) plus any
    events still in the spool."""
    anchor = anchor_for_block(block_id)
    events = [e for e in (decode(line) for line in core.ledger.lines(anchor)) if e is not None]
    if not events:
        show(core, block_id)
    events.sort(key=lambda e: (str(e.get("ts", "")), str(e.get("eid", ""))))
    return LedgerResult(block_id, anchor, events)
