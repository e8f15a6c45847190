"""Git's lock files, and telling elfmem's own stale ones from anybody else's.

Git guards its index and each ref with ``<file>.lock``: whoever creates it owns the file until
it renames or deletes it. A killed process leaves its lock behind and every later writer fails.
elfmem deletes such a lock only when it can prove the lock is its own and its owner is gone:
the journal (``journal.py``) names the owner by pid and start time, and names the index lock by
device and inode, because elfmem creates that lock itself (a hard link of a file it made, so the
lock exists with a known identity or not at all). A ref lock is taken inside libgit2; it is
elfmem's when it holds the journaled commit id, or is empty and was created during the journaled
write. Any other lock (a person's ``git commit`` waiting on the editor holds ``index.lock`` for
minutes) is never deleted: the write stops at once and says which file, how old, and what to do.
"""

from __future__ import annotations

import errno
import os
import time
from dataclasses import dataclass
from pathlib import Path

import pygit2

from elfmem.errors import LockedError

TRANSIENT_WAIT = 0.5
"""Seconds a write waits for a lock git holds for a moment (``git status`` refreshing)."""

WRITE_SPAN_NS = 60 * 1_000_000_000
"""No elfmem write holds a lock longer than this after writing its journal."""
FS_CLOCK_SLACK_NS = 100_000_000
"""How far behind ``time.time_ns()`` a file's ctime may be: the coarse clock's tick, with room.
Measured here: a file touched right after ``time.time_ns()`` had an earlier ctime 2000 times in
2000."""


