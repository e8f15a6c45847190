"""Keeping plain ``git fetch``/``pull``/``push``/``clone`` working for memory.

- ``setup``: the fetch refspecs (notes, and the memory ref in ref mode) into remote-tracking
  refs; run by ``init``, ``hooks install`` and ``sync``.
- ``on_open``: every elfmem command starts here. A fresh clone of a ref-mode memory adopts its
  memory ref; a clone that has memory but no notes refspec yet gets one (and the merge driver's
  config, which a clone does not copy) and fetches the ledger once (a plain ``git clone``
  fetches branches only); and tracking notes that moved since the last look are merged in. The
  check is a small file read and one ref lookup per remote.
- ``pre_push``: the ledger rides along with the user's own ``git push``: flushed, merged with
  the remote's, pushed without force. It never blocks or fails that push.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pygit2

from elfmem.errors import ElfmemError
from elfmem.rhythms.results import Result
from elfmem.sharing import driver as merge_driver
from elfmem.store import Store, transport
from elfmem.store import repo as repo_mod
from elfmem.store.notes import NOTES_REF
from elfmem.store.notesmerge import merge_notes
from elfmem.store.tracking import (
    MergedMarks,
    adopt_remote_memory,
    configure,
    configured,
    memory_tracking,
    notes_refspec,
    notes_tracking,
    notes_tracking_tips,
)

FIRST_FETCH_TIMEOUT = 20.0
PRE_PUSH_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class Absorbed:
    notes_lines: int = 0
    memory: str = "none"


def setup(repo: pygit2.Repository) -> list[str]:
    """Add the refspecs plain git needs (idempotent); returns what was added."""
    return configure(repo)


def _has_memory(store: Store) -> bool:
    return store.memory_tree_oid() is not None


def on_open(store: Store) -> Absorbed:
    """Adopt, configure once, and merge what plain git fetched. Never raises: a read must
    work in a read-only or odd repository, and the next write retries."""
    repo = store.repo
    try:
        adopt_remote_memory(repo)
        if not _has_memory(store) or not list(repo.remotes):
            return Absorbed()
        if not configured(repo):  # the first elfmem command in this clone
            configure(repo)
            if store.workdir is not None:  # plain git pull merges buckets by block id
                merge_driver.register(store.workdir, attributes=False)
            _first_fetch(repo)
        return absorb(store)
    except (ElfmemError, OSError, pygit2.GitError, ValueError):
        return Absorbed()


def _first_fetch(repo: pygit2.Repository) -> None:
    """The ledger a plain ``git clone`` left behind: one bounded fetch per remote."""
    for remote in repo.remotes:
        name = remote.name or ""
        try:
            transport.fetch(Path(repo.path), name, [notes_refspec(name)], FIRST_FETCH_TIMEOUT)
        except ElfmemError:
            continue


def absorb(store: Store) -> Absorbed:
    """Merge tracking notes that moved since the last merge; in ref mode, fast-forward the
    memory ref to a tracking tip that only adds to it (a real merge is ``elfmem sync``'s)."""
    repo = store.repo
    marks = MergedMarks(repo)
    done = marks.read()
    tips = notes_tracking_tips(repo)
    lines = 0
    changed = False
    for ref, tip in tips.items():
        if done.get(ref) == tip:
            continue
        result = merge_notes(store.ledger, tip, f"notes: merge {ref}")
        lines += result.lines
        done[ref] = tip
        changed = True
    memory = "none"
    if store.ref_mode:
        memory = _fast_forward(store, done)
        changed = changed or memory != "none"
    if changed:
        marks.write(done)
    return Absorbed(lines, memory)


def _fast_forward(store: Store, done: dict[str, str]) -> str:
    repo = store.repo
    ref = store.branch
    for remote in repo.remotes:
        track = memory_tracking(remote.name or "", ref)
        found = repo.references.get(track)
        if found is None or done.get(track) == str(found.target):
            continue
        theirs = found.resolve().target
        done[track] = str(theirs)
        with repo_mod.write_lock(repo):
            local = repo.references.get(ref)
            if local is None:
                repo.create_reference_direct(ref, theirs, False, message="elfmem: from " + track)
                return "created"
            base = repo.merge_base(local.target, theirs)
            if base is not None and base == local.target and theirs != local.target:
                local.set_target(theirs, "elfmem: fast-forward from " + track)
                return "fast-forward"
    return "none"


@dataclass(frozen=True)
class PrePush(Result):
    events_flushed: int
    notes_pushed: bool
    message: str = ""

    @property
    def summary(self) -> str:
        done = "notes pushed along" if self.notes_pushed else "notes not pushed"
        text = f"Flushed {self.events_flushed} ledger event(s); {done}"
        return text + (f" ({self.message})." if self.message else ".")


def pre_push(store: Store, remote: str) -> PrePush:
    """Flush the spool, merge the remote's notes, push ours: bounded, never forced, never
    raising (the user's push goes ahead whatever happens here)."""
    flushed = 0
    try:
        flushed = store.flush_spool()
        tip = store.ledger.tip()
        if tip is None:
            return PrePush(flushed, False)
        git_path = Path(store.repo.path)
        track = notes_tracking(remote)
        for _ in range(2):
            transport.fetch(git_path, remote, [notes_refspec(remote)], PRE_PUSH_TIMEOUT)
            found = store.repo.references.get(track)
            theirs = str(found.target) if found is not None else None
            if theirs is not None:
                merge_notes(store.ledger, theirs, f"notes: merge from {remote}")
            tip = store.ledger.tip()
            if tip is None or tip == theirs:
                return PrePush(flushed, False)
            report = transport.push(git_path, remote, [f"{tip}:{NOTES_REF}"], PRE_PUSH_TIMEOUT)
            if not report.rejected:
                store.repo.references.create(track, pygit2.Oid(hex=tip), force=True)
                return PrePush(flushed, True)
        return PrePush(flushed, False, "the remote's notes kept moving; `elfmem sync` later")
    except (ElfmemError, OSError, pygit2.GitError) as exc:
        return PrePush(flushed, False, f"notes not pushed: {exc}")
