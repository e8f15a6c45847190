"""The two commits identity makes: new blocks straight into ``notes/``, blocks replaced in place.

Minds, predictions and amendments are deliberate acts, not captures waiting for dream, so their
blocks are written active at once (as ``init --seed`` writes the constitution). Each call is one
commit whose trailers say what it was, and its ledger events carry that commit id, so ``undo``
of the commit also cancels the events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from elfmem.block.model import Block
from elfmem.block.render import validate_block
from elfmem.rhythms.capture import append_blocks, locate
from elfmem.rhythms.core import Core
from elfmem.store import FileEdit, MemoryView, Plan, WriteResult


def add_active(
    core: Core,
    blocks: Sequence[Block],
    op: str,
    subject: str,
    trailers: Sequence[tuple[str, str]] = (),
    block_ids: Sequence[str] = (),
) -> WriteResult:
    """Commit ``blocks`` as active blocks and record their births; ``block_ids`` adds trailers
    for blocks the commit concerns without changing (a prediction's mind)."""
    for block in blocks:
        validate_block(block)

    def build(view: MemoryView) -> Plan:
        ids = [b.id for b in blocks] + [b for b in block_ids if b not in {x.id for x in blocks}]
        plan = Plan(op=op, subject=subject, block_ids=ids, trailers=list(trailers))
        return append_blocks(view, plan, [("active", block) for block in blocks])

    result = core.store.write(build, core.after_write)
    assert result is not None  # the plan always adds a block
    core.record(
        {
            b.id: [core.event("birth", b.id, cls=b.cls, created=b.created, commit=result.commit_id)]
            for b in blocks
        },
        f"elfmem: {op}",
    )
    return result


def replace_in_place(
    core: Core,
    change: Mapping[str, Block],
    op: str,
    subject: str,
    body: str = "",
    trailers: Sequence[tuple[str, str]] = (),
    block_ids: Sequence[str] = (),
) -> WriteResult | None:
    """Replace each block (by id) where it lives, in one commit; None when nothing differs."""
    core.sync()  # with the overlay: a person may have edited the file without committing
    for block in change.values():
        validate_block(block)

    def build(view: MemoryView) -> Plan | None:
        files: dict[str, list[Block]] = {}
        differs = False
        for block_id, new in change.items():
            relpath, old = locate(core, view, block_id)
            differs = differs or old != new
            current = files.setdefault(relpath, list(view.read(relpath)))
            files[relpath] = [new if b.id == block_id else b for b in current]
        if not differs:
            return None
        ids = [*change, *(b for b in block_ids if b not in change)]
        return Plan(
            op=op,
            subject=subject,
            block_ids=ids,
            files={p: FileEdit(tuple(bs)) for p, bs in files.items()},
            body=body,
            trailers=list(trailers),
        )

    return core.store.write(build, core.after_write)
