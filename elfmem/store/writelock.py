"""elfmem's own write lock (``<gitdir>/elfmem/write.lock``): waited for, but never forever.

Every memory commit runs under one ``flock`` on this file, so writers on one machine take turns.
A holder normally lets go within milliseconds; one that does not (a dream paused in a debugger,
a process stopped with ^Z) would make every later writer hang. So a writer waits at most
``wait_seconds()`` (``ELFMEM_WAIT``, set by ``--wait SECONDS`` on writing commands; default 10;
0 fails at once), says on stderr that it waits, and then fails as "locked" (exit 5) naming the
holder's pid and command. The holder is found in ``/proc/locks`` (the kernel's own answer) or,
where that is not available, in the pid and command each holder writes into the file.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from elfmem.errors import InvalidInput, LockedError
from elfmem.store.locks import process_alive

DEFAULT_WAIT = 10.0
WAIT_ENV = "ELFMEM_WAIT"
_POLL = 0.05


def wait_seconds() -> float:
    """How long a writer waits for the lock: ``ELFMEM_WAIT`` seconds, else ``DEFAULT_WAIT``."""
    raw = os.environ.get(WAIT_ENV, "").strip()
    if not raw:
        return DEFAULT_WAIT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also refuses nan
        raise InvalidInput(
            f"{WAIT_ENV}={raw!r} is not a number of seconds.",
            f"Set {WAIT_ENV} (or pass --wait) to 0 or more seconds, e.g. `--wait 30`.",
        )
    return value


def _command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    words = " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)
    words = " ".join(words.split())
    return words if len(words) <= 160 else words[:157] + "..."


def _kernel_holder(path: Path) -> int | None:
    """The pid ``/proc/locks`` gives for the flock on ``path``'s inode (Linux), or None."""
    try:
        st = path.stat()
        table = Path("/proc/locks").read_text()
    except OSError:
        return None
    want = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    for line in table.splitlines():
        fields = line.split()  # "1: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<inode> 0 EOF"
        if len(fields) < 6 or fields[1] != "FLOCK" or not fields[4].isdigit():
            continue
        try:
            major, minor, inode = fields[5].split(":")
            where = (int(major, 16), int(minor, 16), int(inode))
        except ValueError:
            continue
        if where == want:
            return int(fields[4])
    return None


def holder(path: Path) -> str:
    """Who holds the lock, as ``pid N (command)``; what is known when the kernel will not say."""
    pid = _kernel_holder(path)
    recorded = ""
    try:
        recorded = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        pass
    if pid is None and recorded:
        first, _, rest = recorded.partition(" ")
        if first.isdigit() and process_alive(int(first), None):
            pid = int(first)
            return f"pid {pid} ({rest or _command(pid) or 'command unknown'})"
    if pid is None:
        return "another process (its pid is unknown here)"
    return f"pid {pid} ({_command(pid) or 'command unknown'})"


def held_by(path: Path) -> str | None:
    """``holder(path)`` when a process holds the lock now, else None (for ``doctor``)."""
    if not path.exists():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return holder(path)
    finally:
        os.close(fd)  # closing releases a lock this probe took
    return None


def _record(fd: int) -> None:
    """Write this process's pid and command into the held lock file, for those who wait."""
    line = f"{os.getpid()} {_command(os.getpid()) or sys.argv[0]}\n".encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, line, 0)


def _wait(fd: int, path: Path, seconds: float) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    who = holder(path)
    if seconds > 0:
        sys.stderr.write(
            f"elfmem: waiting up to {seconds:g} s for the write lock {path}, held by {who}\n"
        )
        sys.stderr.flush()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            time.sleep(_POLL)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                continue
        who = holder(path)
    raise LockedError(
        f"elfmem's write lock {path} is held by {who}; waited {seconds:g} s, nothing was written.",
        "Wait for that process to finish and run the command again, or give it longer with "
        "`--wait SECONDS` (ELFMEM_WAIT); if it is stuck (a paused dream, a stopped process), "
        "end it (`kill <pid>`): the next command finishes or undoes its write.",
    )


@contextmanager
def hold(path: Path, seconds: float | None = None) -> Iterator[None]:
    """Hold the write lock, waiting at most ``seconds`` (default ``wait_seconds()``)."""
    wait = wait_seconds() if seconds is None else seconds
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _wait(fd, path, wait)
        try:
            _record(fd)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
