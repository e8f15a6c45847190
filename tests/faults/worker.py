"""Runs write operations in forked children that kill themselves at a named fault point.

Started once per test run as ``python -m tests.faults.worker <spec.json>``: it imports elfmem
and loads the model once, then forks one child per case, so a case costs a fork, not an
interpreter start. Each case runs on its own copy of a prepared repository; after the child is
gone the killed state is copied once more, for the check that a person commits on top of it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from elfmem.api import MemorySystem
from elfmem.store import faults


async def _op(system: MemorySystem, op: str, ids: list[str]) -> None:
    if op == "remember":
        await system.remember("The fault drill adds this fact", cue="fault drill")
    elif op == "batch":
        await system.remember_many(
            [
                {"content": "Batch fact about the pager", "cue": "pager"},
                {"content": "Batch procedure for deploys", "category": "procedure"},
            ]
        )
    elif op == "edit":
        await system.edit(ids[0], content="The pager rota changes on Tuesdays now")
    elif op == "forget":
        await system.forget(ids[1])
    elif op == "dream":
        await system.dream(no_llm=True)
    elif op == "curate":
        await system.curate()
    elif op == "undo":
        await system.undo()
    elif op == "outcome":
        await system.outcome([ids[0]], 0.9, source="drill")
    elif op == "connect":
        await system.connect(ids[0], ids[2], "related")
    else:
        raise ValueError(op)


def _tip(root: Path, ref: str) -> str:
    proc = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", ref], cwd=root, capture_output=True, text=True
    )
    return proc.stdout.strip()


def _child(root: Path, op: str, point: str, ids: list[str]) -> None:
    os.environ["ELFMEM_FAULT"] = point
    faults._armed.cache_clear()

    async def run() -> None:
        system = await MemorySystem.from_config(root)
        await _op(system, op, ids)
        ack = {"head": _tip(root, "HEAD"), "notes": _tip(root, "refs/notes/elfmem")}
        (root.parent / "ack.json").write_text(json.dumps(ack))
        await system.close()

    asyncio.run(run())


def run_case(base: Path, case: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    where = Path(case["dir"])
    shutil.copytree(base, where / "a", symlinks=True)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            _child(where / "a", case["op"], case["point"], ids)
        except BaseException as exc:  # reported to the test, which fails on it
            (where / "error.txt").write_text(repr(exc))
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    shutil.copytree(where / "a", where / "b", symlinks=True)
    return {**case, "signal": os.WIFSIGNALED(status) and os.WTERMSIG(status), "status": status}


def main(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    base = Path(spec["base"])
    ids = spec["ids"]
    asyncio.run(_warm(base))
    results = [run_case(base, case, ids) for case in spec["cases"]]
    Path(spec["out"]).write_text(json.dumps(results))


async def _warm(base: Path) -> None:
    """Load the model and every module before forking, so children start warm."""
    scratch = base.parent / "warm"
    shutil.copytree(base, scratch, symlinks=True)
    system = await MemorySystem.from_config(scratch)
    await system.recall("warm up")
    await system.close()


if __name__ == "__main__":
    main(sys.argv[1])
