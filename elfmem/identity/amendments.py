"""Amendments: the one way a ``self/constitutional`` block changes, each a commit git can show.

``accept`` rewrites one constitutional block (its id, tags and place survive) as one commit with
``Elfmem-Op: amend`` and ``Elfmem-Proposal: <id>``; ``history`` reads those commits back from
git, with the undos that reverted them and every person's commit that changed ``self.md``
(elfmem never writes it after ``init``); ``revert`` undoes the newest amendment still standing
through the ordinary undo machinery, so the revert is itself a commit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from elfmem.block.layout import MEMORY_DIR
from elfmem.block.text import preview
from elfmem.errors import BlockNotFound, InvalidInput, UndoError
from elfmem.identity.writes import replace_in_place
from elfmem.index import queries
from elfmem.rhythms import undo as undo_mod
from elfmem.rhythms.capture import check_text
from elfmem.rhythms.core import Core
from elfmem.rhythms.results import Result, UndoResult
from elfmem.store.pathlog import commits_touching

AMEND_OP = "amend"
CONSTITUTIONAL = "self/constitutional"
SELF_PATH = f"{MEMORY_DIR}/self.md"


def proposal_id(block_id: str, content: str) -> str:
    """``<block id>.<8 hex>``: names the block and the text the proposal was made against, so a
    proposal accepted after the block changed is refused instead of silently overwriting."""
    return f"{block_id}.{hashlib.sha256(content.encode('utf-8')).hexdigest()[:8]}"


@dataclass(frozen=True)
class AmendResult(Result):
    block_id: str
    """The constitutional block amended."""
    proposal: str
    """The proposal accepted (``Elfmem-Proposal`` trailer); ``none`` when none was named."""
    commit_id: str
    before: str
    """The block's text before the amendment."""
    after: str

    @property
    def summary(self) -> str:
        return (
            f"amended {self.block_id} (proposal {self.proposal}) in commit {self.commit_id[:12]}: "
            f"{preview(self.after)}"
        )


@dataclass(frozen=True)
class AmendmentHistory(Result):
    entries: list[dict[str, Any]] = field(default_factory=list)
    """Newest first: ``{kind, commit_id, subject, author, time, block_ids, proposal,
    reverted_by, reverts}``; kind ``amend``, ``revert`` (an undo of one) or ``self.md`` (a
    person's commit that changed the raw constitution)."""

    @property
    def summary(self) -> str:
        lines = []
        for e in self.entries:
            mark = f" (reverted by {e['reverted_by'][:12]})" if e.get("reverted_by") else ""
            lines.append(f"{e['commit_id'][:12]}  {e['kind']:<8} {e['subject']}{mark}")
        return "\n".join(lines) or "(no amendments)"


def _target(core: Core, block_id: str | None, proposal: str | None) -> queries.BlockRow:
    named = proposal.split(".", 1)[0] if proposal else None
    if block_id and named and block_id != named:
        raise InvalidInput(
            f"Proposal {proposal} is for block {named}, not {block_id}.",
            "Pass only the proposal id, or the block id it names.",
        )
    wanted = block_id or named
    if not wanted:
        raise InvalidInput(
            "Which constitutional block does the amendment replace?",
            "Pass --proposal ID from `elfmem review`, or --block ID.",
        )
    core.sync()
    row = queries.get_blocks(core.db(), [wanted]).get(wanted)
    if row is None or row.status != "active" or CONSTITUTIONAL not in row.tags:
        raise BlockNotFound(
            f"{wanted} is not an active self/constitutional block.",
            "Amend only constitutional blocks: `elfmem ls --tag self/constitutional`.",
        )
    if proposal and proposal != proposal_id(row.id, row.content):
        raise InvalidInput(
            f"Proposal {proposal} was made against an earlier text of {row.id}; nothing changed.",
            "Run `elfmem review` again and accept the fresh proposal.",
        )
    return row


def accept(
    core: Core,
    content: str,
    block_id: str | None = None,
    proposal: str | None = None,
    reason: str = "",
) -> AmendResult:
    row = _target(core, block_id, proposal)
    text = check_text(content, row.cue, core.config.memory.max_content_bytes, False)
    if text == row.content:
        raise InvalidInput(
            f"Block {row.id} already says that; nothing changed.", "Pass the amended text."
        )
    named = proposal or "none"
    result = replace_in_place(
        core,
        {row.id: row.to_block().with_changes(content=text)},
        AMEND_OP,
        f"amend: {preview(text)}",
        body=reason.strip(),
        trailers=[("Elfmem-Proposal", named)],
    )
    assert result is not None  # the text differs
    core.record(
        {row.id: [core.event("edit", row.id, fields=["content"], commit=result.commit_id)]},
        "elfmem: amend",
    )
    return AmendResult(row.id, named, result.commit_id, row.content, text)


def history(core: Core, limit: int = 20) -> AmendmentHistory:
    commits = commits_touching(core.store.repo, SELF_PATH)
    amends = {c.commit_id for c in commits if c.info is not None and c.info.op == AMEND_OP}
    reverted = {
        c.info.reverts: c.commit_id
        for c in commits
        if c.info is not None and c.info.op == "undo" and c.info.reverts in amends
    }
    entries: list[dict[str, Any]] = []
    for c in commits:
        info = c.info
        if info is not None and info.op == AMEND_OP:
            kind = AMEND_OP
        elif info is not None and info.reverts in amends:
            kind = "revert"
        elif info is None and c.touches:
            kind = "self.md"
        else:
            continue
        entries.append(
            {
                "kind": kind,
                "commit_id": c.commit_id,
                "subject": c.subject,
                "author": c.author,
                "time": c.time,
                "block_ids": list(info.block_ids) if info else [],
                "proposal": next((v for k, v in c.trailers if k == "Elfmem-Proposal"), None),
                "reverted_by": reverted.get(c.commit_id),
                "reverts": info.reverts if info else None,
            }
        )
        if len(entries) >= limit:
            break
    return AmendmentHistory(entries)


def revert(core: Core) -> UndoResult:
    """Undo the newest amendment that is still standing, as a new commit."""
    standing = [
        e
        for e in history(core, 10_000).entries
        if e["kind"] == AMEND_OP and e["reverted_by"] is None
    ]
    if not standing:
        raise UndoError(
            "There is no standing amendment to revert.",
            "See the history with `elfmem review list`.",
        )
    return undo_mod.undo(core, standing[0]["commit_id"])
