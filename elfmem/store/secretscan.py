"""Credentials already in history: every memory blob ever committed, the notes, the messages.

The write-time check keeps new secrets out; this finds the ones that got in before it existed,
through ``--no-verify``, or past an override. It only reads. Purging rewrites history, which
elfmem never does by itself: the finding says which path and commit, and the fix says how.
Each blob is read once, however many commits share it, and each tree is walked once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pygit2
from pygit2.enums import SortMode

from elfmem.block.credentials import hits
from elfmem.store.notes import NOTES_REF

ELFMEM_DIR = ".elfmem"


@dataclass(frozen=True, slots=True)
class HistoryFinding:
    """A credential in history: its kind and where, never its value."""

    kind: str
    path: str
    """Repository-relative file (``.elfmem/memory/…``), ``<notes ref>:<note path>``, or
    ``commit message``."""
    line: int
    commit: str
    """The oldest commit scanned that holds it (on the branch, or on the notes ref)."""
    ref: str
    """The ref whose history holds it: the memory's branch or ``refs/notes/elfmem``."""


def _commits(repo: pygit2.Repository, ref: str) -> Iterator[pygit2.Commit]:
    """Oldest first, so a finding names the commit that brought it in."""
    try:
        tip = repo.references[ref].peel(pygit2.Commit)
    except (KeyError, pygit2.InvalidSpecError, ValueError):
        return
    yield from repo.walk(tip.id, SortMode.TOPOLOGICAL | SortMode.REVERSE)


def _blobs(
    repo: pygit2.Repository, tree: pygit2.Tree, prefix: str, seen: set[pygit2.Oid]
) -> Iterator[tuple[str, pygit2.Oid]]:
    """(path, blob oid) under ``tree`` for trees and blobs not met before."""
    for entry in tree:
        if entry.id in seen:
            continue
        seen.add(entry.id)
        path = f"{prefix}{entry.name}"
        if entry.type_str == "tree":
            sub = repo.get(entry.id)
            if isinstance(sub, pygit2.Tree):
                yield from _blobs(repo, sub, path + "/", seen)
        elif entry.type_str == "blob":
            yield path, entry.id


def _subtree(commit: pygit2.Commit, path: str) -> pygit2.Tree | None:
    if not path:
        return commit.tree
    try:
        entry = commit.tree[path]
    except KeyError:
        return None
    return entry if isinstance(entry, pygit2.Tree) else None


def _scan_ref(repo: pygit2.Repository, ref: str, under: str) -> Iterator[HistoryFinding]:
    seen: set[pygit2.Oid] = set()
    label = f"{ref}:" if ref == NOTES_REF else f"{under}/"
    for commit in _commits(repo, ref):
        ours = ref == NOTES_REF or "\nElfmem-Op: " in commit.message
        for hit in hits(commit.message) if ours else ():
            line = commit.message.count("\n", 0, hit.start) + 1
            yield HistoryFinding(hit.kind, "commit message", line, str(commit.id), ref)
        tree = _subtree(commit, under)
        if tree is None or tree.id in seen:
            continue
        seen.add(tree.id)
        for path, oid in _blobs(repo, tree, "", seen):
            blob = repo.get(oid)
            if not isinstance(blob, pygit2.Blob) or blob.is_binary:
                continue
            text = blob.data.decode("utf-8", "replace")
            for hit in hits(text):
                line = text.count("\n", 0, hit.start) + 1
                yield HistoryFinding(hit.kind, label + path, line, str(commit.id), ref)


def scan_history(repo: pygit2.Repository, branch: str) -> list[HistoryFinding]:
    """Every credential in ``.elfmem`` on ``branch``'s history and in the notes ref."""
    return [*_scan_ref(repo, branch, ELFMEM_DIR), *_scan_ref(repo, NOTES_REF, "")]
