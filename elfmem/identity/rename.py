"""Renaming the agent: ``init --name NEW`` on a memory made for OLD.

The name is written in three places: the config, the raw constitution (``self.md``) and the self
blocks the seed and templates filled in with it. Renaming only the config left the SELF frame
reading "You are Bob … the raw constitution of Ada". All three change in init's one commit, so
``undo`` takes the whole rename back. Knowledge blocks that mention the old name are about
someone, not the agent, and stay as they are.
"""

from __future__ import annotations

import re

from elfmem.index import queries
from elfmem.rhythms.capture import locate
from elfmem.rhythms.core import Core
from elfmem.store import FileEdit, MemoryView


def _pattern(old: str) -> re.Pattern[str]:
    """``old`` as a whole word: renaming Ada leaves "Adam" and "Adaptive" alone."""
    return re.compile(rf"(?<!\w){re.escape(old)}(?!\w)")


def renamed_text(text: str, old: str, new: str) -> str:
    return _pattern(old).sub(lambda _: new, text)


def renamed_self(data: bytes | None, old: str, new: str) -> bytes | None:
    """``self.md`` with the agent's old name replaced; None when absent or unchanged."""
    if data is None:
        return None
    text = data.decode("utf-8", "surrogateescape")
    renamed = renamed_text(text, old, new)
    return None if renamed == text else renamed.encode("utf-8", "surrogateescape")


def rename_blocks(
    core: Core, view: MemoryView, old: str, new: str, files: dict[str, FileEdit]
) -> list[str]:
    """Rewrite into ``files`` every live self block whose content or cue names ``old``; the
    ids of those blocks."""
    pattern = _pattern(old)
    renamed: list[str] = []
    for row in queries.list_blocks(core.db(), cls="self"):
        if row.status == "archived" or not (pattern.search(row.content) or pattern.search(row.cue)):
            continue
        relpath, block = locate(core, view, row.id)
        base = files[relpath].blocks if relpath in files else view.read(relpath)
        changed = block.with_changes(
            content=renamed_text(block.content, old, new), cue=renamed_text(block.cue, old, new)
        )
        files[relpath] = FileEdit(tuple(changed if b.id == block.id else b for b in base))
        renamed.append(block.id)
    return renamed
