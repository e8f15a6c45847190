"""Random SIGKILL soak: kill write operations at random moments and check what survives.

Each trial copies a prepared memory, forks a child that runs one write operation (chosen in
turn from remember, batch, edit, forget, dream, curate, undo, outcome, connect), and kills it
with SIGKILL once it has opened the memory, after a random delay drawn from [0.3, 1.1) times
that operation's measured duration, so kills land before, inside and after the commit (the
write itself comes late in an operation, after planning). The killed state is checked twice, as
``tests/faults/test_fault_matrix.py`` does for its named points: through elfmem (opening
recovers; every committed block is listed; an acknowledged write is on the branch; the next
write succeeds; ``git status`` and ``git fsck`` clean) and through a person who commits another
file with plain git first (no block reverted or deleted).

    python bench/crash_soak.py [--trials 200] [--seed 13] [--keep DIR]

Prints one row per operation. "journal left" counts kills that interrupted a write (the next
open finished or took it back), "moved, no ack" kills after the branch moved but before the
operation returned; the columns from "hidden" on count failures and must be zero.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import pygit2
from common import parse

from elfmem.api import MemorySystem
from elfmem.block.layout import parse_bucket_path
from elfmem.block.parse import parse_bytes

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.faults.worker import _op, prepare  # noqa: E402

OPS = ["remember", "batch", "edit", "forget", "dream", "curate", "undo", "outcome", "connect"]


def blocks(root: Path, rev: str = "HEAD") -> dict[str, str]:
    repo = pygit2.Repository(str(root))
    tree = repo.revparse_single(rev).peel(pygit2.Commit).tree
    out: dict[str, str] = {}
    stack = [(tree[".elfmem/memory"], "")]
    while stack:
        folder, prefix = stack.pop()
        for entry in folder:  # type: ignore[attr-defined]
            name = prefix + entry.name
            if entry.type_str == "tree":
                stack.append((repo.get(entry.id), name + "/"))
            elif parse_bucket_path(name) is not None:
                out.update({b.id: b.content for b in parse_bytes(repo.get(entry.id).data, name)})
    return out


def git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)


def run_child(root: Path, op: str, ids: list[str], ack: Path) -> int:
    """Fork a child running ``op``; returns once the child has opened the memory and is about
    to start the operation. The child writes ``ack`` once the operation has returned."""
    ready, go_on = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready)

        async def go() -> None:
            system = await MemorySystem.from_config(root)
            os.write(go_on, b"1")
            start = time.perf_counter()
            await _op(system, op, ids)
            seconds = time.perf_counter() - start
            notes = git(root, "rev-parse", "-q", "--verify", "refs/notes/elfmem").stdout
            head = git(root, "rev-parse", "HEAD").stdout
            tips = {"head": head.strip(), "notes": notes.strip(), "seconds": seconds}
            ack.with_suffix(".tmp").write_text(json.dumps(tips))
            ack.with_suffix(".tmp").rename(ack)
            await system.close()

        try:
            asyncio.run(go())
        finally:
            os._exit(0)
    os.close(go_on)
    os.read(ready, 1)
    os.close(ready)
    return pid


def check_elfmem(root: Path, ack: dict[str, str] | None) -> list[str]:
    problems = []
    system = asyncio.run(MemorySystem.from_config(root))
    committed = blocks(root)
    listed = {b.id for b in asyncio.run(system.ls(status="all")).blocks}
    if not set(committed) <= listed:
        problems.append("hidden")
    if ack is not None:
        repo = pygit2.Repository(str(root))
        for key, ref in (("head", "HEAD"), ("notes", "refs/notes/elfmem")):
            if not ack[key]:  # no notes ref yet
                continue
            tip = repo.revparse_single(ref).id
            if tip != pygit2.Oid(hex=ack[key]) and not repo.descendant_of(tip, ack[key]):
                problems.append("acked lost")
    try:
        after = asyncio.run(system.remember("after the crash", cue="after"))
        asyncio.run(system.close())
        if after.block_id not in blocks(root):
            problems.append("next write")
    except Exception as exc:  # noqa: BLE001 - counted and shown, the soak goes on
        print(f"{root}: next write failed: {exc!r}", file=sys.stderr)
        problems.append("next write")
    if git(root, "status", "--porcelain").stdout:
        problems.append("dirty")
    if git(root, "fsck", "--strict", "--no-dangling").stdout:
        problems.append("fsck")
    return problems


def check_person(root: Path) -> list[str]:
    before = blocks(root)
    journal = root / ".git" / "elfmem" / "journal.json"
    pending = blocks(root, json.loads(journal.read_text())["commit"]) if journal.exists() else {}
    (root / "other.txt").write_text("mine\n")
    for _ in range(3):
        done = git(root, "add", "other.txt")
        if done.returncode == 0:
            done = git(root, "commit", "-q", "-m", "mine")
        if done.returncode == 0:
            break
        for lock in [root / ".git" / "index.lock", *(root / ".git" / "refs").glob("**/*.lock")]:
            if lock.exists() and str(lock) in done.stderr:
                lock.unlink()  # what git's message tells the person to do
    after = blocks(root)
    if any(after.get(i) not in (c, pending.get(i)) for i, c in before.items()):
        return ["reverted"]
    return check_elfmem(root, None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--ops", default=",".join(OPS), help="comma-separated subset")
    args = parse(parser, {"trials": 20})
    rng = random.Random(args.seed)
    ops = args.ops.split(",")
    work = args.keep or Path(tempfile.mkdtemp(prefix="crash-soak-"))
    base = work / "base"
    base.mkdir(parents=True)
    ids = asyncio.run(prepare(base))
    base_head = git(base, "rev-parse", "HEAD").stdout
    durations = {}
    for op in ops:  # calibrate: one uninterrupted run each
        trial = work / f"calibrate-{op}"
        shutil.copytree(base, trial)
        os.waitpid(run_child(trial, op, ids, trial / "ack.json"), 0)
        durations[op] = json.loads((trial / "ack.json").read_text())["seconds"]
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    started = time.perf_counter()
    for n in range(args.trials):
        op = ops[n % len(ops)]
        trial = work / f"t{n:03d}"
        shutil.copytree(base, trial / "a")
        pid = run_child(trial / "a", op, ids, trial / "ack.json")
        time.sleep(rng.uniform(0.3, 1.1) * durations[op])
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        shutil.copytree(trial / "a", trial / "b")
        ack_file = trial / "ack.json"
        ack = json.loads(ack_file.read_text()) if ack_file.exists() else None
        row = rows[op]
        row["trials"] += 1
        row["acknowledged"] += ack is not None
        row["journal left"] += (trial / "a" / ".git" / "elfmem" / "journal.json").exists()
        moved = git(trial / "a", "rev-parse", "HEAD").stdout != base_head
        row["moved, no ack"] += moved and ack is None
        for problem in check_elfmem(trial / "a", ack) + check_person(trial / "b"):
            row[problem] += 1
        if args.keep is None:
            shutil.rmtree(trial)
    elapsed = time.perf_counter() - started
    columns = ["trials", "acknowledged", "journal left", "moved, no ack", "hidden", "acked lost"]
    columns += ["next write"]
    columns += ["dirty", "fsck", "reverted"]
    print(f"{'operation':<10} {'op ms':>6} " + " ".join(f"{c:>12}" for c in columns))
    total: Counter[str] = Counter()
    for op in ops:
        total.update(rows[op])
        cells = " ".join(f"{rows[op][c]:>12}" for c in columns)
        print(f"{op:<10} {durations[op] * 1000:>6.0f} {cells}")
    print(f"{'total':<10} {'':>6} " + " ".join(f"{total[c]:>12}" for c in columns))
    print(f"{args.trials} trials in {elapsed:.0f} s")
    if args.keep is None:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
