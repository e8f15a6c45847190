"""Typed results: every operation returns one, with ``summary``, ``to_dict()`` and ``__str__``."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Result:
    """Base: ``summary`` is one human line; ``to_dict()`` is the stable JSON shape."""

    @property
    def summary(self) -> str:
        return type(self).__name__

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["summary"] = self.summary
        return data

    def __str__(self) -> str:
        return self.summary


@dataclass(frozen=True)
class BlockInfo(Result):
    """A block as listed: what it says and where it lives."""

    id: str
    content: str
    cls: str
    tags: list[str]
    status: str
    path: str
    cue: str = ""
    pinned: bool = False
    created: str = ""
    relations: list[list[str]] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        first = self.content.splitlines()[0] if self.content else ""
        return f"{self.id}  [{self.status}/{self.cls}]  {first[:80]}"


@dataclass(frozen=True)
class RememberResult(Result):
    block_id: str
    status: str
    """``created`` or ``duplicate`` (the existing block's id is returned)."""
    commit_id: str | None = None
    path: str = ""

    @property
    def summary(self) -> str:
        if self.status == "duplicate":
            return f"Duplicate of {self.block_id}; nothing written."
        return f"Remembered {self.block_id} ({self.path}, commit {str(self.commit_id)[:12]})."


@dataclass(frozen=True)
class BatchResult(Result):
    created: list[str]
    duplicates: list[str]
    commit_id: str | None

    @property
    def summary(self) -> str:
        commit = f" in commit {self.commit_id[:12]}" if self.commit_id else ""
        return f"Remembered {len(self.created)} blocks{commit}; {len(self.duplicates)} duplicates skipped."


@dataclass(frozen=True)
class ChangeResult(Result):
    """edit / forget / connect: what changed and in which commit (None: nothing to do)."""

    op: str
    block_id: str
    changed: bool
    commit_id: str | None = None
    detail: str = ""

    @property
    def summary(self) -> str:
        if not self.changed:
            return f"{self.op}: {self.block_id} unchanged ({self.detail or 'nothing to do'})."
        return f"{self.op}: {self.block_id} in commit {str(self.commit_id)[:12]}. {self.detail}".strip()


@dataclass(frozen=True)
class UndoResult(Result):
    undone: str
    """The commit that was reverted."""
    commit_id: str | None
    """The revert commit; None when it had been undone already."""
    block_ids: list[str]
    already_undone_by: str | None = None
    method: str = "revert"

    @property
    def summary(self) -> str:
        if self.already_undone_by:
            return f"Commit {self.undone[:12]} was already undone by {self.already_undone_by[:12]}; nothing to do."
        return f"Undid {self.undone[:12]} ({len(self.block_ids)} blocks) in commit {str(self.commit_id)[:12]}."


@dataclass(frozen=True)
class ListResult(Result):
    blocks: list[BlockInfo]

    @property
    def summary(self) -> str:
        lines = [b.summary for b in self.blocks] or ["(no blocks)"]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "blocks": [asdict(b) for b in self.blocks],
            "count": len(self.blocks),
            "summary": f"{len(self.blocks)} blocks",
        }


@dataclass(frozen=True)
class HistoryResult(Result):
    block_id: str
    commits: list[dict[str, Any]]

    @property
    def summary(self) -> str:
        lines = [f"{c['commit_id'][:12]}  {c['op']:<10} {c['subject']}" for c in self.commits]
        return "\n".join(lines) or f"No commits touch {self.block_id}."


@dataclass(frozen=True)
class LedgerResult(Result):
    block_id: str
    anchor: str
    events: list[dict[str, Any]]

    @property
    def summary(self) -> str:

        return "\n".join(
            json.dumps(e, sort_keys=True, ensure_ascii=False) for e in self.events
        ) or (f"No ledger events for {self.block_id} (anchor {self.anchor}).")
