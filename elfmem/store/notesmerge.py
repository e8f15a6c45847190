"""Bring another notes commit into the ledger by union of JSONL lines, never by force.

Ledger events are self-contained and commutative (ledger.py), so the union of two notes trees'
lines is the correct merge whatever the order. Used when a restored backup or a plain clone
carries notes the local ref does not have yet: the other tip is fast-forwarded to when the local
ref is absent or behind, and merged with two parents otherwise, so a later push is a
fast-forward for the remote too.
"""

from __future__ import annotations

import pygit2

from elfmem.errors import ConflictError
from elfmem.store.notes import NOTES_REF, NotesLedger, _locate, union_note
from elfmem.store.objects import ObjectBatch
from elfmem.store.repo import write_lock

_ATTEMPTS = 20


def merge_notes(repo: pygit2.Repository, other: str, ref: str = NOTES_REF) -> str | None:
    """Merge the notes commit ``other`` into ``ref``; the new tip, or None if nothing changed."""
    ledger = NotesLedger(repo, ref)
    for _ in range(_ATTEMPTS):
        local = ledger.tip()
        if local == other or (local is not None and _contains(repo, local, other)):
            return None
        try:
            with write_lock(repo, "notes-ref"):
                if ledger.tip() != local:
                    continue
                if local is None:
                    repo.create_reference_direct(ref, other, False, message="notes: restore")
                    return other
                if _contains(repo, other, local):
                    repo.references[ref].set_target(other, "notes: fast-forward")
                    return other
                commit = _union_commit(repo, ledger, local, other)
                repo.references[ref].set_target(commit, "notes: union merge")
                return commit
        except (pygit2.GitError, OSError):
            continue
    raise ConflictError(
        f"{ref} kept moving while its fetched notes were being merged; nothing was lost.",
        "Run the command again.",
    )


def _contains(repo: pygit2.Repository, tip: str, other: str) -> bool:
    """True when commit ``other`` is ``tip`` or one of its ancestors."""
    return tip == other or bool(repo.descendant_of(tip, other))


def _union_commit(repo: pygit2.Repository, ledger: NotesLedger, local: str, other: str) -> str:
    base = repo.merge_base(local, other)
    changed = ledger.changed_anchors(str(base) if base is not None else None, other)
    ours = ledger.read_many(changed, local)
    theirs = ledger.read_many(changed, other)
    tree = repo[local].peel(pygit2.Tree)
    batch = ObjectBatch(repo)
    changes: dict[tuple[str, ...], pygit2.Oid | None] = {}
    for anchor in sorted(theirs):
        lines = theirs[anchor].split("\n")
        merged = union_note(ours.get(anchor, ""), lines)
        if merged is None:
            continue
        for entry_path in _paths_of(tree, anchor):
            changes[entry_path] = None
        changes[(anchor[:2], anchor[2:])] = batch.blob(merged.encode("utf-8", "surrogateescape"))
    tree_oid = (batch.edit(tree, changes) or tree.id) if changes else tree.id
    batch.store()
    signature = _signature(repo)
    message = "notes: union of the fetched ledger\n"
    commit = repo.create_commit(None, signature, signature, message, tree_oid, [local, other])
    return str(commit)


def _paths_of(tree: pygit2.Tree, anchor: str) -> list[tuple[str, ...]]:
    return [path for path, _ in _locate(tree, anchor)]


def _signature(repo: pygit2.Repository) -> pygit2.Signature:
    try:
        return repo.default_signature
    except (KeyError, pygit2.GitError):
        return pygit2.Signature("elfmem", "elfmem@localhost")
