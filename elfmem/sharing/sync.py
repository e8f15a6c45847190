"""``elfmem sync``: bring another clone's memory in and send ours out, through a git remote.

Ref mode: fetch the memory ref and the notes into remote-tracking refs, merge both (the memory
tree through ``treemerge``, the notes by union of lines), push both without force. Branch mode:
the notes only; the memory files travel with the user's own ``git pull``/``git push``, and
elfmem never merges or pushes a code branch. A push the remote rejects because it moved is
fetched, merged and tried again (bounded, jittered): "fetch first", "non-fast-forward", and a ref
another receive held locked at that moment ("failed to update ref", "cannot lock ref"). An
unreachable remote, or one whose hook or protection declines, is a ``RemoteError`` (exit 8) that
says what this sync already merged here; every local commit made before it stays, and nothing is
forced.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from elfmem.errors import RemoteError
from elfmem.progress import Progress, silent
from elfmem.rhythms.results import Result
from elfmem.store import transport
from elfmem.store.notes import NOTES_REF
from elfmem.store.notesmerge import merge_notes
from elfmem.store.refmerge import merge_ref
from elfmem.store.tracking import configure, memory_tracking, notes_tracking

if TYPE_CHECKING:
    from elfmem.rhythms.core import Core

ATTEMPTS = 6
"""Fetch-merge-push rounds before giving up on a remote that keeps moving."""


@dataclass(frozen=True)
class SyncResult(Result):
    remote: str
    mode: str
    """``ref`` (memory ref and notes travel) or ``branch`` (the notes only)."""
    memory_ref: str | None = None
    """The memory ref synced (ref mode), else None."""
    memory_in: str = "none"
    """What came in on the memory ref: none, created, fast-forward or merge."""
    memory_commits_in: int = 0
    memory_commits_out: int = 0
    notes_in: str = "none"
    """What came in on the notes: none, fast-forward or merge."""
    notes_blocks_in: int = 0
    """Notes (one per block, plus the clock) that received lines from the remote."""
    notes_lines_in: int = 0
    notes_commits_out: int = 0
    pushed: list[str] = field(default_factory=list)
    """Refs pushed."""
    attempts: int = 1
    events: list[str] = field(default_factory=list)
    """What the merges did, one line each."""

    @property
    def summary(self) -> str:
        parts = []
        if self.mode == "ref":
            parts.append(
                f"memory: {self.memory_commits_in} commit(s) in ({self.memory_in}), "
                f"{self.memory_commits_out} out"
            )
        parts.append(
            f"notes: {self.notes_lines_in} ledger line(s) in for {self.notes_blocks_in} "
            f"note(s) ({self.notes_in}), {self.notes_commits_out} commit(s) out"
        )
        where = f"Synced with {self.remote} ({self.mode} mode"
        if self.mode == "branch":
            where += "; memory files travel with your own git pull/push"
        merged = "".join(f"\n  {event}" for event in self.events)  # as --json lists them
        return where + "): " + "; ".join(parts) + "." + merged


def _tip(repo: pygit2.Repository, ref: str) -> str | None:
    found = repo.references.get(ref)
    return str(found.resolve().target) if found is not None else None


def _ahead(repo: pygit2.Repository, tip: str | None, remote_tip: str | None) -> int:
    if tip is None or tip == remote_tip:
        return 0
    walker = repo.walk(tip)
    if remote_tip is not None and pygit2.Oid(hex=remote_tip) in repo:
        walker.hide(remote_tip)
    return sum(1 for _ in walker)


def _set_tracking(repo: pygit2.Repository, ref: str, oid: str) -> None:
    """After a push, the tracking ref holds what the remote now has (plain git does the same)."""
    repo.references.create(ref, pygit2.Oid(hex=oid), force=True)


class _Tally:
    def __init__(self) -> None:
        self.memory_in = "none"
        self.memory_commits_in = 0
        self.notes_in = "none"
        self.notes_blocks = 0
        self.notes_lines = 0
        self.events: list[str] = []

    def memory(self, kind: str, commits: int, events: list[str]) -> None:
        if kind != "none":
            self.memory_in = kind if self.memory_in in ("none", kind) else "merge"
        self.memory_commits_in += commits
        self.events += events

    def notes(self, kind: str, blocks: int, lines: int) -> None:
        if kind != "none":
            self.notes_in = kind if self.notes_in in ("none", kind) else "merge"
        self.notes_blocks += blocks
        self.notes_lines += lines

    def local(self, pushed: Sequence[str]) -> str:
        """What this sync has done here so far, for an error raised part-way through."""
        done = []
        if self.memory_in != "none":
            done.append(f"the memory ({self.memory_in}, {self.memory_commits_in} commit(s) in)")
        if self.notes_in != "none":
            done.append(f"the ledger ({self.notes_in}, {self.notes_lines} line(s) in)")
        sent = f"; already pushed: {', '.join(sorted(set(pushed)))}" if pushed else ""
        if not done:
            return "nothing local was changed" + sent
        return (
            f"this sync merged {' and '.join(done)} from the remote first, and that is kept "
            f"here (the next `elfmem sync` pushes it){sent}"
        )


@dataclass(slots=True)
class _Plan:
    """One sync's remote and refs."""

    git_path: Path
    remote: str
    notes_track: str
    mem_ref: str | None
    mem_track: str | None
    out_notes: int = 0
    out_mem: int = 0
    pushed: list[str] = field(default_factory=list)


