"""Adaptivity: does memory learn which knowledge is right from outcomes alone?

Ten topics, each with one correct block and two misleading look-alikes (same vocabulary,
conflicting content), among distractors and a seeded constitution. Each round, inside a session,
every topic's query takes the attention frame's top 5 and sends outcome 1.0 for the correct block
and 0.0 for misleading ones; the memory curates at rest after each round. Printed per round: the
share of queries where the correct block outranks every misleading one, misleading blocks still
in a top 5, and negative outcomes spent. Then: the constitution is unchanged, a 14-day gap with no
session costs no recency, and two clones' merged ledgers fold to the same confidence as one.

    python bench/adaptivity.py [--rounds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import tempfile
import time
from pathlib import Path

from elfmem.api import MemorySystem

TOPICS = [
    (
        "connection pooling for postgres",
        "Use pgbouncer in transaction mode for Postgres connection pooling",
        [
            "Postgres connection pooling is best done by raising max_connections to 5000",
            "For Postgres connection pooling open a new connection per request and never pool",
        ],
    ),
    (
        "retrying rate limited api calls",
        "Retry rate limited API calls with exponential backoff and jitter",
        [
            "Retry rate limited API calls immediately in a tight loop until they succeed",
            "Never retry rate limited API calls; drop the request",
        ],
    ),
    (
        "storing user passwords",
        "Store user passwords hashed with argon2id and a per-user salt",
        [
            "Store user passwords encrypted with a shared AES key",
            "Store user passwords in plain text for easy recovery",
        ],
    ),
    (
        "deploying on fridays",
        "Deploys on Friday afternoon need an on-call engineer present",
        [
            "Deploys on Friday afternoon are fine without anyone on call",
            "Deploys on Friday afternoon should skip the test suite to save time",
        ],
    ),
    (
        "timezone for log timestamps",
        "Write log timestamps in UTC with an explicit offset",
        [
            "Write log timestamps in the server's local timezone without offset",
            "Write log timestamps as local time strings chosen per developer",
        ],
    ),
    (
        "caching session state",
        "Cache session state in Redis with a TTL matching the session lifetime",
        [
            "Cache session state in process memory on each web node",
            "Cache session state in Redis with no TTL so it never expires",
        ],
    ),
    (
        "database schema migrations",
        "Run database schema migrations forward-only in a separate deploy step",
        [
            "Run database schema migrations by hand on production when needed",
            "Run database schema migrations inside every web request on startup",
        ],
    ),
    (
        "handling secrets in ci",
        "Handle secrets in CI through the CI secret store, never in the repo",
        [
            "Handle secrets in CI by committing them to a private branch",
            "Handle secrets in CI by echoing them into the build log for debugging",
        ],
    ),
    (
        "sizing worker threads",
        "Size worker threads to the number of cores for CPU-bound work",
        [
            "Size worker threads to 1000 for CPU-bound work regardless of cores",
            "Size worker threads to one for CPU-bound work to avoid contention",
        ],
    ),
    (
        "choosing a queue for background jobs",
        "Choose a durable queue with acknowledgements for background jobs",
        [
            "Choose an in-memory list for background jobs; durability is not needed",
            "Choose cron polling a database table every minute for background jobs",
        ],
    ),
]
DISTRACTORS = [
    f"Team note {i}: the {w} review happens on {d}"
    for i, (w, d) in enumerate(
        [
            (w, d)
            for w in ("design", "security", "budget", "roadmap", "hiring", "incident")
            for d in ("Monday", "Wednesday", "Friday", "Thursday", "Tuesday")
        ]
    )
]


async def build(root: Path) -> tuple[MemorySystem, dict[str, tuple[str, list[str]]]]:
    system, _ = await MemorySystem.init(root, name="Ada", seed=True)
    topics: dict[str, tuple[str, list[str]]] = {}
    for query, correct, wrong in TOPICS:
        res = await system.remember_many(
            [{"content": correct, "cue": query}] + [{"content": w, "cue": query} for w in wrong]
        )
        topics[query] = (res.created[0], res.created[1:])
    await system.remember_many([{"content": d} for d in DISTRACTORS])
    await system.dream(max_blocks=1000)
    return system, topics


async def run(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        system, topics = await build(root)
        constitution = {
            b.id: b.content for b in (await system.ls(tag="self/constitutional")).blocks
        }
        self_md = (root / ".elfmem/memory/self.md").read_text()
        negatives = {q: 0 for q in topics}
        gone_after: dict[str, int | None] = {q: None for q in topics}
        print(
            f"{'round':>5} {'correct first':>14} {'misleading in top-5':>20} {'negatives sent':>15}"
        )
        for r in range(1, rounds + 1):
            wins = 0
            misleading_seen = 0
            async with system.session():
                for query, (correct, wrong) in topics.items():
                    result = await system.recall(query, top_k=5)
                    ids = [b.id for b in result.blocks]
                    bad = [w for w in wrong if w in ids]
                    misleading_seen += len(bad)
                    if correct in ids and all(ids.index(correct) < ids.index(w) for w in bad):
                        wins += 1
                    if not bad and gone_after[query] is None:
                        gone_after[query] = negatives[query]
                    if correct in ids:
                        await system.outcome([correct], 1.0, source="bench")
                    if bad:
                        await system.outcome(bad, 0.0, source="bench")
                        negatives[query] += len(bad)
            await system.curate()
            print(
                f"{r:>5} {wins / len(topics):>14.0%} "
                f"{misleading_seen:>20} {sum(negatives.values()):>15}"
            )
        worst = max((v for v in gone_after.values() if v is not None), default=None)
        never = [q for q, v in gone_after.items() if v is None]
        print(
            f"\nnegative outcomes per topic before its misleading blocks left the top 5: "
            f"max {worst}, per topic {sorted(v for v in gone_after.values() if v is not None)}"
            + (f"; never left: {never}" if never else "")
        )
        after = {b.id: b.content for b in (await system.ls(tag="self/constitutional")).blocks}
        unchanged = (
            after == constitution and (root / ".elfmem/memory/self.md").read_text() == self_md
        )
        print(f"constitution unchanged: {unchanged}")
        core = system._core
        now = core.ledger.now_hours()
        later = core.ledger.now_hours(at=time.time() + 14 * 86400)
        print(
            f"active hours now {now:.4f}; 14 days later with no session {later:.4f}: "
            f"{'no decay' if later == now else 'DECAYED'}"
        )
        await system.close()
    await merge_check()


async def merge_check() -> None:
    """Two clones each send half the outcomes; merged with git's cat_sort_uniq they fold like
    one."""
    with tempfile.TemporaryDirectory() as tmp:
        a_root = Path(tmp) / "a"
        system, _ = await MemorySystem.init(a_root)
        ids = (
            await system.remember_many([{"content": f"Merge fact {i}"} for i in range(3)])
        ).created
        await system.dream(max_blocks=10)
        await system.close()
        b_root = Path(tmp) / "b"
        subprocess.run(["git", "clone", "-q", str(a_root), str(b_root)], check=True)
        subprocess.run(
            ["git", "fetch", "-q", "origin", "refs/notes/elfmem:refs/notes/elfmem"],
            cwd=b_root,
            check=True,
        )
        plan = [(0, 1.0), (1, 0.0), (2, 0.6), (0, 0.9), (1, 0.1), (2, 1.0)]
        for root, half in ((a_root, plan[:3]), (b_root, plan[3:])):
            s = await MemorySystem.from_config(root)
            for i, signal in half:
                await s.outcome([ids[i]], signal)
            await s.close()
        subprocess.run(
            ["git", "fetch", "-q", str(b_root), "refs/notes/elfmem:refs/notes/theirs"],
            cwd=a_root,
            check=True,
        )
        subprocess.run(
            [
                "git",
                "notes",
                "--ref=elfmem",
                "merge",
                "-q",
                "-s",
                "cat_sort_uniq",
                "refs/notes/theirs",
            ],
            cwd=a_root,
            check=True,
        )
        merged = await MemorySystem.from_config(a_root)
        got = [round(merged._core.ledger.folded(i).confidence, 6) for i in ids]
        await merged.close()
        expected = []
        for n in range(3):
            a = 0.5 + sum(s for i, s in plan if i == n)
            b = 0.5 + sum(1 - s for i, s in plan if i == n)
            expected.append(round(a / (a + b), 6))
        print(
            f"clone-and-merge confidence {got} vs all events in one clone {expected}: "
            f"{'equal' if got == expected else 'DIFFERENT'}"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    asyncio.run(run(ap.parse_args().rounds))
