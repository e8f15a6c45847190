"""The journal: what one write is about to do, written before it touches anything shared.

A write stores its objects, writes this record, then changes the working tree, git's index and
last the branch. A process killed at any step leaves the record, and the next process to open
the repository (a read as much as a write) finishes the write from it: see ``writer.recover``.
The record is replaced atomically, so it is whole or absent.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from elfmem.store.locks import process_alive, process_start


@dataclass(frozen=True, slots=True)
class PathState:
    """One repository path: the blob oid on disk and in git's index before, and after."""

    before: str | None
    staged: str | None
    after: str | None


@dataclass(frozen=True, slots=True)
class Journal:
    ref: str
    base: str | None
    """The branch tip the commit was built on (None: unborn)."""
    commit: str
    paths: dict[str, PathState]
    index_lock: tuple[int, int] | None = None
    """(device, inode) of the ``index.lock`` this write creates: proof it is elfmem's."""
    pid: int = field(default_factory=os.getpid)
    start: str | None = None
    time_ns: int = field(default_factory=time.time_ns)

    def owner_alive(self) -> bool:
        return self.pid != os.getpid() and process_alive(self.pid, self.start)

    def write(self, path: Path) -> None:
        payload = asdict(self)
        payload["start"] = self.start or process_start(os.getpid())
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(payload), encoding="utf-8")
        os.replace(tmp, path)


def read(path: Path) -> Journal | None:
    """The pending journal, or None; one that cannot be read is dropped (nothing was started
    from it: it is whole before anything else changes)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        paths = {p: PathState(**s) for p, s in raw.pop("paths").items()}
        lock = raw.pop("index_lock")
        return Journal(paths=paths, index_lock=tuple(lock) if lock else None, **raw)
    except FileNotFoundError:
        return None
    except (ValueError, TypeError, KeyError, AttributeError):
        path.unlink(missing_ok=True)
        return None