def _fetch_and_merge(core: Core, plan: _Plan, tally: _Tally) -> tuple[str | None, str | None]:
    """Fetch into the tracking refs and merge; returns the remote's (notes, memory) tips."""
    store = core.store
    specs = [f"+{NOTES_REF}:{plan.notes_track}"]
    if plan.mem_ref and plan.mem_track:
        specs.append(f"+{plan.mem_ref}:{plan.mem_track}")
    transport.fetch(plan.git_path, plan.remote, specs)
    theirs_notes = _tip(store.repo, plan.notes_track)
    if theirs_notes is not None:
        done = merge_notes(store.ledger, theirs_notes, f"notes: merge from {plan.remote}")
        tally.notes(done.kind, done.anchors, done.lines)
    theirs_mem = _tip(store.repo, plan.mem_track) if plan.mem_track else None
    if plan.mem_ref and theirs_mem is not None:
        merged = merge_ref(store.repo, theirs_mem, store.agent, plan.remote)
        tally.memory(merged.kind, merged.commits_in, merged.events)
    return theirs_notes, theirs_mem


def _push(
    core: Core, plan: _Plan, tally: _Tally, theirs_notes: str | None, theirs_mem: str | None
) -> bool:
    """Push what the remote lacks, without force; True when nothing was refused."""
    repo = core.store.repo
    notes_tip = core.store.ledger.tip()
    mem_tip = _tip(repo, plan.mem_ref) if plan.mem_ref else None
    want: dict[str, tuple[str, str, str | None]] = {}
    if notes_tip is not None and notes_tip != theirs_notes:
        want[NOTES_REF] = (notes_tip, plan.notes_track, theirs_notes)
    if plan.mem_ref and plan.mem_track and mem_tip is not None and mem_tip != theirs_mem:
        want[plan.mem_ref] = (mem_tip, plan.mem_track, theirs_mem)
    if not want:
        return True
    counts = {ref: _ahead(repo, tip, before) for ref, (tip, _, before) in want.items()}
    report = transport.push(
        plan.git_path,
        plan.remote,
        [f"{tip}:{ref}" for ref, (tip, _, _) in want.items()],
        local=tally.local(plan.pushed),
    )
    refused = {u.target for u in report.rejected}
    for ref, (tip, track, _) in want.items():
        if ref in refused:
            continue
        _set_tracking(repo, track, tip)
        plan.pushed.append(ref)
        if ref == NOTES_REF:
            plan.out_notes += counts[ref]
        else:
            plan.out_mem += counts[ref]
    return not refused


def sync(core: Core, remote: str | None = None, progress: Progress = silent) -> SyncResult:
    store = core.store
    repo = store.repo
    git_path = Path(repo.path)
    name = transport.remote_or_default(git_path, remote)
    configure(repo)
    store.flush_spool()
    mem_ref = store.branch if store.ref_mode else None
    plan = _Plan(
        git_path,
        name,
        notes_tracking(name),
        mem_ref,
        memory_tracking(name, mem_ref) if mem_ref else None,
    )
    tally = _Tally()
    attempt = 0
    while True:
        attempt += 1
        progress("sync", attempt - 1, ATTEMPTS)
        try:
            theirs_notes, theirs_mem = _fetch_and_merge(core, plan, tally)
        except RemoteError as exc:
            if attempt == 1:
                raise
            raise RemoteError(exc.message, f"{exc.recovery} ({tally.local(plan.pushed)})") from exc
        if _push(core, plan, tally, theirs_notes, theirs_mem):
            break
        if attempt >= ATTEMPTS:
            raise RemoteError(
                f"remote {name!r} kept moving: {ATTEMPTS} rounds of fetch, merge and push did "
                "not catch up.",
                f"Run `elfmem sync` again in a moment; {tally.local(plan.pushed)}.",
            )
        time.sleep(min(2.0, 0.05 * 2**attempt) * random.uniform(0.5, 1.5))
    progress("sync", ATTEMPTS, ATTEMPTS)
    if tally.memory_in != "none" or tally.notes_in != "none":
        core.sync()  # the index follows what came in
    return SyncResult(
        remote=name,
        mode="ref" if mem_ref else "branch",
        memory_ref=mem_ref,
        memory_in=tally.memory_in,
        memory_commits_in=tally.memory_commits_in,
        memory_commits_out=plan.out_mem,
        notes_in=tally.notes_in,
        notes_blocks_in=tally.notes_blocks,
        notes_lines_in=tally.notes_lines,
        notes_commits_out=plan.out_notes,
        pushed=sorted(set(plan.pushed)),
        attempts=attempt,
        events=tally.events,
    )
