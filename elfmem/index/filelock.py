"""An advisory lock kept in a file beside the one it guards (``NAME.lock``), for work on that file
that must not interleave across processes. Where ``fcntl`` is missing it does nothing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]


@contextmanager
def held(path: Path) -> Iterator[None]:
    """Hold the exclusive lock of ``path`` (other processes wait) for the ``with`` body."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    with open(path.with_name(path.name + ".lock"), "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
