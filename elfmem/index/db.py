"""Opening the index: WAL, busy timeouts, migrations, and self-healing.

The index is derived from git, so any file that cannot be trusted (missing, truncated, garbage, an
unknown newer schema) is moved aside and recreated empty; the next sync rebuilds it. ``healed`` says
why, so a caller can report it instead of failing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

from elfmem import filelock
from elfmem.errors import ElfmemError
from elfmem.index.blockdiff import KnownFile
from elfmem.index.schema import ForeignDatabase, NewerSchema, migrate

BUSY_TIMEOUT_S = 10.0
CACHE_KIB = 65536
INDEX_FILE = "index.db"
_CORRUPT_CODES = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB
_SQLITE_READONLY, _SQLITE_CANTOPEN = 8, 14
_TABLES = frozenset(
    {"meta", "files", "blocks", "tags", "relations", "fts", "vectors", "shadowed"}
    | {"edges", "ledger_state", "staged_pairs"}
)


def index_path(git_dir: Path) -> Path:
    """Where a repository keeps its index: inside the git dir, so it is never committed."""
    return git_dir / "elfmem" / INDEX_FILE


class IndexDB:
    """One open index. Reads are plain statements; writes go through ``write()``."""

    def __init__(self, conn: sqlite3.Connection, path: Path | None, healed: str | None) -> None:
        self.conn = conn
        self.path = path
        self.healed = healed
        self.read_only: str | None = None
        """Why the index lives in memory for this process (a read-only repository), or None."""
        self._lock = threading.RLock()
        self._sides: dict[int, sqlite3.Connection] = {}
        self.known_rows: OrderedDict[str, tuple[tuple[str, str], KnownFile]] = OrderedDict()
        """Per memory file: the ``blocks`` rows this process last wrote for it, labelled with the
        (index uuid, generation) they were written at. Every change to ``blocks`` moves the
        generation, so a label that still matches means the rows are still exactly these."""
        self.kept: dict[str, tuple[tuple[int, int], object]] = {}
        """Values read from the index, each under the ``change_key`` it was read at: a sync
        reuses the ``files`` rows while nothing has written to the index since."""

    def side_reader(self, slot: int = 0) -> sqlite3.Connection | None:
        """A read-only connection besides ``conn``, one per ``slot``, for a query that runs in a
        thread beside others (SQLite lets go of the GIL while it steps). None for an in-memory
        index."""
        if self.path is None:
            return None
        with self._lock:
            side = self._sides.get(slot)
            if side is None:
                side = sqlite3.connect(
                    str(self.path),
                    timeout=BUSY_TIMEOUT_S,
                    isolation_level=None,
                    check_same_thread=False,
                )
                side.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
                side.execute("PRAGMA query_only = ON")
                self._sides[slot] = side
            return side

    def _close_side(self) -> None:
        for side in self._sides.values():
            side.close()
        self._sides.clear()

    @property
    def written(self) -> bool:
        """True once this process changed a row of a file index: its first write and the
        checkpoint at close each wait for the disk, and later writes add no such wait."""
        return self.path is not None and self.conn.total_changes > 0

    def meta(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT key, value FROM meta").fetchall())

    def change_key(self) -> tuple[int, int]:
        """A pair that moves whenever the index may have changed: a commit by any other
        connection, in this process or another (``PRAGMA data_version``), or a row changed on
        this one (``total_changes``, rolled-back changes included). Read it before what it keys."""
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        return int(version), self.conn.total_changes

    @contextlib.contextmanager
    def write(self, wait_s: float = BUSY_TIMEOUT_S) -> Iterator[sqlite3.Connection]:
        """One short write transaction (``BEGIN IMMEDIATE``: writers queue on busy_timeout).

        ``wait_s`` shortens the wait for another writer's lock, for writes that may be skipped
        (``sqlite3.OperationalError`` when it runs out).
        """
        with self._lock:
            if wait_s != BUSY_TIMEOUT_S:
                self.conn.execute(f"PRAGMA busy_timeout = {int(wait_s * 1000)}")
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            finally:
                if wait_s != BUSY_TIMEOUT_S:
                    self.conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            try:
                yield self.conn
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: every statement inside sees the same committed state."""
        with self._lock:
            self.conn.execute("BEGIN")
            try:
                yield self.conn
            finally:
                self.conn.execute("COMMIT")

    def bump_generation(self) -> None:
        """Mark blocks or vectors as changed, so every process's cached vectors reload."""
        self.conn.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
        )

    def heal(self, reason: str) -> None:
        """Replace a file found damaged while open with an empty index (the next sync refills)."""
        with self._lock:
            self._close_side()
            self.known_rows.clear()
            self.kept.clear()
            self.conn.close()
            if self.path is None:
                self.conn = sqlite3.connect(
                    ":memory:", isolation_level=None, check_same_thread=False
                )
                migrate(self.conn)
            else:
                with _heal_lock(self.path):
                    _move_aside(self.path)
                    self.conn = _open_checked(self.path, False)
            self.healed = reason

    def size_on_disk(self) -> int:
        if self.path is None:
            return 0
        return sum(p.stat().st_size for p in _companions(self.path) if p.exists())

    def close(self) -> None:
        self._close_side()
        self.conn.close()

    def __enter__(self) -> IndexDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_index(path: Path, *, verify: bool = False) -> IndexDB:
    """Open (creating, migrating or healing as needed) the index at ``path``.

    Every open checks the header, the size against the page count, the schema version and the
    tables (well under a millisecond). ``verify`` adds ``PRAGMA quick_check``, which reads every
    page (~15 ms at 10k blocks), for ``index check`` and ``doctor``; damage inside a page found
    later surfaces as an ``sqlite3.DatabaseError`` that ``sync`` heals by itself.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _heal_lock(path):
            try:
                return IndexDB(_open_checked(path, verify), path, None)
            except (sqlite3.DatabaseError, NewerSchema, ForeignDatabase, _Corrupt) as exc:
                reason = _heal_reason(exc)
            _move_aside(path)
            return IndexDB(_open_checked(path, False), path, reason)
    except (OSError, sqlite3.Error) as exc:
        if _read_only(exc):
            return _in_memory_copy(path, exc)
        raise ElfmemError(
            f"cannot open the index at {path}: {exc}",
            f"Check that {path.parent} is writable and not full, then retry; the index is "
            "derived, so deleting the folder is always safe.",
        ) from exc


def _read_only(exc: BaseException) -> bool:
    """Whether opening failed because the place cannot be written (a read-only mount, a
    repository another user owns), as opposed to a full disk or a broken file."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    return code in (_SQLITE_READONLY, _SQLITE_CANTOPEN) or "readonly" in str(exc)


