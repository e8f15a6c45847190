"""Clones that share memory through a bare repository on local disk, with the real git binary
(sync's tests)."""

from __future__ import annotations

from pathlib import Path

from elfmem.api import MemorySystem
from tests.conftest import arun, git


def bare(tmp: Path, name: str = "remote.git") -> Path:
    path = tmp / name
    git(tmp, "init", "-q", "--bare", "-b", "main", str(path))
    return path


def clone(remote: Path, dest: Path) -> Path:
    git(dest.parent, "clone", "-q", str(remote), str(dest))
    return dest


def project(tmp: Path, remote: Path, name: str = "a") -> Path:
    """A user's project with one code commit, pushed to ``remote``."""
    root = tmp / name
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("print('hi')\n")
    git(root, "add", "app.py")
    git(root, "commit", "-q", "-m", "code")
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "-q", "-u", "origin", "main")
    return root


def opened(path: Path) -> MemorySystem:
    return arun(MemorySystem.from_config(path))


def remember(path: Path, *texts: str) -> list[str]:
    async def go() -> list[str]:
        system = await MemorySystem.from_config(path)
        try:
            return [(await system.remember(t)).block_id for t in texts]
        finally:
            await system.close()

    return arun(go())


def outcome(root: Path, ids: list[str], signal: float) -> None:
    async def go() -> None:
        system = await MemorySystem.from_config(root)
        try:
            await system.outcome(ids, signal)
        finally:
            await system.close()

    arun(go())


def block_ids(path: Path) -> set[str]:
    async def go() -> set[str]:
        system = await MemorySystem.from_config(path)
        try:
            return {b.id for b in (await system.ls(status="all")).blocks}
        finally:
            await system.close()

    return arun(go())


def folded(path: Path, ids: list[str]) -> dict[str, tuple[float, float, int]]:
    """Each block's Beta evidence (alpha, beta) and ledger event count as this clone folds it."""

    async def go() -> dict[str, tuple[float, float, int]]:
        system = await MemorySystem.from_config(path)
        try:
            states = system._core.ledger.folded_many(ids)
            return {b: (round(s.alpha, 9), round(s.beta, 9), s.events) for b, s in states.items()}
        finally:
            await system.close()

    return arun(go())


def rev(path: Path, ref: str) -> str:
    return git(path, "rev-parse", ref).strip()
