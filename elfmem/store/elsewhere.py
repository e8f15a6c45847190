"""Where the memory is when the checkout holds none: on another branch, local or fetched.

``git clone`` of a bare repository whose HEAD names ``master``, when the memory went to ``main``,
checks nothing out; a person who switched to a branch made before ``elfmem init`` sees none
either. Both look like a new, empty memory, and ``elfmem init`` would start a second one beside
the real one. This finds the branch that holds it, so every command can say ``git switch``.

The memory can also have left the branch: another clone ran ``elfmem mode ref`` and pushed, so
its branch deletes ``.elfmem`` while this clone's still holds (and adds to) it. ``git pull`` then
stops at a modify/delete conflict, or has fetched the move not merged yet. ``memory_moved`` finds
that move, so every command can name the steps that follow it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pygit2

from elfmem.block.layout import MEMORY_DIR
from elfmem.store.repo import DEFAULT_MEMORY_REF, head_commit, in_progress, ref_mode

MOVE_SUBJECT = "mode: memory moves to "
"""The subject of the commit ``elfmem mode ref`` makes on the branch (``sharing/mode.py``)."""
MOVE_SEARCH = 200
"""Commits of the other side looked through for the move (it is recent when it matters)."""


def memory_elsewhere(repo: pygit2.Repository) -> str | None:
    """The branch to ``git switch`` to when HEAD's commit holds no memory and a branch does
    (``main`` first; a fetched ``origin/main`` is named ``main``, which ``git switch`` makes);
    None when the checkout holds memory, in ref mode, or when no branch holds any."""
    if repo.is_bare or ref_mode(repo):
        return None
    head = head_commit(repo)
    if head is not None and MEMORY_DIR in head.tree:
        return None
    names = [*sorted(repo.branches.local), *sorted(repo.branches.remote)]
    names.sort(key=lambda n: n.rsplit("/", 1)[-1] != "main")  # stable: local before fetched
    for name in names:
        if name.endswith("/HEAD"):
            continue
        try:
            commit = repo.branches[name].peel(pygit2.Commit)
        except (KeyError, pygit2.GitError, ValueError):
            continue
        if MEMORY_DIR in commit.tree:
            return name.split("/", 1)[1] if name in repo.branches.remote else name
    return None


@dataclass(frozen=True, slots=True)
class Moved:
    """Another clone moved the memory onto its own ref; this branch still holds it."""

    ref: str
    """Where the memory lives now, e.g. ``refs/heads/elfmem``."""
    by: str
    """The other side: the branch being merged (``MERGE_HEAD``'s name) or the upstream."""
    merging: bool
    """True while git is in the middle of the merge that brought the move."""

    @property
    def steps(self) -> str:
        """The commands that follow the move, keeping this clone's memory commits."""
        mode = "elfmem mode ref" + ("" if self.ref == DEFAULT_MEMORY_REF else f" --ref {self.ref}")
        first = "`git merge --abort`, then " if self.merging else ""
        again = " again" if self.merging else ""
        return (
            f"{first}`{mode}` (this clone's memory moves there too), `elfmem sync` (merges it "
            f"with the one the other clone pushed), then `git pull`{again}"
        )

    @property
    def message(self) -> str:
        where = "the merge in progress brings" if self.merging else f"{self.by} has"
        return (
            f"memory moved to its own ref {self.ref}: {where} another clone's `elfmem mode ref`, "
            f"which deletes .elfmem from the branch this clone still writes memory to. To follow "
            f"it: {self.steps}. Not `elfmem init`, which would start a second memory."
        )


def memory_moved(repo: pygit2.Repository) -> Moved | None:
    """The move to a ref that the commit being merged, or else the branch's upstream, made
    after this branch's tip; None in ref mode, when this branch holds no memory, or when the
    other side still holds it."""
    if repo.is_bare or ref_mode(repo):
        return None
    head = head_commit(repo)
    if head is None or MEMORY_DIR not in head.tree:
        return None
    for name, theirs, merging in _other_sides(repo):
        if MEMORY_DIR in theirs.tree:
            continue
        ref = _move_between(repo, theirs, head)
        if ref is not None:
            return Moved(ref, name, merging)
    return None


def _other_sides(repo: pygit2.Repository) -> list[tuple[str, pygit2.Commit, bool]]:
    sides: list[tuple[str, pygit2.Commit, bool]] = []
    if in_progress(repo) == "a merge":
        try:
            heads = (Path(repo.path) / "MERGE_HEAD").read_text().split()
            commit = repo.get(heads[0]) if heads else None
        except (OSError, ValueError):
            commit = None
        if isinstance(commit, pygit2.Commit):
            sides.append(("the branch being merged", commit, True))
    try:
        branch = None if repo.head_is_detached else repo.branches.local.get(repo.head.shorthand)
        upstream = branch.upstream if branch is not None else None
        if upstream is not None:
            sides.append((upstream.shorthand, upstream.peel(pygit2.Commit), False))
    except (KeyError, ValueError, pygit2.GitError):
        pass
    return sides


def _move_between(
    repo: pygit2.Repository, theirs: pygit2.Commit, head: pygit2.Commit
) -> str | None:
    """The ref named by the newest ``mode: memory moves to REF`` commit in ``theirs`` and not
    in ``head``."""
    try:
        walker = repo.walk(theirs.id, pygit2.enums.SortMode.TOPOLOGICAL)
        walker.hide(head.id)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    for seen, commit in enumerate(walker):
        if seen >= MOVE_SEARCH:
            break
        subject = commit.message.split("\n", 1)[0]
        if subject.startswith(MOVE_SUBJECT) and "Elfmem-Op: mode" in commit.message:
            return subject.removeprefix(MOVE_SUBJECT).strip()
    return None
