"""An fsynced, append-only spool for high-rate ledger events (reinforcement, co-retrieval).

A notes commit per retrieval would be wasteful, so such events are acknowledged once they are on
disk here and reach the notes ref in one batch at flush. The spool is truncated only after the
notes ref moved; a crash in between, or one that loses the truncation (it is not synced to
disk), replays lines the note's union already holds, which changes nothing.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from elfmem.errors import READ_ONLY_ERRNOS, InvalidInput, LockedError
from elfmem.store.notes import NotesLedger, require_anchor

SPOOL_NAME = "spool.jsonl"
FLUSH_BYTES = 256 * 1024
"""Past this size (about a thousand events) the spool is flushed into one notes commit."""


def _record(anchor: str, line: str) -> bytes:
    require_anchor(anchor)
    if "\n" in line or "\r" in line or not line.strip():
        raise InvalidInput(
            f"cannot spool {line!r}: a ledger line is one non-blank line",
            "Spool one event encoded with elfmem.store.ledger.encode(event).",
        )
    record = json.dumps(
        {"a": anchor, "l": line}, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return (record + "\n").encode()


def _parse(raw: bytes) -> tuple[str, str] | None:
    try:
        record = json.loads(raw)
    except ValueError:  # includes UnicodeDecodeError
        return None
    if not isinstance(record, dict):
        return None
    anchor, line = record.get("a"), record.get("l")
    if isinstance(anchor, str) and isinstance(line, str) and len(anchor) == 40 and line.strip():
        return anchor, line
    return None


def _open_for_append(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        if exc.errno not in READ_ONLY_ERRNOS:
            raise
        raise LockedError(
            f"cannot record to {path}: the repository is read-only here ({exc.strerror}).",
            "Reads work on a read-only repository; to write, run elfmem where the repository "
            "(and its .git directory) is writable by you.",
        ) from exc


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Spool:
    """``<gitdir>/elfmem/spool.jsonl`` plus a lock file that serialises writers across processes."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")

    @classmethod
    def in_git_dir(cls, git_dir: str | Path) -> Spool:
        return cls(Path(git_dir) / "elfmem" / SPOOL_NAME)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        fd = self._open_lock()
        if fd is None:  # a read-only place: no process can write here, so none to wait for
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _open_lock(self) -> int | None:
        """The lock file, opened read-write; read-only (flock works there too) where the
        repository is mounted read-only or not ours to write; None when it cannot be opened."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            if exc.errno not in READ_ONLY_ERRNOS:
                raise
        try:
            return os.open(self.lock_path, os.O_RDONLY)
        except OSError:
            return None

    def append(self, anchor: str, line: str) -> None:
        """Durably record one event line; when this returns the event survives a crash."""
        self.extend([(anchor, line)])

    def extend(self, entries: Iterable[tuple[str, str]]) -> None:
        """Durably record several events with one fsync."""
        data = b"".join(_record(anchor, line) for anchor, line in entries)
        if not data:
            return
        with self._locked():
            created = not self.path.exists()
            fd = _open_for_append(self.path)
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    data = b"\n" + data  # seal a torn tail so it cannot swallow this record
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            if created:
                self._sync_dir()

    def _sync_dir(self) -> None:
        fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _read(self, offset: int = 0) -> tuple[list[tuple[str, str]], int]:
        """Complete records after byte ``offset`` (caller holds the lock), and where they end.

        The part after the last newline is a torn write: never acknowledged, so ignored.
        """
        try:
            with open(self.path, "rb") as fh:
                fh.seek(offset)
                raw = fh.read()
        except FileNotFoundError:
            return [], 0
        end = raw.rfind(b"\n") + 1
        entries = [entry for entry in map(_parse, raw[:end].split(b"\n")[:-1]) if entry]
        return entries, offset + end

    def read_from(self, offset: int) -> tuple[list[tuple[str, str]], int]:
        """Complete records after byte ``offset``, and the offset just past the last of them.

        Readers that keep the offset pay only for what was appended since they last looked.
        """
        with self._locked():
            return self._read(offset)

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def entries(self) -> list[tuple[str, str]]:
        """The pending (anchor, line) pairs, in the order they were spooled."""
        with self._locked():
            return self._read()[0]

    def pending(self) -> int:
        return len(self.entries())

    def flush(self, ledger: NotesLedger, message: str) -> int:
        """Write every pending line as one notes commit, then empty the spool; returns the count."""
        with self._locked():
            entries, _ = self._read()
            if entries:
                batch: dict[str, list[str]] = {}
                for anchor, line in entries:
                    batch.setdefault(anchor, []).append(line)
                ledger.append(batch, message)
            if self.path.exists() and self.path.stat().st_size:
                # Not synced to disk: a truncation lost in a crash only replays lines the notes
                # already hold, which changes nothing. It saved every flushing command a wait.
                fd = os.open(self.path, os.O_WRONLY)
                try:
                    os.ftruncate(fd, 0)
                finally:
                    os.close(fd)
            return len(entries)
