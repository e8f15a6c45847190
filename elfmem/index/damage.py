"""Damaged pages inside the index: found on the read that trips over them, healed, read again.

``open_index`` checks the header and the schema on every open, but a page overwritten in the
middle of the file (header intact) only shows when a query reads it, as ``sqlite3.DatabaseError``.
The index is derived from git, so such damage is never an error for the caller: ``healing``
wraps the read methods of a facade so that the first such error is confirmed (the error's code,
else ``PRAGMA quick_check``), the file is moved aside as ``index.db.broken`` and replaced with an
empty index, and the read runs once more, rebuilding it from git on its way. Nothing is written
to the repository. ``index check`` and ``doctor`` report it (``pages`` and ``moved_aside``).
"""

from __future__ import annotations

import functools
import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from elfmem.index.db import IndexDB, is_corruption

C = TypeVar("C", bound=type)


def pages(db: IndexDB) -> str | None:
    """What ``PRAGMA quick_check`` finds wrong with the index's pages (None when they are fine)."""
    try:
        rows = db.conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        return f"quick_check failed: {exc}"
    if rows == [("ok",)]:
        return None
    return "quick_check: " + "; ".join(str(r[0]) for r in rows[:3])


def damage(db: IndexDB, exc: BaseException) -> str | None:
    """Why ``exc`` means the index file is damaged (None when it is busy, read-only, or fine)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return None
    if isinstance(exc, sqlite3.OperationalError) and not is_corruption(exc):
        return None  # locked, busy, read-only, disk I/O: the file is not at fault
    found = pages(db)
    if found is None and not is_corruption(exc):
        return None
    return f"index pages were damaged ({found or exc}); moved aside and rebuilt from git"


def moved_aside(path: Path | None) -> str | None:
    """The damaged index an earlier heal kept for inspection, with its age, or None."""
    if path is None:
        return None
    broken = path.with_name(path.name + ".broken")
    try:
        age = time.time() - broken.stat().st_mtime
    except OSError:
        return None
    hours = age / 3600
    return f"{broken} (a damaged index moved aside {hours:.1f} h ago; safe to delete)"


def healing(db_of: Callable[[Any], IndexDB], names: Iterable[str]) -> Callable[[C], C]:
    """Wrap the coroutine methods ``names`` of a class: heal a damaged index once and retry.

    Only reads belong here: running a method twice must be harmless.
    """

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        async def healed(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(self, *args, **kwargs)
            except sqlite3.DatabaseError as exc:
                db = db_of(self)
                reason = damage(db, exc)
                if reason is None:
                    raise
                db.heal(reason)
            return await fn(self, *args, **kwargs)

        return healed

    def decorate(cls: C) -> C:
        for name in names:
            setattr(cls, name, wrap(getattr(cls, name)))
        return cls

    return decorate
