"""Three-way merge of memory blocks by id: what a git merge driver and a sync need, without I/O.

Two clones that wrote the same bucket must never end in conflict markers, and whichever clone runs
the merge must get the same bytes, so both converge (docs/merging.md). The rules, per block id:

- kept on both sides alike, or changed on one side only → that version;
- changed on both sides → merged field by field: tags, relations, inline fields and frontmatter
  keys added or removed on either side all apply; only when the text (content and cue) was
  edited differently on both sides are both versions kept, as two blocks: the original id keeps
  one, the other gets an id derived from the original id and its text, and declares
  ``contradicts`` and ``supersedes`` the original (the candidate revision of docs/ranking.md,
  "Corrections win");
- removed on one side and edited on the other → the edit is kept, and an event says so.

"Newer" of two edits is decided from the blocks alone so both sides agree: the block format has no
edit time, so the version whose text hashes higher is taken as the newer. Blocks are written in a
canonical order (``created``, then id), so the result does not depend on which side is "ours".
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from elfmem.block.model import Block, Relation
from elfmem.block.parse import ParsedFile, parse_partial
from elfmem.block.render import render_file
from elfmem.errors import BlockFormatError

__all__ = [
    "BlockMerge",
    "BucketMerge",
    "canonical_order",
    "merge_block",
    "merge_bucket",
    "merge_versions",
    "split_id",
]

_CONFLICT = object()
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class BlockMerge:
    """The blocks one id becomes (one, or two when both sides edited its text), and why."""

    blocks: tuple[Block, ...]
    events: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BucketMerge:
    """One merged bucket: its canonical bytes and what happened, in words a person reads."""

    data: bytes
    events: list[str] = field(default_factory=list)
    blocks: tuple[Block, ...] = ()


def canonical_order(blocks: Iterable[Block]) -> list[Block]:
    """Blocks by ``created``, then id: the order every merge writes a bucket in."""
    return sorted(blocks, key=lambda b: (b.created, b.id))


def split_id(block_id: str, content: str, cue: str) -> str:
    """The id of the second version of ``block_id``: the same on every clone for the same text."""
    digest = hashlib.sha256(f"elfmem-split\0{block_id}\0{content}\0{cue}".encode()).hexdigest()
    return digest[:16]


def _text_key(block: Block) -> str:
    return hashlib.sha256(f"{block.content}\0{block.cue}".encode()).hexdigest()


def _scalar(base: object, ours: object, theirs: object, has_base: bool) -> object:
    if ours == theirs:
        return ours
    if has_base and ours == base:
        return theirs
    if has_base and theirs == base:
        return ours
    return _CONFLICT


def _items(
    base: Sequence[_T], ours: Sequence[_T], theirs: Sequence[_T], has_base: bool
) -> tuple[_T, ...]:
    """A three-way merge of an unordered collection: what either side added is kept, what
    either side removed from the base is dropped. Base items keep their order; new ones follow
    in a canonical order, so neither side's order decides the bytes."""
    if tuple(ours) == tuple(theirs):
        return tuple(ours)
    if has_base and tuple(ours) == tuple(base):
        return tuple(theirs)
    if has_base and tuple(theirs) == tuple(base):
        return tuple(ours)
    in_ours, in_theirs, in_base = set(ours), set(theirs), set(base)
    kept = [x for x in dict.fromkeys(base) if x in in_ours and x in in_theirs]
    added = (in_ours | in_theirs) - in_base
    return (*kept, *sorted(added, key=repr))


def _extra(
    base: Block | None, ours: Block, theirs: Block, newer: Block
) -> tuple[tuple[str, str], ...]:
    """Frontmatter keys merged one by one; a key both sides set differently takes the newer's."""
    if ours.extra == theirs.extra:
        return ours.extra
    b, o, t, n = (dict(x.extra) if x else {} for x in (base, ours, theirs, newer))
    keys = [k for k in dict.fromkeys([*b, *sorted((set(o) | set(t)) - set(b))])]
    out: list[tuple[str, str]] = []
    for key in keys:
        value = _scalar(b.get(key), o.get(key), t.get(key), base is not None)
        if value is _CONFLICT:
            value = n.get(key)
        if isinstance(value, str):
            out.append((key, value))
    return tuple(out)


def merge_block(base: Block | None, ours: Block | None, theirs: Block | None) -> BlockMerge:
    """The three-way merge of one id; either side ``None`` means it is not there."""
    if ours is None and theirs is None:
        return BlockMerge(())
    if ours is None or theirs is None:
        side = theirs if ours is None else ours
        assert side is not None
        if base is None or side == base:
            # added on one side, or removed on one side and left alone on the other
            return BlockMerge((side,) if base is None else ())
        return BlockMerge(
            (side,),
            (f"kept {side.id}: edited on one side and removed on the other, so the edit stays",),
        )
    if ours == theirs:
        return BlockMerge((ours,))
    if base is not None and ours == base:
        return BlockMerge((theirs,))
    if base is not None and theirs == base:
        return BlockMerge((ours,))
    return merge_versions(base, [ours, theirs])


