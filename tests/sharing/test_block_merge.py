"""The bucket merge by block id, and the reconciliation pass, on blocks built in memory."""

from __future__ import annotations

import pytest

from elfmem.block.merge import merge_bucket, split_id
from elfmem.block.model import Block, Relation
from elfmem.block.parse import parse_bytes
from elfmem.block.reconcile import reconcile
from elfmem.block.render import render_file
from elfmem.errors import BlockFormatError

PATH = ".elfmem/memory/notes/knowledge/2026-01.md"


def blk(n: int, text: str, **kw: object) -> Block:
    fields: dict[str, object] = {"created": f"2026-01-{n % 28 + 1:02d}T00:00:00+00:00", **kw}
    return Block(id=f"{n:016x}", content=text, **fields)  # type: ignore[arg-type]


def data(*blocks: Block) -> bytes:
    return render_file(blocks).encode()


def both_ways(base: bytes | None, ours: bytes, theirs: bytes) -> list[Block]:
    one, two = merge_bucket(base, ours, theirs, PATH), merge_bucket(base, theirs, ours, PATH)
    assert one.data == two.data and one.events == two.events
    assert b"<<<<<<<" not in one.data
    return parse_bytes(one.data)


def test_blocks_added_on_both_sides_are_all_kept_in_canonical_order() -> None:
    base = data(blk(1, "one"))
    got = both_ways(base, data(blk(1, "one"), blk(5, "five")), data(blk(1, "one"), blk(3, "three")))
    assert [b.id for b in got] == [f"{n:016x}" for n in (1, 3, 5)]


def test_an_edit_on_one_side_is_taken_and_a_removal_on_one_side_holds() -> None:
    base = data(blk(1, "one"), blk(2, "two"))
    got = both_ways(base, data(blk(1, "one, edited"), blk(2, "two")), data(blk(1, "one")))
    assert [(b.id[-1], b.content) for b in got] == [("1", "one, edited")]


def test_an_add_add_with_no_base_keeps_both() -> None:
    got = both_ways(None, data(blk(1, "one")), data(blk(2, "two")))
    assert [b.content for b in got] == ["one", "two"]


def test_text_edited_on_both_sides_keeps_both_versions_linked_as_a_revision() -> None:
    base = data(blk(1, "pool size is 20"))
    ours, theirs = blk(1, "pool size is 30"), blk(1, "pool size is 40")
    result = merge_bucket(base, data(ours), data(theirs), PATH)
    assert result.data == merge_bucket(base, data(theirs), data(ours), PATH).data
    first, second = parse_bytes(result.data)
    assert {first.content, second.content} == {"pool size is 30", "pool size is 40"}
    assert first.id == f"{1:016x}"
    assert second.id == split_id(first.id, second.content, second.cue)
    assert Relation("contradicts", first.id) in second.relations
    assert Relation("supersedes", first.id) in second.relations
    assert any("kept both versions" in e for e in result.events)


def test_fields_changed_on_different_sides_merge_without_a_split() -> None:
    base = blk(1, "one", tags=("a",), extra=(("owner", "bob"),))
    ours = blk(1, "one, edited", tags=("a",), extra=(("owner", "bob"),))
    theirs = blk(1, "one", tags=("a", "b"), extra=(("owner", "bob"), ("tier", "durable")))
    [got] = both_ways(data(base), data(ours), data(theirs))
    assert got.content == "one, edited" and got.tags == ("a", "b")
    assert dict(got.extra) == {"owner": "bob", "tier": "durable"}


def test_removed_on_one_side_and_edited_on_the_other_keeps_the_edit_and_says_so() -> None:
    base = data(blk(1, "one"), blk(2, "two"))
    result = merge_bucket(base, data(blk(2, "two")), data(blk(1, "one, fixed"), blk(2, "two")))
    assert [b.content for b in parse_bytes(result.data)] == ["one, fixed", "two"]
    assert any("edited on one side and removed on the other" in e for e in result.events)


def test_a_side_that_does_not_parse_is_refused_not_guessed() -> None:
    broken = data(blk(1, "one")) + b"<<<<<<< HEAD\n=======\n>>>>>>> x\n"
    with pytest.raises(BlockFormatError):
        merge_bucket(None, broken, data(blk(2, "two")), PATH)


def test_unknown_frontmatter_keys_and_inline_fields_survive() -> None:
    kept = blk(1, "one", extra=(("owner", "bob"),), fields=(("reviewed-by", "alice"),))
    edited = kept.with_changes(content="one, edited")
    got = both_ways(data(kept), data(edited), data(kept, blk(2, "two")))
    assert got == [edited, blk(2, "two")]


