"""What a write asks for: the plan an operation builds and the writer turns into one commit.

Its own module because both the writer and the secret gate that checks a plan before it commits
read it, and neither should import the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from elfmem.block.model import Block


@dataclass(frozen=True, slots=True)
class FileEdit:
    """The new content of one memory file; ``text`` may be given when it is cheaper to build."""

    blocks: tuple[Block, ...]
    text: str | None = None


@dataclass(slots=True)
class Plan:
    """What one operation changes and how its commit reads."""

    op: str
    subject: str
    files: dict[str, FileEdit] = field(default_factory=dict)
    block_ids: list[str] = field(default_factory=list)
    body: str = ""
    trailers: list[tuple[str, str]] = field(default_factory=list)
    raw: dict[str, bytes | None] = field(default_factory=dict)
    """Other files under ``.elfmem`` (config, self.md), repository-relative; None deletes."""
