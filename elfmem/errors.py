"""Every exception elfmem raises, each carrying the exact step that recovers from it.

Interfaces translate these once: the CLI prints ``Error:`` and ``Recovery:`` to stderr and exits
non-zero; the MCP server returns ``{"error", "recovery"}``.
"""

from __future__ import annotations


class ElfmemError(Exception):
    """Base class: a message saying what happened and a ``recovery`` saying what to do."""

    exit_code = 1

    def __init__(self, message: str, recovery: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.recovery = recovery

    def to_dict(self) -> dict[str, str]:
        return {"error": self.message, "recovery": self.recovery, "type": type(self).__name__}


class BlockFormatError(ElfmemError):
    """A memory file does not parse; nothing was written."""

    def __init__(self, message: str, path: str = "", line: int = 0, recovery: str = "") -> None:
        where = f"{path}:{line}: " if path else (f"line {line}: " if line else "")
        super().__init__(
            where + message,
            recovery
            or "Fix the text at that line (see docs/format.md), then run `elfmem index check`.",
        )
        self.path = path
        self.line = line


class InvalidInput(ElfmemError):
    """Arguments that cannot be acted on: empty content, a bad tag, an unknown relation."""

    exit_code = 2


class BlockNotFound(ElfmemError):
    """No block has this id."""


class SecretRefused(ElfmemError):
    """The content looks like a credential; git history is forever, so it is refused."""


class RepoStateError(ElfmemError):
    """The repository is not in a state elfmem may write to (mid-merge, no repository, ...)."""


class ConflictError(ElfmemError):
    """Concurrent writers kept moving the branch; the write was not made."""


class UndoError(ElfmemError):
    """The commit cannot be reverted by elfmem (not ours, or the revert conflicts)."""


class ConfigError(ElfmemError):
    """The configuration file is missing a value or has one elfmem cannot use."""


class ModelMismatch(ElfmemError):
    """The index was built with another embedding model; mixing vectors would corrupt ranking."""


class RepoLocked(RepoStateError):
    """A git lock file (``index.lock``, a ref's ``.lock``) is held by another program."""