def test_reconcile_puts_a_moved_and_edited_block_where_it_moved_with_the_edit() -> None:
    old = blk(1, "one")
    files = {
        "log/knowledge/2026-01.md": [blk(1, "one, edited")],
        "notes/knowledge/2026-01.md": [blk(1, "one", tags=("promoted",))],
    }
    result = reconcile(files, {old.id: ("log/knowledge/2026-01.md", old)})
    assert result.files["log/knowledge/2026-01.md"] == ()
    [got] = result.files["notes/knowledge/2026-01.md"]
    assert got.content == "one, edited" and got.tags == ("promoted",)


def test_reconcile_keeps_a_forgotten_and_edited_block_live() -> None:
    old = blk(1, "one")
    files = {
        "notes/knowledge/2026-01.md": [blk(1, "one, edited")],
        "archive/knowledge/2026-01.md": [old],
    }
    result = reconcile(files, {old.id: ("notes/knowledge/2026-01.md", old)})
    assert result.files == {"archive/knowledge/2026-01.md": ()}
    assert any("forgotten on one side and edited" in e for e in result.events)


def test_reconcile_without_a_base_keeps_every_version() -> None:
    files = {
        "log/knowledge/2026-01.md": [blk(1, "one, a")],
        "notes/knowledge/2026-01.md": [blk(1, "one, b")],
    }
    result = reconcile(files)
    kept = [b.content for bs in result.files.values() for b in bs]
    assert sorted(kept) == ["one, a", "one, b"]


def test_reconcile_lays_out_an_overflowing_bucket_chain_again() -> None:
    blocks = [blk(n, f"block {n}") for n in range(1, 302)]
    files = {
        "notes/knowledge/2026-01.md": blocks[:280],
        "notes/knowledge/2026-01-2.md": blocks[280:],
    }
    result = reconcile(files)
    sizes = {p: len(bs) for p, bs in result.files.items()}
    assert sizes == {"notes/knowledge/2026-01.md": 250, "notes/knowledge/2026-01-2.md": 51}
    assert reconcile({p: list(bs) for p, bs in result.files.items()}).files == {}


_ONE_SIDE_EDITS = {
    "tags": {"tags": ("reviewed",)},
    "relations": {"relations": (Relation("requires", "00000000000000aa"),)},
    "inline fields": {"fields": (("owner", "ops"),)},
    "pinned": {"pinned": True},
}


@pytest.mark.parametrize("kind", sorted(_ONE_SIDE_EDITS))
def test_reconcile_keeps_live_a_block_forgotten_on_one_side_and_edited_in_any_field(
    kind: str,
) -> None:
    old = blk(1, "one")
    edited = old.with_changes(**_ONE_SIDE_EDITS[kind])  # type: ignore[arg-type]
    files = {
        "notes/knowledge/2026-01.md": [edited],
        "archive/knowledge/2026-01.md": [old],
    }
    result = reconcile(files, {old.id: ("notes/knowledge/2026-01.md", old)})
    assert result.files == {"archive/knowledge/2026-01.md": ()}
    assert any("forgotten on one side and edited" in e for e in result.events)


_TARGETS = {"ops": "00000000000000a1", "stale": "00000000000000a2", "db": "00000000000000a3"}
_LISTS = {
    "tags": lambda items: {"tags": tuple(items)},
    "relations": lambda items: {
        "relations": tuple(Relation("requires", _TARGETS[i]) for i in items)
    },
    "inline fields": lambda items: {"fields": tuple((i, "yes") for i in items)},
}


@pytest.mark.parametrize("kind", sorted(_LISTS))
def test_an_item_removed_on_one_side_stays_removed_when_the_other_side_adds_one(
    kind: str,
) -> None:
    """Guard: base ``ops, stale``; ours drops ``stale``; theirs adds ``db`` → ``ops, db``."""
    make = _LISTS[kind]
    base = blk(1, "one", **make(["ops", "stale"]))
    ours = blk(1, "one", **make(["ops"]))
    theirs = blk(1, "one", **make(["ops", "stale", "db"]))
    [got] = both_ways(data(base), data(ours), data(theirs))
    assert got == blk(1, "one", **make(["ops", "db"]))


@pytest.mark.parametrize("with_base", [False, True])
def test_pinned_stays_pinned_when_the_same_block_is_added_or_changed_on_both_sides(
    with_base: bool,
) -> None:
    """Guard: one side pins, the other changes something else; the pin is never lost."""
    base = data(blk(1, "one", tags=("a",))) if with_base else None
    pinned = blk(1, "one", tags=("a",), pinned=True)
    other = blk(1, "one", tags=("a", "b"))
    [got] = both_ways(base, data(pinned), data(other))
    assert got.pinned and got.tags == ("a", "b")
    texts = both_ways(base, data(pinned), data(other.with_changes(content="one, edited")))
    assert texts and all(b.pinned for b in texts)
