"""Make a memory with the real upstream elfmem (PyPI ``elfmem==0.20.0``) and dump what it reports.

Run it with the Python of a scratch venv that has the upstream package (never this repo's venv:
both packages are called ``elfmem``)::

    python3 -m venv /work/wt/upstream-venv
    /work/wt/upstream-venv/bin/pip install -q elfmem==0.20.0
    /work/wt/upstream-venv/bin/python scripts/make_upstream_fixture.py OUT_DIR

It works offline: upstream's own mock LLM and hash embedder replace the network adapters. OUT_DIR
receives ``project/`` (an upstream project: ``.elfmem/config.yaml``, the SQLite database
``.elfmem/agent.db`` and the Markdown substrate ``.elfmem/memory/``) and ``expected.json``:
every block with the id, status, category, cue, tags, pinned flag, α/β and confidence upstream
reports, its outcomes, and every edge. ``tests/sharing/test_upstream.py`` imports the project
with our importer and compares.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from elfmem import MemorySystem
from elfmem.adapters.mock import make_mock_embedding, make_mock_llm

FACTS = [
    (
        "Use PgBouncer in transaction mode for the API's connection pool.",
        ["db/postgres"],
        "choosing a connection pooling strategy",
    ),
    (
        "The staging database is rebuilt from the nightly snapshot at 02:00 UTC.",
        ["db/staging"],
        "why staging data looks a day old",
    ),
    (
        "Deploys go out through the blue/green switch; never restart both colours at once.",
        ["ops/deploy"],
        "rolling out a release",
    ),
    (
        "The billing service retries webhooks five times with exponential backoff.",
        ["billing"],
        "a webhook was delivered twice",
    ),
    (
        "Alice owns the search ranking code and reviews every change to it.",
        ["team"],
        "who to ask about search ranking",
    ),
    (
        "Feature flags live in LaunchDarkly; stale flags are removed every quarter.",
        ["ops/flags"],
        "cleaning up feature flags",
    ),
    (
        "The mobile app caches the user profile for 24 hours.",
        ["mobile", "cache"],
        "profile changes not showing on the phone",
    ),
    (
        "Integration tests need the local Kafka broker from docker compose.",
        ["testing"],
        "integration tests hang on startup",
    ),
    (
        "Customer exports are capped at 50,000 rows per request.",
        ["api/limits"],
        "an export came back truncated",
    ),
    (
        "Error budgets are reviewed in the Monday operations meeting.",
        ["ops/sre"],
        "when are error budgets discussed",
    ),
    (
        "The data warehouse loads events with a two hour delay.",
        ["data"],
        "dashboards missing the last hours",
    ),
    (
        "Passwords are hashed with argon2id; bcrypt hashes are upgraded at login.",
        ["security"],
        "which password hash we use",
    ),
    (
        "The CDN purges on deploy only for paths under /static.",
        ["ops/cdn"],
        "old assets after a deploy",
    ),
    ("Search indexes are rebuilt weekly on Sunday night.", ["search"], "search results look stale"),
    (
        "The on-call rotation changes every Tuesday at 10:00 local time.",
        ["ops/oncall"],
        "who is on call this week",
    ),
    (
        "API rate limits are 600 requests per minute per token.",
        ["api/limits"],
        "clients hitting 429 errors",
    ),
    (
        "Image uploads are resized to 2048 pixels on the long edge.",
        ["media"],
        "uploaded images look smaller",
    ),
    (
        "Old invoices older than seven years are archived to cold storage.",
        ["billing"],
        "finding a very old invoice",
    ),
    (
        "The analytics team prefers Parquet over CSV for extracts.",
        ["data"],
        "format for a data extract",
    ),
    (
        "Session cookies expire after 14 days of inactivity.",
        ["security", "auth"],
        "users logged out unexpectedly",
    ),
    (
        "We decided to keep the monolith for billing until 2027.",
        ["architecture"],
        "should billing be split out",
    ),
    (
        "Timezone handling uses UTC in storage and converts only in the UI.",
        ["architecture"],
        "timestamps off by an hour",
    ),
]

CONFIG = {
    "project": {"name": "upstream-fixture", "db": ".elfmem/agent.db", "agent_name": "elf"},
    "substrate": {"files_authoritative": True},
}


async def build(project: Path) -> dict[str, Any]:
    elfmem_dir = project / ".elfmem"
    elfmem_dir.mkdir(parents=True)
    for sub in ("notes", "log", "archive"):
        (elfmem_dir / "memory" / sub).mkdir(parents=True)
    (elfmem_dir / "memory" / "self.md").write_text("# Self\n\nI am elf.\n", "utf-8")
    config_path = elfmem_dir / "config.yaml"
    config_path.write_text(yaml.safe_dump(CONFIG, sort_keys=False), "utf-8")
    db_path = elfmem_dir / "agent.db"
    system = await MemorySystem.from_config(str(db_path), str(config_path))
    # Offline: upstream's own mocks in place of the network adapters from the factory.
    system._llm = make_mock_llm(default_alignment=0.6)
    system._embedding = make_mock_embedding()
    system._memory_dir = elfmem_dir / "memory"
    system._ledger_dir = elfmem_dir / "ledger"
    ids: list[str] = []
    async with system.session():
        for content, tags, cue in FACTS:
            learned = await system.learn(content, tags, cue=cue)
            ids.append(learned.block_id)
        await system.learn(
            "Remember to rotate the staging TLS certificate.", ["ops"], category="observation"
        )
        await system.consolidate(max_inbox_per_run=len(FACTS))
        await system.connect(ids[0], ids[1], "supports")
        await system.connect(ids[2], ids[12], "requires")
        await system.connect(ids[8], ids[15], "refines")
        await system.connect(ids[3], ids[17], note="both about billing")
        await system.outcome([ids[0], ids[2]], 0.95, source="deploy went fine")
        await system.outcome([ids[0]], 0.9, source="pool held under load")
        await system.outcome([ids[5]], 0.1, source="flags were not removed")
        await system.outcome([ids[9]], 0.5, source="unclear")
        await system.forget(ids[6])
        await system.forget(ids[13])
    await system.close()
    return dump(db_path)


def dump(db_path: Path) -> dict[str, Any]:
    """What upstream's database says about every block and edge, straight from its tables."""
    conn = sqlite3.connect(db_path)
    conn.row_factory = sqlite3.Row
    blocks = []
    for row in conn.execute("SELECT * FROM blocks ORDER BY created_at, id"):
        tags = [
            t[0]
            for t in conn.execute(
                "SELECT tag FROM block_tags WHERE block_id = ? ORDER BY tag", (row["id"],)
            )
        ]
        outcomes = [
            dict(o)
            for o in conn.execute(
                "SELECT signal, weight, source FROM block_outcomes WHERE block_id = ? "
                "ORDER BY created_at, id",
                (row["id"],),
            )
        ]
        blocks.append(
            {
                "id": row["id"],
                "content": row["content"],
                "category": row["category"],
                "status": row["status"],
                "archive_reason": row["archive_reason"],
                "cue": row["cue"],
                "tags": tags,
                "pinned": bool(row["pinned"]),
                "created_at": row["created_at"],
                "alpha": row["success_count"],
                "beta": row["failure_count"],
                "confidence": row["confidence"],
                "outcomes": outcomes,
            }
        )
    edges = [
        dict(e)
        for e in conn.execute(
            "SELECT from_id, to_id, relation_type, weight, origin, declared_by FROM edges "
            "ORDER BY from_id, to_id"
        )
    ]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    conn.close()
    return {
        "upstream_version": "0.20.0",
        "schema_user_version": version,
        "blocks": blocks,
        "edges": edges,
    }


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/sharing/fixtures/upstream")
    project = out / "project"
    if project.exists():
        shutil.rmtree(project)
    expected = asyncio.run(build(project))
    for junk in project.rglob("*"):
        if junk.name.endswith((".bak", "-wal", "-shm", ".lock")) or ".backup" in junk.name:
            junk.unlink()
    (out / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    sys.stderr.write(f"{len(expected['blocks'])} blocks, {len(expected['edges'])} edges -> {out}\n")


if __name__ == "__main__":
    main()
