"""The writer's last look for credentials: whatever a plan is about to commit, from any path.

Capture, init and outcome refuse a credential where it is typed, naming the field. This gate sees
what they cannot: a key typed into a memory file by hand that the write would carry into its
commit, text from dream, curate or an import, and the commit message itself. Only what is new
is looked at: blocks that differ from the committed ones and values that the files' committed
text does not already hold, so a block stored with the override, moved or restored later, is not
refused again, and an ordinary append costs nothing for the blocks already there. The commit
message is the exception: a subject is new text every time, so it may not repeat a value the
files already hold. Only ``remember`` and ``edit`` take the override, so only their refusals
suggest it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from elfmem.block.credentials import hits
from elfmem.block.layout import MEMORY_DIR
from elfmem.block.model import Block
from elfmem.block.render import render_block, render_file
from elfmem.block.secrets import (
    ALLOW_TRAILER,
    OVERRIDABLE_OPS,
    SecretFinding,
    block_fields,
    refusal,
)
from elfmem.store.tree import blob_at
from elfmem.store.view import MemoryView, parsed

if TYPE_CHECKING:
    from elfmem.store.plan import Plan

_Field = tuple[str, str, bool, tuple[str, ...]]
"""Where, the text, whether the override may let it through, texts already looked at."""

_MESSAGE = "commit message"
_RESTORING_OPS = {"undo"}
"""Operations that put back text history already holds: nothing new reaches git."""


class _Committed:
    """The committed side of the files a plan touches, read lazily and once."""

    def __init__(self, view: MemoryView) -> None:
        self.view = view
        self.texts: dict[str, str] = {}

    def data(self, path: str) -> tuple[str, bytes] | None:
        root = self.view.commit.tree if self.view.commit is not None else None
        blob = blob_at(self.view.repo, root, path)
        return (str(blob.id), blob.data) if blob is not None else None

    def blocks(self, relpath: str) -> dict[str, Block]:
        found = self.data(f"{MEMORY_DIR}/{relpath}")
        if found is None:
            return {}
        oid, data = found
        self.texts[relpath] = data.decode("utf-8", "replace")
        return {b.id: b for b in parsed(oid, data, f"{MEMORY_DIR}/{relpath}")}

    def holds(self, value: str) -> bool:
        return any(value in text for text in self.texts.values())


def _fields(plan: Plan, view: MemoryView, committed: _Committed) -> Iterator[_Field]:
    """(where, text, may be overridden) for every new text of the plan.

    A file carrying a hand edit is read whole, so a key typed anywhere in it (a body, a
    frontmatter comment, text between blocks) is found and named by file and line; the plan's
    own blocks in it were looked at field by field already.
    """
    own: list[str] = []
    ids = set(plan.block_ids)  # a dream's plan names every block it moved and linked: 10⁵ ids
    carried = sorted(view.carried & set(plan.files))
    for relpath, edit in plan.files.items():
        before = committed.blocks(relpath)
        for block in edit.blocks:
            mine = block.id in ids
            if before.get(block.id) == block or not (mine or relpath not in view.carried):
                continue
            own += [render_block(block)] if mine and carried else []  # read by carried files
            for name, text in block_fields(block, f"{MEMORY_DIR}/{relpath} block {block.id} "):
                yield name, text, mine, ()
    for relpath in carried:
        edit = plan.files[relpath]
        text = edit.text if edit.text is not None else render_file(edit.blocks)
        yield f"{MEMORY_DIR}/{relpath}", text, False, tuple(own)
    for path, raw in plan.raw.items():
        if raw is not None:
            old = committed.data(path)
            committed.texts[path] = old[1].decode("utf-8", "replace") if old else ""
            yield path, raw.decode("utf-8", "replace"), False, ()
    yield _MESSAGE, f"{plan.subject}\n{plan.body}", True, ()


def check_plan(plan: Plan, view: MemoryView) -> None:
    """Refuse the plan if it would commit a credential that is not already in these files."""
    allowed = {v for k, v in plan.trailers if k == ALLOW_TRAILER}
    restoring = plan.op in _RESTORING_OPS
    committed = _Committed(view)
    findings: list[SecretFinding] = []
    for where, text, may_override, checked in _fields(plan, view, committed):
        for hit in hits(text):
            value = text[hit.start : hit.end]
            seen = committed.holds(value) and where != _MESSAGE  # a subject is new text: always
            if seen or any(value in t for t in checked):
                continue
            if may_override and (restoring or hit.kind in allowed):
                continue
            line = text.count("\n", 0, hit.start) + 1
            multiline = "\n" in text.rstrip("\n")
            findings.append(SecretFinding(hit.kind, f"{where} line {line}" if multiline else where))
    if not findings:
        return
    carried = sorted(f"{MEMORY_DIR}/{p}" for p in view.carried & set(plan.files))
    hand = f" Your uncommitted edit to {', '.join(carried)} is left on disk." if carried else ""
    raise refusal(
        findings,
        "Remove the credential from the text or file named, then run the command again." + hand,
        overridable=plan.op in OVERRIDABLE_OPS,
    )
