"""The branch's commits with whether each changed one file: how identity history finds hand edits.

``self.md`` is never written by elfmem after ``init``, so a commit that changes it is a person's
edit of the raw constitution, and the amendment history must show it beside elfmem's own
amendments, which the trailers already describe.
"""

from __future__ import annotations

from dataclasses import dataclass

import pygit2

from elfmem.store.log import CommitInfo, describe, trailers, walk


@dataclass(frozen=True, slots=True)
class PathCommit:
    commit_id: str
    subject: str
    author: str
    time: int
    info: CommitInfo | None
    """elfmem's facts from the trailers; None for a commit elfmem did not make."""
    touches: bool
    """True when the commit changed the file (against its first parent)."""
    trailers: tuple[tuple[str, str], ...]
    """Its ``Elfmem-*`` trailers, in message order."""


def _blob(commit: pygit2.Commit, path: str) -> str | None:
    try:
        return str(commit.tree[path].id)
    except KeyError:
        return None


def commits_touching(repo: pygit2.Repository, path: str, limit: int = 10_000) -> list[PathCommit]:
    """Branch commits newest first (first-parent line), each marked with whether it changed
    ``path`` (repository-relative)."""
    out = []
    for commit in walk(repo, limit):
        mine = _blob(commit, path)
        before = _blob(commit.parents[0], path) if commit.parents else None
        out.append(
            PathCommit(
                commit_id=str(commit.id),
                subject=commit.message.splitlines()[0] if commit.message else "",
                author=commit.author.name,
                time=commit.commit_time,
                info=describe(commit),
                touches=mine != before,
                trailers=tuple(trailers(commit.message)),
            )
        )
    return out
