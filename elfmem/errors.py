"""Every exception elfmem raises, each carrying the exact step that recovers from it.

Interfaces translate these once: the CLI prints ``Error:`` and ``Recovery:`` to stderr and exits
with the code of the error's kind (and, with ``--json``, prints ``{"error", "recovery", "type"}``
on stdout); the MCP server returns ``{"error", "recovery", "type"}`` as an error result.

One table, kept identical in docs/errors.md; a caller decides what to do from the kind alone:

==============  ===============  ====  ============================================================
kind            exception        exit  raised when / subclasses
==============  ===============  ====  ============================================================
(check)         --               1     a check ran and found problems (``index check``, ``index
                                       parity``, the git hooks)
invalid input   InvalidInput     2     arguments that cannot be acted on, usage errors of the
                                       command line, text that is not valid UTF-8;
                                       :class:`BlockFormatError`, :class:`SecretRefused`
not found       NotFound         3     no block, commit or file by that name; :class:`BlockNotFound`
conflict        ConflictError    4     the repository's state or another writer is in the way;
                                       :class:`RepoStateError`, :class:`UndoError`
locked          LockedError      5     a lock held by someone else, or a read-only repository
config          ConfigError      6     the configuration cannot be used; :class:`ModelMismatch`
provider        ProviderError    7     an LLM or embedding endpoint failed or answered unusably;
                                       :class:`ModelReplyError` (keeps the raw reply)
remote          RemoteError      8     a git remote could not be reached, refused a push, or
                                       moved on every retry; nothing local was lost
internal        InternalError    70    a fault inside elfmem (a bug): never the caller's input
(interrupted)   --               130   Ctrl-C stopped the command
==============  ===============  ====  ============================================================

Older names stay as subclasses so ``except BlockNotFound`` and ``type == "BlockNotFound"`` keep
working; a handler that wants the kind catches the base of the row.
"""

from __future__ import annotations

import errno

EXIT_CHECK_FAILED = 1
EXIT_INTERRUPTED = 130
READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
"""What a read-only mount, or a repository another user owns, answers to a write."""


def _redacted(text: str) -> str:
    """``text`` with any credential named by its kind: an error repeats what it could not read
    (``Cannot read '…' as a date``), and errors land in terminals, logs and agent transcripts.

    Imported here, not at the top: the block layer's own modules raise these errors.
    """
    from elfmem.block.credentials import redact

    return redact(text) if text else text


class ElfmemError(Exception):
    """Base class: a message saying what happened and a ``recovery`` saying what to do."""

    kind = "error"
    exit_code = 1

    def __init__(self, message: str, recovery: str = "") -> None:
        message, recovery = _redacted(message), _redacted(recovery)
        super().__init__(message)
        self.message = message
        self.recovery = recovery
        if recovery:  # a traceback a script did not catch still says what to do
            self.add_note(f"Recovery: {recovery}")

    def to_dict(self) -> dict[str, str]:
        return {"error": self.message, "recovery": self.recovery, "type": type(self).__name__}


class InvalidInput(ElfmemError):
    """Arguments that cannot be acted on: empty content, a bad tag, an unknown relation."""

    kind = "invalid input"
    exit_code = 2


class BlockFormatError(InvalidInput):
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
        self.detail = message
        """The message without its ``path:line:`` prefix, for reports that print the place."""


class SecretRefused(InvalidInput):
    """The content looks like a credential; git history is forever, so it is refused."""


class NotFound(ElfmemError):
    """The thing named does not exist: a block id, a commit, a file."""

    kind = "not found"
    exit_code = 3


class BlockNotFound(NotFound):
    """No block has this id."""


class ConflictError(ElfmemError):
    """Something else is in the way: another writer kept moving the branch, or git's state."""

    kind = "conflict"
    exit_code = 4


class RepoStateError(ConflictError):
    """The repository is not in a state elfmem may write to (mid-merge, no repository, ...)."""


class UndoError(ConflictError):
    """The commit cannot be reverted by elfmem (not ours, or the revert conflicts)."""


class LockedError(ElfmemError):
    """A lock someone else holds, or a repository this process may not write to."""

    kind = "locked"
    exit_code = 5


class ConfigError(ElfmemError):
    """The configuration file is missing a value or has one elfmem cannot use."""

    kind = "config"
    exit_code = 6


class ModelMismatch(ConfigError):
    """The index was built with another embedding model; mixing vectors would corrupt ranking."""


class ProviderError(ElfmemError):
    """A remote model endpoint failed: rate limit, timeout, server error or unreachable host.

    ``status`` is the HTTP status when the server answered (0 when it never did).
    """

    kind = "provider"
    exit_code = 7

    def __init__(self, message: str, recovery: str = "", status: int = 0) -> None:
        super().__init__(message, recovery)
        self.status = status


class ModelReplyError(ProviderError):
    """The model answered, but not usably (not the asked-for shape, or a refusal).

    ``raw`` keeps the reply exactly as it came, so nothing the model said is lost.
    """

    def __init__(self, message: str, recovery: str = "", raw: str = "") -> None:
        super().__init__(message, recovery)
        self.raw = raw


class RemoteError(ElfmemError):
    """A git remote failed: unreachable, authentication refused, a push rejected, or a remote
    that kept moving while we retried. Nothing local is changed by the failed step."""

    kind = "remote"
    exit_code = 8


class InternalError(ElfmemError):
    """A fault inside elfmem; the caller's input was fine, so the recovery is how to report it."""

    kind = "internal"
    exit_code = 70


def from_os_error(exc: OSError) -> LockedError | None:
    """A write refused by the filesystem, as the locked kind; None for any other OSError."""
    if exc.errno not in READ_ONLY_ERRNOS:
        return None
    return LockedError(
        f"cannot write {exc.filename or 'a file'}: {exc.strerror} (the repository is read-only "
        "here, or not yours to write).",
        "Reads work on a read-only repository; to write, run elfmem where the repository and "
        "its .git directory are writable by you.",
    )