def merge_versions(base: Block | None, versions: Sequence[Block]) -> BlockMerge:
    """Merge several versions of one block (all with the same id) field by field; when their
    texts differ from one another, each extra text becomes a block of its own."""
    ordered = sorted(set(versions), key=lambda b: (_text_key(b), repr(b)))
    merged = ordered[0]
    for other in ordered[1:]:
        merged = _fold(base, merged, other)
    texts = sorted(
        {(v.content, v.cue) for v in ordered}
        - ({(base.content, base.cue)} if base is not None else set()),
        key=lambda t: _text_key(Block(id=merged.id, content=t[0], cue=t[1])),
    )
    if len(texts) <= 1:
        if texts:
            merged = merged.with_changes(content=texts[0][0], cue=texts[0][1])
        return BlockMerge((merged,))
    # The oldest text keeps the id; every newer one is its own block, a candidate revision.
    first = merged.with_changes(content=texts[0][0], cue=texts[0][1])
    out = [first]
    events = []
    for content, cue in texts[1:]:
        new_id = split_id(first.id, content, cue)
        links = (Relation("contradicts", first.id), Relation("supersedes", first.id))
        relations = tuple(r for r in first.relations if r not in links and r.target != new_id)
        out.append(
            first.with_changes(id=new_id, content=content, cue=cue, relations=(*relations, *links))
        )
        events.append(
            f"kept both versions of {first.id} (its text was edited on both sides): the other "
            f"version is {new_id}, which contradicts and supersedes it"
        )
    return BlockMerge(tuple(out), tuple(events))


def _fold(base: Block | None, ours: Block, theirs: Block) -> Block:
    """Every field but the text merged three-way; a scalar both sides set differently takes the
    newer version's (``created`` takes the earlier, ``pinned`` stays pinned)."""
    has = base is not None
    b = base or ours
    newer = max(ours, theirs, key=lambda x: (_text_key(x), repr(x)))

    def pick(name: str) -> object:
        value = _scalar(getattr(b, name), getattr(ours, name), getattr(theirs, name), has)
        return getattr(newer, name) if value is _CONFLICT else value

    created = _scalar(b.created, ours.created, theirs.created, has)
    if created is _CONFLICT:
        created = (
            min(x for x in (ours.created, theirs.created) if x)
            if ours.created or theirs.created
            else ""
        )
    pinned = _scalar(b.pinned, ours.pinned, theirs.pinned, has)
    return Block(
        id=ours.id,
        content=str(pick("content")),
        cue=str(pick("cue")),
        cls=str(pick("cls")),
        created=str(created),
        pinned=True if pinned is _CONFLICT else bool(pinned),
        tags=_items(b.tags if has else (), ours.tags, theirs.tags, has),
        relations=_items(b.relations if has else (), ours.relations, theirs.relations, has),
        fields=_items(b.fields if has else (), ours.fields, theirs.fields, has),
        extra=_extra(base, ours, theirs, newer),
    )


def _by_id(parsed: ParsedFile) -> dict[str, Block]:
    return {block.id: block for block in parsed.blocks}


def merge_bucket(base: bytes | None, ours: bytes, theirs: bytes, path: str = "") -> BucketMerge:
    """Merge three versions of one bucket file by block id (``base`` None: added on both sides).

    Raises the first ``BlockFormatError`` of ``ours`` or ``theirs`` when one of them does not
    parse: a block there cannot be merged without guessing, so the caller leaves the file to a
    person. Damage in the base only costs the base's knowledge of the blocks it hid.
    """
    sides = [parse_partial(ours, path), parse_partial(theirs, path)]
    for side in sides:
        if side.problems:
            raise side.problems[0]
    old = _by_id(parse_partial(base, path)) if base is not None else {}
    mine, yours = (_by_id(s) for s in sides)
    out: dict[str, Block] = {}
    events: list[str] = []
    for block_id in sorted(set(mine) | set(yours)):
        result = merge_block(old.get(block_id), mine.get(block_id), yours.get(block_id))
        events.extend(f"{path}: {e}" if path else e for e in result.events)
        for block in result.blocks:
            if block.id in out and out[block.id] != block:
                raise BlockFormatError(
                    f"merging made two different blocks with id {block.id}",
                    path,
                    0,
                    "Give one of them a new id by hand, then commit the merge.",
                )
            out[block.id] = block
    blocks = tuple(canonical_order(out.values()))
    return BucketMerge(render_file(blocks).encode("utf-8"), events, blocks)
