"""Named crash points, so a test can kill a write at one exact step and check what survives.

``ELFMEM_FAULT=<point>`` (or ``<point>#<n>``: the n-th time the point is reached) makes the
process SIGKILL itself there. The variable is read once; unset, each point is one comparison of
``None`` with a string. docs/crash.md lists the points and what a kill at each one leaves.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from functools import cache

POINTS: dict[str, str] = {
    "write.planned": "objects stored, nothing else: no journal yet",
    "write.journal": "journal written; index lock, files, git's index and the ref untouched",
    "write.index-locked": "git's index.lock taken (elfmem's own, named in the journal)",
    "write.tmp": "a file's bytes are in its temporary file (.<name>.<pid>.tmp), not renamed yet",
    "write.file": "after each memory file is written to the working tree (#n: the n-th file)",
    "write.index": "git's index replaced; index.lock still held",
    "write.index-unlocked": "git's index stages the new blobs; the branch has not moved",
    "write.ref-lock": "inside the ref update: the branch's .lock file exists, the ref is old",
    "write.ref": "the branch moved (the write is committed), journal not yet dropped",
    "write.done": "journal dropped; the search index not yet updated",
    "notes.objects": "ledger note objects stored; refs/notes/elfmem not moved",
    "notes.ref-lock": "inside the notes ref update: refs/notes/elfmem.lock exists, the ref is old",
    "notes.ref": "refs/notes/elfmem moved",
    "notes-merge.objects": "sync's union merge of the notes stored as a commit; ref not moved",
    "notes-merge.ref": "the notes merge checked the ref is unchanged and is about to move it",
    "sync.merge-planned": "ref mode: the merged memory tree stored; the memory ref not moved",
    "sync.merge-ref": "ref mode: the memory ref moved to the merge commit",
}


@cache
def _armed() -> tuple[str, int] | None:
    value = os.environ.get("ELFMEM_FAULT")
    if not value:
        return None
    name, _, nth = value.partition("#")
    return name, int(nth) if nth.isdigit() else 1


_hits: dict[str, int] = {}


def point(name: str, leave: Callable[[], None] | None = None) -> None:
    """Die here if this point is armed; ``leave`` first builds what a kill inside a library
    call (libgit2's ref update) would leave behind, since no point can be placed inside it."""
    armed = _armed()
    if armed is None or armed[0] != name:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if _hits[name] < armed[1]:
        return
    if leave is not None:
        leave()
    os.kill(os.getpid(), signal.SIGKILL)
