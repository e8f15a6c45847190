"""The clone-and-merge check of ``bench/adaptivity.py``: outcomes sent in two clones and merged
with git's ``cat_sort_uniq`` fold like all of them sent in one."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from elfmem.api import MemorySystem


async def merge_check() -> None:
    """Two clones each send half the outcomes; merged with git's cat_sort_uniq they fold like
    one."""
    with tempfile.TemporaryDirectory() as tmp:
        a_root = Path(tmp) / "a"
        system, _ = await MemorySystem.init(a_root)
        ids = (
            await system.remember_many([{"content": f"Merge fact {i}"} for i in range(3)])
        ).created
        await system.dream()
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
