"""Reading the SQLite database of upstream elfmem (PyPI ``elfmem`` 0.20), read-only.

Upstream keeps a memory in one SQLite file: ``blocks`` (content, status, cue, the Beta posterior
as ``success_count``/``failure_count``), ``block_tags``, ``edges`` (endpoints stored in sorted
order, ``declared_by`` naming the side that declared a typed link when it is known) and
``block_outcomes``. This is the only place that knows those tables; the importer
(``elfmem.sharing.upstream``) turns what is read here into blocks and ledger events. It lives
beside our index because this package is the project's one SQLite user.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elfmem.errors import InvalidInput, NotFound

REQUIRED_TABLES = ("blocks", "block_tags", "edges")


@dataclass(frozen=True, slots=True)
class UpstreamOutcome:
    signal: float
    weight: float
    source: str
    created: str


@dataclass(frozen=True, slots=True)
class UpstreamBlock:
    id: str
    content: str
    category: str
    status: str
    """``inbox``, ``active`` or ``archived`` as upstream records it."""
    created: str
    cue: str = ""
    tags: tuple[str, ...] = ()
    pinned: bool = False
    alpha: float = 0.5
    beta: float = 0.5
    archive_reason: str = ""
    superseded_by: str = ""
    outcomes: tuple[UpstreamOutcome, ...] = ()
    share: str = ""
    """``private``, ``peer`` or ``public`` (upstream's default is private); empty when the
    database predates the column."""


@dataclass(frozen=True, slots=True)
class UpstreamEdge:
    from_id: str
    to_id: str
    relation: str
    weight: float
    origin: str
    declared_by: str = ""


@dataclass(frozen=True, slots=True)
class UpstreamMemory:
    path: str
    schema_version: int
    blocks: list[UpstreamBlock] = field(default_factory=list)
    edges: list[UpstreamEdge] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)
    """What the database holds that has no place in our memory: what → how many rows."""


_LEFT_OUT = {
    "sessions": ("sessions", ""),
    "custom frames": ("frames", "WHERE source != 'builtin'"),
    "peers in upstream's roster": ("peer_roster", ""),
    "recorded contradictions": ("contradictions", ""),
    "identity amendments": ("block_amendments", ""),
    "co-retrieval counts not yet an edge": ("co_retrieval_staging", ""),
}


def _left_out(conn: sqlite3.Connection, tables: set[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for what, (table, where) in _LEFT_OUT.items():
        if table not in tables:
            continue
        try:
            n = int(conn.execute(f"SELECT COUNT(*) FROM {table} {where}").fetchone()[0])
        except sqlite3.Error:  # an older schema without the column: count every row
            n = int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        if n:
            counts[what] = n
    return counts


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _text(value: object) -> str:
    return "" if value is None else str(value)


def read_upstream(db_path: Path) -> UpstreamMemory:
    """Every block, its tags and outcomes, and every edge of the upstream database at
    ``db_path``, opened read-only (the file is never changed, not even its journal)."""
    if not db_path.is_file():
        raise NotFound(
            f"no upstream elfmem database at {db_path}.",
            "Pass the upstream project folder (with .elfmem/config.yaml) or its .db file.",
        )
    try:
        conn = sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise InvalidInput(f"cannot open {db_path}: {exc}", "Check the file.") from exc
    try:
        return _read(conn, db_path)
    except sqlite3.DatabaseError as exc:
        raise InvalidInput(
            f"{db_path} is not an upstream elfmem database ({exc}).",
            "Pass the database upstream elfmem wrote (project.db in its .elfmem/config.yaml).",
        ) from exc
    finally:
        conn.close()


def _read(conn: sqlite3.Connection, db_path: Path) -> UpstreamMemory:
    conn.row_factory = sqlite3.Row
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    missing = [t for t in REQUIRED_TABLES if t not in tables]
    if missing:
        raise InvalidInput(
            f"{db_path} has no {', '.join(missing)} table: not an upstream elfmem database.",
            "Pass the database upstream elfmem wrote (project.db in its .elfmem/config.yaml).",
        )
    cols = _columns(conn, "blocks")
    tags: dict[str, list[str]] = {}
    for row in conn.execute("SELECT block_id, tag FROM block_tags ORDER BY block_id, tag"):
        tags.setdefault(row["block_id"], []).append(row["tag"])
    outcomes: dict[str, list[UpstreamOutcome]] = {}
    if "block_outcomes" in tables:
        for row in conn.execute(
            "SELECT block_id, signal, weight, source, created_at FROM block_outcomes "
            "ORDER BY created_at, id"
        ):
            outcomes.setdefault(row["block_id"], []).append(
                UpstreamOutcome(
                    float(row["signal"]),
                    float(row["weight"]),
                    _text(row["source"]),
                    _text(row["created_at"]),
                )
            )
    blocks = []
    for row in conn.execute("SELECT * FROM blocks ORDER BY created_at, id"):

        def get(name: str, r: sqlite3.Row = row) -> Any:
            return r[name] if name in cols else None

        blocks.append(
            UpstreamBlock(
                id=row["id"],
                content=row["content"],
                category=_text(row["category"]) or "knowledge",
                status=_text(row["status"]) or "inbox",
                created=_text(row["created_at"]),
                cue=_text(get("cue")),
                tags=tuple(tags.get(row["id"], ())),
                pinned=bool(get("pinned")),
                alpha=float(get("success_count") or 0.5),
                beta=float(get("failure_count") or 0.5),
                archive_reason=_text(get("archive_reason")),
                superseded_by=_text(get("superseded_by")),
                outcomes=tuple(outcomes.get(row["id"], ())),
                share=_text(get("share")),
            )
        )
    edge_cols = _columns(conn, "edges")
    edges = [
        UpstreamEdge(
            row["from_id"],
            row["to_id"],
            _text(row["relation_type"]) if "relation_type" in edge_cols else "similar",
            float(row["weight"]),
            _text(row["origin"]) if "origin" in edge_cols else "",
            _text(row["declared_by"]) if "declared_by" in edge_cols else "",
        )
        for row in conn.execute("SELECT * FROM edges ORDER BY from_id, to_id")
    ]
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    return UpstreamMemory(str(db_path), version, blocks, edges, _left_out(conn, tables))
