"""The main job, offline on the embedded defaults: a memory is created, used, and learns.

Runs in a temporary repository (or the directory given) and prints what each step did.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

from elfmem import MemorySystem

FACTS = [
    (
        "Postgres connection pooling needs pgbouncer above 100 clients",
        "choosing a connection pooling strategy",
        ["db/postgres"],
    ),
    (
        "Raise max_connections to 5000 instead of pooling",
        "choosing a connection pooling strategy",
        ["db/postgres"],
    ),
    (
        "Shard the events table by tenant once it passes 500 million rows",
        "database scaling",
        ["db/postgres"],
    ),
    (
        "Redis needs maxmemory set or it grows until the OOM killer runs",
        "configuring a redis cache",
        ["db/redis"],
    ),
]


async def main(root: Path) -> None:
    system, init = await MemorySystem.init(root, name="Ada", seed=True)
    print(init.summary)
    async with system.session():
        batch = await system.remember_many(
            [{"content": c, "cue": q, "tags": t} for c, q, t in FACTS]
        )
        print(batch.summary)
        print((await system.dream(max_blocks=10)).summary)
        ctx = await system.recall("database scaling and pooling", top_k=3)
        print(ctx.text)
        good, bad = batch.created[0], batch.created[1]
        for _ in range(3):
            await system.outcome([good], 1.0, source="demo")
            await system.outcome([bad], 0.0, source="demo")
        ranked = await system.recall("connection pooling", top_k=2, reinforce=False)
        print(
            "after outcomes:", [f"{b.content[:40]}… conf {b.confidence:.2f}" for b in ranked.blocks]
        )
        print((await system.frame("self")).text[:400])
        print((await system.status()).summary)
    await system.close()
    print(
        subprocess.run(
            ["git", "log", "--oneline", "-8"], cwd=root, capture_output=True, text=True
        ).stdout
    )


if __name__ == "__main__":
    if len(sys.argv) > 1:
        asyncio.run(main(Path(sys.argv[1])))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(main(Path(tmp)))
