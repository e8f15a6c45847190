"""Typed results: every operation returns one, with ``summary``, ``to_dict()`` and ``__str__``."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from elfmem.rhythms.result import Result as Result  # re-exported: most results import it here

TOKEN_KEYS = ("input", "output", "cache_read", "cache_creation", "calls")
"""The keys of a ``tokens`` object (``elfmem.adapters.usage`` fills them from the SDKs)."""


def _count(n: int, noun: str) -> str:
    """``1 block``, ``2 blocks``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@dataclass(frozen=True)
class BlockInfo(Result):
    """A block as listed: what it says and where it lives."""

    id: str
    content: str
    cls: str
    """Its category, e.g. ``knowledge``, ``self`` or ``observation``."""
    tags: list[str]
    status: str
    """``inbox``, ``active`` or ``archived``: the folder its file lives in."""
    path: str
    cue: str = ""
    pinned: bool = False
    """True when it is never archived automatically."""
    created: str = ""
    """When it was captured, ISO 8601 in UTC to the second; empty if the file has none."""
    relations: list[list[str]] = field(default_factory=list)
    """Declared relations as ``[kind, target id]`` pairs (kind: ``supports``, ``refines``, …)."""
    extra: dict[str, str] = field(default_factory=dict)
    """Other frontmatter keys with their raw text, e.g. ``duplicate-of`` or ``tier``."""

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
    """Ids of the new blocks, in input order; all of them share one commit."""
    duplicates: list[str]
    """For each item skipped, the id of the block it repeats (a live one or an earlier item)."""
    commit_id: str | None

    @property
    def summary(self) -> str:
        commit = f" in commit {self.commit_id[:12]}" if self.commit_id else ""
        skipped = len(self.duplicates)
        return f"Remembered {len(self.created)} blocks{commit}; {skipped} duplicates skipped."


@dataclass(frozen=True)
class ChangeResult(Result):
    """edit / forget: what changed and in which commit (None: nothing to do)."""

    op: str
    """``edit`` or ``forget``."""
    block_id: str
    changed: bool
    """False when there was nothing to do; then no commit was made."""
    commit_id: str | None = None
    detail: str = ""
    """What changed (``changed content, tags``) or why nothing did (``already archived``)."""

    @property
    def summary(self) -> str:
        if not self.changed:
            return f"{self.op}: {self.block_id} unchanged ({self.detail or 'nothing to do'})."
        commit = str(self.commit_id)[:12]
        return f"{self.op}: {self.block_id} in commit {commit}. {self.detail}".strip()


@dataclass(frozen=True)
class UndoResult(Result):
    undone: str
    """The commit that was reverted."""
    commit_id: str | None
    """The revert commit; None when it had been undone already."""
    block_ids: list[str]
    already_undone_by: str | None = None
    method: str = "revert"
    """``revert``, or ``none`` when reverting would change no file (no commit was made)."""

    @property
    def summary(self) -> str:
        if self.already_undone_by:
            by = self.already_undone_by[:12]
            return f"Commit {self.undone[:12]} was already undone by {by}; nothing to do."
        commit = str(self.commit_id)[:12]
        return f"Undid {self.undone[:12]} ({len(self.block_ids)} blocks) in commit {commit}."


@dataclass(frozen=True)
class ListResult(Result):
    blocks: list[BlockInfo]
    """The blocks, oldest first, each with the keys ``elfmem show`` prints except ``summary``."""

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
    """Commits that touched the block, newest first, each with the keys ``elfmem log`` prints."""

    @property
    def summary(self) -> str:
        lines = [f"{c['commit_id'][:12]}  {c['op']:<10} {c['subject']}" for c in self.commits]
        return "\n".join(lines) or f"No commits touch {self.block_id}."


@dataclass(frozen=True)
class LedgerResult(Result):
    block_id: str
    anchor: str
    """The git object its ledger note hangs on: the hash of ``elfmem-block <id>``."""
    events: list[dict[str, Any]]
    """Its ledger events, oldest first; each has ``ts``, ``eid``, ``agent``, ``kind`` and more."""

    @property
    def summary(self) -> str:

        return "\n".join(
            json.dumps(e, sort_keys=True, ensure_ascii=False) for e in self.events
        ) or (f"No ledger events for {self.block_id} (anchor {self.anchor}).")


@dataclass(frozen=True)
class DreamResult(Result):
    """One dream run: what moved out of the inbox, what deep sleep re-judged, edges added."""

    processed: int
    """Inbox blocks this run took, oldest first, up to the per-run limit (``--max``)."""
    promoted: list[str] = field(default_factory=list)
    """Ids moved from the inbox to active, with any judged tags and relations added."""
    duplicates: list[dict[str, str]] = field(default_factory=list)
    """True duplicates archived, as ``{id, of}``: ``of`` is the block it repeats."""
    lookalikes: list[dict[str, object]] = field(default_factory=list)
    """Near pairs (at or above the model's look-alike cut) linked for review: ``{id, other,
    cosine, differs}``, and ``revises: {newer, older}`` when the newer states the older's subject
    with another value (a candidate revision; it may sit below the look-alike cut)."""
    inbox_remaining: int = 0
    """Inbox blocks left for a later run."""
    commit_id: str | None = None
    mode: str = "deterministic"
    """``deterministic`` (no judge) or ``llm`` (an LLM or the host agent judged each block)."""
    note: str = ""
    """How the blocks were judged (which LLM, the host, or why no LLM was used)."""
    superseded: list[dict[str, str]] = field(default_factory=list)
    """Older active blocks archived because a new one revises them: ``{id, by}``."""
    malformed: int = 0
    """LLM replies that could not be parsed (neutral scoring was used instead)."""
    analyses: dict[str, dict[str, object]] = field(default_factory=dict)
    """Block id → its judgement ``{alignment, tags, summary, malformed}``; empty without one."""
    edges_added: int = 0
    """Semantic ``similar`` edges written: a link between two blocks is two, one on each note."""
    rescored: list[str] = field(default_factory=list)
    """Aged active blocks deep sleep re-evaluated (``rescore=True``)."""
    rescore_note: str = ""
    """What deep sleep did; empty when ``rescore`` was not asked for."""
    retagged: list[str] = field(default_factory=list)
    """Rescored blocks that gained tags (written in this run's commit)."""
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_KEYS, 0))
    """What the model calls cost: ``{input, output, cache_read, cache_creation, calls}``
    (zero without an LLM; a scripted model counts calls only)."""
    interrupted: bool = False
    """Stopped between blocks (Ctrl-C): ``processed`` blocks were committed, the rest wait."""

    @property
    def summary(self) -> str:
        if not self.processed and self.interrupted:
            return (
                "Stopped by Ctrl-C before any block was consolidated; nothing was committed; "
                f"{self.inbox_remaining} still in the inbox."
            )
        if not self.processed:
            text = "Inbox empty; nothing to consolidate."
        else:
            text = (
                f"Dreamed over {_count(self.processed, 'block')} ({self.mode}): "
                f"{len(self.promoted)} promoted, {len(self.duplicates)} duplicates archived, "
                f"{len(self.lookalikes)} look-alikes linked for review; "
                f"{self.inbox_remaining} still in the inbox."
            )
            if self.lookalikes:
                text += " See them with `elfmem review lookalikes`."
        if self.rescore_note:
            text += f" Deep sleep: {self.rescore_note}."
        if self.edges_added:
            text += f" {self.edges_added} semantic edges added."
        if self.interrupted:
            text += (
                f" Stopped by Ctrl-C after {self.processed} block(s); those were committed, "
                "the rest stay in the inbox for the next dream."
            )
        return text
