"""Advisory locks between elfmem processes on one machine (``flock`` on a lock file).

``exclusive`` holds a named lock file: the store serialises its writers with it
(``store.repo.write_lock``). ``held`` holds the lock kept beside a file (``NAME.lock``), for work
on that file that must not interleave across processes: the index's open-check-heal and its
vector files.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive(lock_path: Path) -> Iterator[None]:
    """Hold the exclusive lock on ``lock_path`` (created if missing; other processes wait)."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def held(path: Path) -> contextlib.AbstractContextManager[None]:
    """The exclusive lock kept beside ``path``, as ``NAME.lock``."""
    return exclusive(path.with_name(path.name + ".lock"))
