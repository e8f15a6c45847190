"""The steps that finish a ``git pull`` git's text merge left conflicted in memory files.

A clone without elfmem's merge driver (one made before the driver existed, or whose config lost
it) merges two buckets that both gained blocks as text, and the pull stops at conflict markers.
While that merge is in progress nothing is lost by going back: abort it, register the driver,
and pull again, and the driver merges each bucket by block id. Editing the markers by hand or
running ``index check`` is the slower road; this names the quick one.
"""

from __future__ import annotations

import pygit2

from elfmem.block.layout import MEMORY_DIR
from elfmem.store.repo import in_progress

DRIVER_KEY = "merge.elfmem.driver"


def text_merged_memory(repo: pygit2.Repository) -> list[str]:
    """Memory files a merge in progress left conflicted (changed on both sides) because this
    clone has no elfmem driver; empty otherwise."""
    if repo.is_bare or in_progress(repo) != "a merge" or DRIVER_KEY in repo.config:
        return []
    conflicts = repo.index.conflicts
    if conflicts is None:
        return []
    paths: set[str] = set()
    for _base, ours, theirs in conflicts:
        if ours is None or theirs is None:  # a modify/delete: no driver merges that
            continue
        if ours.path.startswith(MEMORY_DIR + "/"):
            paths.add(ours.path)
    return sorted(paths)


def driver_steps(paths: list[str]) -> str:
    """What to tell a person about ``paths`` from ``text_merged_memory``."""
    named = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    return (
        f"the merge in progress left conflict markers in {len(paths)} memory file(s) ({named}): "
        "this clone has no elfmem merge driver, so git merged them as text. Run `git merge "
        "--abort`, `elfmem hooks install` (it registers the driver), then `git pull` (or the "
        "same `git merge`) again: the driver merges memory files by block id"
    )