def _in_memory_copy(path: Path, why: BaseException) -> IndexDB:
    """Serve reads from a read-only repository: the file copied into memory (or an empty
    index where there is none, or it is unusable); the caller's sync brings it up to date."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    if path.exists() and _header_damage(path) is None:
        try:
            # immutable: no lock, no -shm; the last checkpoint is a consistent snapshot
            source = sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)
            try:
                source.backup(conn)
            finally:
                source.close()
            migrate(conn)
        except (sqlite3.Error, NewerSchema, ForeignDatabase):
            conn.close()
            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    migrate(conn)
    db = IndexDB(conn, None, None)
    db.read_only = f"{path.parent} is read-only ({why}); the index is kept in memory"
    return db


def open_memory_index() -> IndexDB:
    """A throwaway in-memory index, for ``--at REV`` previews and ``index parity``."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    migrate(conn)
    return IndexDB(conn, None, None)


class _Corrupt(Exception):
    pass


def _open_checked(path: Path, verify: bool) -> sqlite3.Connection:
    damage = _header_damage(path)
    if damage is not None:
        raise _Corrupt(damage)
    conn = sqlite3.connect(
        str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        # The default 2 MiB page cache thrashes on random-key index inserts: a 10k-block rebuild
        # spent 9x longer inserting rows. The cache only grows as pages are actually used.
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        if verify:
            check = conn.execute("PRAGMA quick_check").fetchall()
            if check != [("ok",)]:
                raise _Corrupt("quick_check: " + "; ".join(str(r[0]) for r in check[:3]))
        migrate(conn)
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not _TABLES <= names:
            raise _Corrupt("missing tables: " + ", ".join(sorted(_TABLES - names)))
        conn.execute("SELECT key, value FROM meta").fetchall()
    except BaseException:
        conn.close()
        raise
    return conn


def _header_damage(path: Path) -> str | None:
    """Garbage or truncation visible from the 100-byte header, without reading any page."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(100)
            size = os.fstat(handle.fileno()).st_size
    except FileNotFoundError:
        return None
    if not head:
        return None  # an empty file is a new database
    if len(head) < 100 or not head.startswith(b"SQLite format 3\0"):
        return "not an SQLite file"
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    if head[24:28] == head[92:96] and size < pages * page_size:
        return f"truncated: {size} bytes where the header promises {pages * page_size}"
    return None


def is_corruption(exc: sqlite3.DatabaseError) -> bool:
    """Damage to the file itself (as opposed to busy, read-only or I/O trouble)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is None or (code & 0xFF) in _CORRUPT_CODES


def _heal_reason(exc: Exception) -> str:
    if isinstance(exc, sqlite3.DatabaseError):
        if not is_corruption(exc):
            raise exc  # busy, read-only, I/O: not the file's fault, so not healed by deleting it
        return f"index file was corrupt ({exc}); rebuilt"
    if isinstance(exc, NewerSchema):
        return f"{exc}; rebuilt for this version"
    return f"index file was unusable ({exc}); rebuilt"


def _companions(path: Path) -> list[Path]:
    """The database, its journals and its mapped vector file (see vectorfile.py)."""
    names = (
        path.name,
        path.name + "-wal",
        path.name + "-shm",
        path.stem + ".vectors",
        path.stem + ".vectors.rows",
        path.stem + ".passages",
        path.stem + ".passages.rows",
    )
    return [path.with_name(name) for name in names]


def _move_aside(path: Path) -> None:
    """Keep the last broken file for inspection (``index.db.broken``) and drop its journals."""
    main, *derived = _companions(path)
    if main.exists():
        os.replace(main, main.with_name(main.name + ".broken"))
    for companion in derived:
        companion.unlink(missing_ok=True)


def _heal_lock(path: Path) -> contextlib.AbstractContextManager[None]:
    """Serialise open-check-heal across processes, so one process never moves aside the fresh
    file another has just rebuilt."""
    return filelock.held(path)
