"""Sharing costs: export and import of N blocks, and a peer message's round trip through a remote.

Two real memories in a temporary folder share a bare repository on local disk. Ada remembers N
blocks (one batch commit) and dreams them active; then the script times, with wall clocks:
``export --share peer`` of them, ``import --from ada`` into Bob (one commit), the same import
again (nothing new), ``peer send`` (a signed commit and a push) and Bob's ``peer inbox --import``
(a fetch, a signature check per message, one commit). Prints a table.

    python bench/exchange_bench.py [--blocks 1000] [--messages 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from common import parse

from elfmem.api import MemorySystem


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


async def _memory(root: Path, name: str, remote: Path) -> Path:
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "remote", "add", "origin", str(remote))
    system, _ = await MemorySystem.init(root, name=name)
    await system.close()
    return root


async def _timed(root: Path, call: Callable[[MemorySystem], Awaitable[Any]]) -> float:
    system = await MemorySystem.from_config(root)
    start = time.perf_counter()
    await call(system)
    took = time.perf_counter() - start
    await system.close()
    return took


async def run(blocks: int, messages: int) -> list[tuple[str, str]]:
    with tempfile.TemporaryDirectory(prefix="elfmem-exchange-") as tmp:
        base = Path(tmp)
        remote = base / "shared.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        a = await _memory(base / "ada", "Ada", remote)
        b = await _memory(base / "bob", "Bob", remote)
        system = await MemorySystem.from_config(a)
        items = [
            {"content": f"Service {i} answers on port {8000 + i} behind gateway {i % 17}"}
            for i in range(blocks)
        ]
        await system.remember_many(items)
        await system.dream(no_llm=True)
        a_id = (await system.peer_init()).id
        await system.close()
        system = await MemorySystem.from_config(b)
        b_id = (await system.peer_init()).id
        await system.peer_add("ada", a_id, str(remote))
        await system.close()
        system = await MemorySystem.from_config(a)
        await system.peer_add("bob", b_id, str(remote))
        await system.close()

        path = base / "bundle.jsonl"
        rows = [
            (
                f"export --share peer, {blocks} blocks",
                await _timed(a, lambda s: s.export("peer", path)),
            ),
            (
                f"import --from ada, {blocks} blocks (one commit)",
                await _timed(b, lambda s: s.import_bundle(path, "ada")),
            ),
            ("import again (nothing new)", await _timed(b, lambda s: s.import_bundle(path, "ada"))),
        ]
        sends = [
            await _timed(a, lambda s, n=n: s.peer_send("bob", f"Message {n} about deploys"))
            for n in range(messages)
        ]
        inbox = await _timed(b, lambda s: s.peer_inbox(do_import=True))
        size = path.stat().st_size
    out = [(what, f"{secs * 1000:.0f} ms") for what, secs in rows]
    out.insert(1, ("bundle size", f"{size / 1024:.0f} KiB"))
    out.append(
        (f"peer send (sign + push), p50 of {messages}", f"{statistics.median(sends) * 1000:.0f} ms")
    )
    out.append((f"peer inbox --import of {messages} messages", f"{inbox * 1000:.0f} ms"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=20)
    args = parse(parser, {"blocks": 100, "messages": 5})
    rows = asyncio.run(run(args.blocks, args.messages))
    width = max(len(what) for what, _ in rows)
    print(f"| {'step':<{width}} | time |")  # noqa: T201
    print(f"|{'-' * (width + 2)}|------|")  # noqa: T201
    for what, value in rows:
        print(f"| {what:<{width}} | {value} |")  # noqa: T201


if __name__ == "__main__":
    main()