def process_start(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (Linux ``/proc``), so a reused pid is not taken for
    the process that wrote a journal; None where there is no ``/proc``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


def process_alive(pid: int, start: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return start is None or process_start(pid) in (None, start)


def common_dir(repo: pygit2.Repository) -> Path:
    """Where refs live: the main ``.git`` even from a linked worktree."""
    gitdir = Path(repo.path)
    try:
        return (gitdir / (gitdir / "commondir").read_text().strip()).resolve()
    except OSError:
        return gitdir


def index_lock_path(repo: pygit2.Repository) -> Path:
    return Path(repo.path) / "index.lock"


def ref_lock_path(repo: pygit2.Repository, ref: str) -> Path:
    return common_dir(repo) / f"{ref}.lock"


@dataclass(frozen=True, slots=True)
class LockFile:
    path: Path
    age: float

    def describe(self) -> str:
        return f"{self.path} exists (created {self.age:.0f} s ago)"


def present(path: Path) -> LockFile | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return LockFile(path, max(0.0, time.time() - st.st_mtime))


def locked_error(lock: LockFile, what: str) -> LockedError:
    return LockedError(
        f"{lock.describe()}: {what} is locked by another program; nothing was written.",
        "Wait for the git command holding it to finish (a `git commit` may be waiting on its "
        f"editor). If no git command is running, a crash left it: delete it (`rm {lock.path}`) "
        "and run the command again.",
    )


def wait_for(path: Path, what: str) -> None:
    """Return once ``path`` is gone; git's own brief locks pass within ``TRANSIENT_WAIT``."""
    deadline = time.monotonic() + TRANSIENT_WAIT
    while True:
        lock = present(path)
        if lock is None:
            return
        if time.monotonic() >= deadline or lock.age > 2 * TRANSIENT_WAIT:
            raise locked_error(lock, what)
        time.sleep(0.01)


class IndexLock:
    """Git's ``index.lock``, taken the way git takes it but with an identity known in advance.

    ``prepare`` makes a private file whose device and inode go into the journal; ``take`` links
    it to ``index.lock``, which fails if anybody holds the lock. A kill at any moment leaves
    either no lock or one the journal names.
    """

    def __init__(self, repo: pygit2.Repository, state: Path) -> None:
        self.path = index_lock_path(repo)
        self.private = state / f"index.lock.{os.getpid()}"
        self.identity: tuple[int, int] | None = None
        self.held = False

    def prepare(self) -> tuple[int, int]:
        self.private.unlink(missing_ok=True)
        fd = os.open(self.private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
        self.identity = (st.st_dev, st.st_ino)
        return self.identity

    def take(self) -> None:
        """Hold git's index lock, waiting only for git's momentary holds."""
        deadline = time.monotonic() + TRANSIENT_WAIT
        while True:
            try:
                os.link(self.private, self.path)
                self.held = True
                return
            except FileExistsError:
                lock = present(self.path)
                if lock is not None and (time.monotonic() >= deadline or lock.age > 1):
                    raise locked_error(lock, "git's index") from None
                time.sleep(0.01)
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                    raise
                self._take_without_links()
                return

    def _take_without_links(self) -> None:
        """A filesystem without hard links: git's plain exclusive create (then a stale lock
        is not provably elfmem's, and is reported rather than deleted)."""
        try:
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except FileExistsError:
            lock = present(self.path)
            raise locked_error(lock or LockFile(self.path, 0.0), "git's index") from None
        self.held = True

    def release(self) -> None:
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False
        self.private.unlink(missing_ok=True)


def is_identity(path: Path, identity: tuple[int, int] | None) -> bool:
    """True when ``path`` is the very file (device, inode) a journal named."""
    if identity is None:
        return False
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    return (st.st_dev, st.st_ino) == tuple(identity)


def is_own_ref_lock(path: Path, commit: str, since_ns: int) -> bool:
    """A ref lock libgit2 took for the journaled write: it holds the journaled commit id, or it
    is still empty and was created during that write."""
    try:
        st = path.stat()
        data = path.read_bytes()
    except FileNotFoundError:
        return False
    if data.strip() == commit.encode():
        return True
    # A file's times come from the kernel's coarse clock (one tick, up to ~10 ms, behind
    # time.time_ns()), so a lock made a moment after ``since_ns`` can carry an earlier ctime.
    earliest = since_ns - FS_CLOCK_SLACK_NS
    return not data and earliest <= st.st_ctime_ns <= since_ns + WRITE_SPAN_NS


def foreign_locks(repo: pygit2.Repository, refs: list[str]) -> list[LockFile]:
    """The lock files present now on git's index and on ``refs`` (for ``doctor``)."""
    paths = [index_lock_path(repo), *(ref_lock_path(repo, r) for r in refs)]
    return [lock for lock in map(present, paths) if lock is not None]


class RefIntent:
    """A ref update libgit2 is about to make, recorded so its lock can be proven elfmem's.

    Writers of a ref without a journal (the notes ledger) record the commit they are moving the
    ref to, per process, before the update and drop it after. A later writer that finds the
    ref locked deletes the lock only when an intent names it, the intent's process is gone, and
    the lock holds that commit or is empty and was created during that update.
    """

    def __init__(self, state: Path, ref: str) -> None:
        self.state = state
        self.ref = ref
        self.path = state / f"intent.{os.getpid()}.{ref.replace('/', '-')}"

    def record(self, commit: str) -> None:
        start = process_start(os.getpid()) or ""
        self.path.write_text(f"{os.getpid()} {start} {time.time_ns()} {commit}\n")

    def drop(self) -> None:
        self.path.unlink(missing_ok=True)

    def clear_stale(self, lock: Path) -> bool:
        """Delete ``lock`` if a dead process's intent proves it was that process's."""
        for intent in self.state.glob(f"intent.*.{self.ref.replace('/', '-')}"):
            try:
                pid, start, since, commit = intent.read_text().split()
            except (OSError, ValueError):
                continue
            if int(pid) == os.getpid() or process_alive(int(pid), start or None):
                continue
            if is_own_ref_lock(lock, commit, int(since)):
                lock.unlink(missing_ok=True)
                intent.unlink(missing_ok=True)
                return True
            intent.unlink(missing_ok=True)  # its update finished or failed long ago
        return False
