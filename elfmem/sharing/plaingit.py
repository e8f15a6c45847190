"""Keeping plain ``git fetch``/``pull``/``push``/``clone`` working for memory.

- ``setup``: the fetch refspecs (notes, and the memory ref in ref mode) into remote-tracking
  refs; run by ``init``, ``hooks install`` and ``sync``.
- ``on_open``: every elfmem command starts here. A fresh clone of a ref-mode memory adopts its
  memory ref; a clone that has memory but no notes refspec yet gets one (and the merge driver's
  config, which a clone does not copy) and fetches the ledger once (a plain ``git clone``
  fetches branches only); and tracking notes that moved since the last look are merged in. The
  check is a small file read and one ref lookup per remote.
- ``pre_push`` and ``after_push``: the ledger rides along with the user's own ``git push``.
  pre-push runs before the remote answers (and on ``--dry-run``), so it only flushes the spool
  and notes the commits being sent; the reference-transaction hook, once the push has moved a
  remote-tracking ref to one of them, merges the remote's notes and pushes ours without force.
  A dry run, a refused push or a push to a bare URL sends no notes; the next sync does. Neither
  ever blocks or fails the user's push.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2

from elfmem.errors import ElfmemError
from elfmem.rhythms.result import Result
from elfmem.store import Store
from elfmem.store import repo as repo_mod
from elfmem.store.notes import NOTES_REF
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

_ZERO = "0" * 40
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
                from elfmem.sharing import driver as merge_driver

                merge_driver.register(store.workdir, attributes=False)
            _first_fetch(repo)
        return absorb(store)
    except (ElfmemError, OSError, pygit2.GitError, ValueError):
        return Absorbed()


def _first_fetch(repo: pygit2.Repository) -> None:
    """The ledger a plain ``git clone`` left behind: one bounded fetch per remote."""
    from elfmem.store import transport

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
        from elfmem.store.notesmerge import merge_notes  # only for notes that moved

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


PENDING_FILE = "push-pending"
"""In the state folder: ``{remote: [local commit ids being pushed]}``, written by pre-push and
consumed by reference-transaction once the push moved a remote-tracking ref to one of them."""


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


def _pending_path(store: Store) -> Path:
    return store.state_dir / PENDING_FILE


def _read_pending(store: Store) -> dict[str, list[str]]:
    try:
        data = json.loads(_pending_path(store).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): [str(x) for x in v] for k, v in data.items() if isinstance(v, list)}


def _write_pending(store: Store, pending: dict[str, list[str]]) -> None:
    path = _pending_path(store)
    if not pending:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_name(f".{PENDING_FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(pending, sort_keys=True), "utf-8")
    os.replace(tmp, path)


def pre_push(store: Store, remote: str, lines: Sequence[str] = ()) -> PrePush:
    """Flush the spool and note which commits this push sends (git's pre-push input: ``<local
    ref> <local oid> <remote ref> <remote oid>``). The notes go only once the remote has taken
    the push (``after_push``): pre-push runs before the remote answers, and on ``--dry-run``."""
    flushed = 0
    try:
        flushed = store.flush_spool()
        sent = [p[1] for p in (line.split() for line in lines) if len(p) == 4 and p[1] != _ZERO]
        if sent and store.ledger.tip() is not None:
            pending = _read_pending(store)
            pending[remote] = sorted(set(sent))
            _write_pending(store, pending)
        return PrePush(flushed, False, "notes go once the remote takes the push" if sent else "")
    except (ElfmemError, OSError, pygit2.GitError) as exc:
        return PrePush(flushed, False, f"notes not pushed: {exc}")


def after_push(store: Store, lines: Sequence[str]) -> PrePush:
    """reference-transaction, committed: a remote-tracking ref moved to a commit a pending push
    sent, so that push succeeded; push the notes to the same remote. Never raising."""
    pending = _read_pending(store)
    moved = [p for p in (line.split() for line in lines) if len(p) == 3]
    done = [
        remote
        for remote, sent in pending.items()
        if any(ref.startswith(f"refs/remotes/{remote}/") and new in sent for _, new, ref in moved)
    ]
    if not done:
        return PrePush(0, False)
    for remote in done:
        del pending[remote]
    try:
        _write_pending(store, pending)
    except OSError as exc:
        return PrePush(0, False, f"notes not pushed: {exc}")
    results = [push_notes(store, remote) for remote in done]
    said = "; ".join(r.message for r in results if r.message)
    return PrePush(0, any(r.notes_pushed for r in results), said)


def push_notes(store: Store, remote: str) -> PrePush:
    """Merge the remote's notes and push ours: bounded, never forced, never raising."""
    from elfmem.store import transport
    from elfmem.store.notesmerge import merge_notes

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
                return PrePush(flushed, True, f"to {remote}")
        return PrePush(flushed, False, "the remote's notes kept moving; `elfmem sync` later")
    except (ElfmemError, OSError, pygit2.GitError) as exc:
        return PrePush(flushed, False, f"notes not pushed: {exc}")
