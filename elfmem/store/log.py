"""Reading elfmem's own commits back: trailers, a block's history, the last undoable operation."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import pygit2
from pygit2.enums import SortMode

from elfmem.store import repo as repo_mod

_TRAILER_RE = re.compile(r"^(Elfmem-[A-Za-z-]+): (.+)$", re.MULTILINE)
_REVERTS_RE = re.compile(r"^This reverts commit ([0-9a-f]{40})\.$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class CommitInfo:
    commit_id: str
    subject: str
    """The first line of the commit message."""
    op: str
    """The operation (``Elfmem-Op`` trailer), e.g. ``remember``, ``edit``, ``dream``, ``undo``."""
    block_ids: tuple[str, ...]
    agent: str
    """The agent that made it (``Elfmem-Agent`` trailer); empty when the trailer is missing."""
    author: str
    """The git author's name (elfmem authors its commits as the agent)."""
    time: int
    """Commit time, in seconds since the Unix epoch."""
    reverts: str | None

    def to_dict(self) -> dict[str, object]:
        return {
            "commit_id": self.commit_id,
            "subject": self.subject,
            "op": self.op,
            "block_ids": list(self.block_ids),
            "agent": self.agent,
            "author": self.author,
            "time": self.time,
            "reverts": self.reverts,
        }


def trailers(message: str) -> list[tuple[str, str]]:
    return [(m[1], m[2].strip()) for m in _TRAILER_RE.finditer(message)]


def describe(commit: pygit2.Commit) -> CommitInfo | None:
    """The elfmem facts of a commit, or None for a commit elfmem did not make."""
    pairs = trailers(commit.message)
    ops = [v for k, v in pairs if k == "Elfmem-Op"]
    if not ops:
        return None
    reverts = _REVERTS_RE.search(commit.message)
    return CommitInfo(
        commit_id=str(commit.id),
        subject=commit.message.splitlines()[0] if commit.message else "",
        op=ops[0],
        block_ids=tuple(v for k, v in pairs if k == "Elfmem-Block"),
        agent=next((v for k, v in pairs if k == "Elfmem-Agent"), ""),
        author=commit.author.name,
        time=commit.commit_time,
        reverts=reverts[1] if reverts else None,
    )


def walk(repo: pygit2.Repository, limit: int = 100_000) -> Iterator[pygit2.Commit]:
    """Commits reachable from the branch tip, newest first along the first-parent line."""
    tip = repo_mod.memory_commit(repo)
    if tip is None:
        return
    walker = repo.walk(tip.id, SortMode.TOPOLOGICAL | SortMode.TIME)
    walker.simplify_first_parent()
    for n, commit in enumerate(walker):
        if n >= limit:
            return
        yield commit


def block_history(repo: pygit2.Repository, block_id: str, limit: int = 100_000) -> list[CommitInfo]:
    out = []
    for commit in walk(repo, limit):
        info = describe(commit)
        if info is not None and block_id in info.block_ids:
            out.append(info)
    return out


def recent(repo: pygit2.Repository, limit: int = 20) -> list[CommitInfo]:
    """The newest elfmem operations (within the last 10,000 commits)."""
    out: list[CommitInfo] = []
    for commit in walk(repo, 10_000):
        info = describe(commit)
        if info is not None:
            out.append(info)
            if len(out) >= limit:
                break
    return out


def reverted_by(repo: pygit2.Repository, commit_id: str, limit: int = 10_000) -> str | None:
    """The undo commit that already reverted ``commit_id``, if any."""
    for commit in walk(repo, limit):
        info = describe(commit)
        if info is not None and info.reverts == commit_id:
            return info.commit_id
    return None


def last_undoable(repo: pygit2.Repository, limit: int = 10_000) -> CommitInfo | None:
    """The newest elfmem commit that is not an undo and has not been undone."""
    undone: set[str] = set()
    for commit in walk(repo, limit):
        info = describe(commit)
        if info is None:
            continue
        if info.op == "undo":
            if info.reverts:
                undone.add(info.reverts)
            continue
        if info.op == "sync-merge":  # a merge of two clones is not one operation to take back
            continue
        if info.commit_id not in undone:
            return info
    return None
