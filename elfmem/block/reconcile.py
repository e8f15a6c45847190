"""After a merge: one block per id across files, and no bucket past its bound. Pure, no I/O.

A merge driver sees one file at a time, but blocks move between files: dream promotes from
``log/`` to ``notes/``, forget moves to ``archive/``, a full bucket continues in ``-2.md``. So a
block promoted on one side and edited on the other comes out of a merge twice, once in each file,
and two sides that each filled a bucket leave it past ``BUCKET_LIMIT``. ``reconcile`` resolves
both, deterministically (the same files give the same result on every clone):

- the versions of one id are merged as the driver merges them (``merge.merge_versions``);
- the block goes where a side moved it (a copy still where the base had it did not move); of two
  moves, ``notes/`` before ``log/`` before ``archive/``, then the path; a block forgotten on one
  side and edited on the other (any field: text, tags, relations, inline fields, pinned) stays
  live with the edit;
- a bucket chain (one status, category and month) with a bucket past the bound is laid out again
  in canonical order, ``BUCKET_LIMIT`` blocks per file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from elfmem.block.layout import BUCKET_LIMIT, BucketKey, parse_bucket_path
from elfmem.block.merge import canonical_order, merge_versions
from elfmem.block.model import Block

__all__ = ["Reconciled", "reconcile"]

_RANK = {"active": 0, "inbox": 1, "archived": 2}


@dataclass(frozen=True, slots=True)
class Reconciled:
    """The files to rewrite (memory-relative path → blocks; empty: the file goes) and why."""

    files: dict[str, tuple[Block, ...]] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.files)


def _status(path: str) -> str:
    key = parse_bucket_path(path)
    return key.status if key else "active"


def _edited(block: Block, base: Block) -> bool:
    """Any change a person or elfmem makes counts (text, tags, relations, inline fields, pinned,
    frontmatter keys): the merge driver kept the edit, so the pass must not archive it."""
    return block != base


def _place(
    copies: Sequence[tuple[str, Block]], base: tuple[str, Block] | None, events: list[str]
) -> str:
    paths = sorted({p for p, _ in copies})
    moved = [p for p in paths if base is None or p != base[0]]
    candidates = moved or paths
    if all(_status(p) == "archived" for p in candidates):
        edited = sorted(
            p
            for p, b in copies
            if _status(p) != "archived" and (base is None or _edited(b, base[1]))
        )
        if edited:
            events.append(
                f"kept {copies[0][1].id} live in {edited[0]}: forgotten on one side and edited "
                "on the other, so the edit stays"
            )
            candidates = edited
    return min(candidates, key=lambda p: (_RANK[_status(p)], p))


def reconcile(
    files: Mapping[str, Sequence[Block]], base: Mapping[str, tuple[str, Block]] | None = None
) -> Reconciled:
    """Resolve ids held by several bucket files and buckets past the bound.

    ``files``: every bucket of the merged memory that parses (memory-relative path → blocks);
    ``base``: where each id was and what it held at the merge base (None or empty when unknown:
    then no version is taken for an unchanged one, so every distinct text is kept).
    """
    current = {p: list(bs) for p, bs in files.items()}
    events: list[str] = []
    touched: set[str] = set()
    for _ in range(4):  # a split can only collide with an id made by the same split
        where: dict[str, list[tuple[str, Block]]] = {}
        for path in sorted(current):
            for block in current[path]:
                where.setdefault(block.id, []).append((path, block))
        twice = {i: c for i, c in where.items() if len(c) > 1}
        if not twice:
            break
        for block_id in sorted(twice):
            copies = twice[block_id]
            known = (base or {}).get(block_id)
            result = merge_versions(known[1] if known else None, [b for _, b in copies])
            target = _place(copies, known, events)
            names = ", ".join(sorted({p for p, _ in copies}))
            events.append(f"block {block_id} was in {names}: kept once, in {target}")
            events.extend(result.events)
            for path in {p for p, _ in copies}:
                current[path] = [b for b in current[path] if b.id != block_id]
                touched.add(path)
            current[target].extend(result.blocks)
    _rebalance(current, touched, events)
    out = {p: tuple(canonical_order(current.get(p, ()))) for p in sorted(touched)}
    return Reconciled({p: bs for p, bs in out.items() if tuple(files.get(p, ())) != bs}, events)


def _rebalance(current: dict[str, list[Block]], touched: set[str], events: list[str]) -> None:
    """Lay out again, in canonical order, every bucket chain holding a bucket past the bound."""
    chains: dict[tuple[str, str, str], list[str]] = {}
    for path in current:
        key = parse_bucket_path(path)
        if key is not None:
            chains.setdefault((key.status, key.cls, key.month), []).append(path)
    for (status, cls, month), paths in sorted(chains.items()):
        if all(len(current[p]) <= BUCKET_LIMIT for p in paths):
            continue
        blocks = canonical_order(b for p in paths for b in current[p])
        for p in paths:
            current[p] = []
            touched.add(p)
        n = 0
        for n, start in enumerate(range(0, len(blocks), BUCKET_LIMIT), start=1):
            path = BucketKey(status, cls, month, n).relpath
            current[path] = blocks[start : start + BUCKET_LIMIT]
            touched.add(path)
        events.append(
            f"{status} {cls} {month}: {len(blocks)} blocks laid out again in {n} bucket(s) of "
            f"at most {BUCKET_LIMIT}"
        )
