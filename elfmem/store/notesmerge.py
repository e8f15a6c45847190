"""Merging another clone's ledger into ours: the union of each note's JSONL lines.

Ledger events are self-contained and commutative (docs/ledger.md), so the union of two clones'
lines folds to the same state whichever side merges, and in whatever order the lines sit. The
merge is a notes commit with both tips as parents, moved onto ``refs/notes/elfmem`` by
compare-and-swap like every append; when one side already contains the other it is a
fast-forward or nothing. Nothing here ever forces a ref.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

import pygit2

from elfmem.errors import ConflictError
from elfmem.store import faults
from elfmem.store.locks import RefIntent
from elfmem.store.notes import MAX_ATTEMPTS, NotesLedger, union_note
from elfmem.store.objects import ObjectBatch
from elfmem.store.repo import state_dir, write_lock


@dataclass(frozen=True, slots=True)
class NotesMerge:
    kind: str
    """``none`` (we had it all), ``fast-forward`` (we had nothing new), ``merge`` (a commit)."""
    commit: str | None
    """The notes tip after the merge."""
    anchors: int = 0
    """Notes (blocks, and the clock) that received lines from the other side."""
    lines: int = 0
    """Ledger lines that came in."""


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def merge_notes(ledger: NotesLedger, theirs: str, message: str = "") -> NotesMerge:
    """Merge notes commit ``theirs`` into ``ledger``'s ref; retried while the ref moves."""
    repo = ledger.repo
    if pygit2.Oid(hex=theirs) not in repo:
        raise ConflictError(
            f"notes commit {theirs[:12]} is not in this repository.",
            "Fetch it first (`elfmem sync` does), then run the command again.",
        )
    last: Exception | None = None
    for attempt in range(MAX_ATTEMPTS):
        try:
            with write_lock(repo, "notes-merge"):
                return _attempt(ledger, theirs, message)
        except (pygit2.GitError, OSError) as exc:  # the tip moved: read it again
            last = exc
            time.sleep(min(0.1, 0.001 * 2 ** min(attempt, 7)) * random.uniform(0.5, 1.5))
    raise ConflictError(
        f"{ledger.ref} kept moving; {MAX_ATTEMPTS} attempts to merge notes failed ({last})",
        "Run the command again; nothing was lost (the other side's notes stay fetched).",
    )


def _attempt(ledger: NotesLedger, theirs: str, message: str) -> NotesMerge:
    repo = ledger.repo
    ours = ledger.tip()
    if ours == theirs:
        return NotesMerge("none", ours)
    if ours is not None:
        base = repo.merge_base(ours, theirs)
        if base is not None and str(base) == theirs:
            return NotesMerge("none", ours)
    else:
        base = None
    changed = ledger.changed_anchors(str(base) if base is not None else None, theirs)
    incoming = ledger.read_many(changed, theirs)
    present = ledger.read_many(incoming, ours) if ours is not None else {}
    merged: dict[str, str] = {}
    lines_in = 0
    for anchor, text in incoming.items():
        mine = present.get(anchor, "")
        have = set(_lines(mine))
        new = [line for line in _lines(text) if line not in have]
        if new:
            lines_in += len(new)
            note = union_note(mine, new)
            if note is not None:
                merged[anchor] = note
    if ours is None or (base is not None and str(base) == ours):
        _move(ledger, ours, pygit2.Oid(hex=theirs), "notes: fast-forward from another clone")
        return NotesMerge("fast-forward", theirs, len(merged), lines_in)
    tree = ledger._tree(ours)  # noqa: SLF001 - the ledger's own tree reader
    batch = ObjectBatch(repo)
    changes: dict[tuple[str, ...], pygit2.Oid | None] = {}
    for anchor, note in merged.items():
        for path in _paths(tree, anchor):
            changes[path] = None
        changes[(anchor[:2], anchor[2:])] = batch.blob(note.encode("utf-8", "surrogateescape"))
    tree_oid = batch.edit(tree, changes) if changes else (tree.id if tree is not None else None)
    tree_oid = tree_oid or batch.tree([])
    batch.store()
    sig = ledger._default_signature()  # noqa: SLF001
    text = message or f"notes: merge {theirs[:12]} (union of ledger lines)"
    commit = repo.create_commit(None, sig, sig, text, tree_oid, [ours, theirs])
    faults.point("notes-merge.objects")
    _move(ledger, ours, commit, text)
    return NotesMerge("merge", str(commit), len(merged), lines_in)


def _paths(tree: pygit2.Tree | None, anchor: str) -> list[tuple[str, ...]]:
    from elfmem.store.notes import _locate  # the one reader of every fanout

    return [path for path, _ in _locate(tree, anchor)] if tree is not None else []


def _move(ledger: NotesLedger, old: str | None, new: pygit2.Oid, reflog: str) -> None:
    """Compare-and-swap the notes ref from ``old`` to ``new`` (raises when it moved)."""
    repo = ledger.repo
    intent = RefIntent(state_dir(repo), ledger.ref)
    intent.record(str(new))
    try:
        if old is None:
            ledger._create_ref(new, reflog)  # noqa: SLF001 - creation guarded as in append
            return
        ref = ledger._reference()  # noqa: SLF001
        if ref is None or str(ref.target) != old:
            raise OSError(f"{ledger.ref} moved")
        faults.point("notes-merge.ref")
        ref.set_target(new, reflog)  # libgit2 compares against the value read above
    finally:
        intent.drop()
