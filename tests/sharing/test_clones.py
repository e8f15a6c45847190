"""Clones that all wrote memory converge through plain `git pull`/`git push`.

Each clone remembers, edits, forgets and dreams on its own; then the git binary pulls and
pushes through a bare remote on local disk (or, in the ring, from one clone to the next). The
merge driver merges buckets by block id and the next elfmem command reconciles blocks that moved
between files. At the end: every block any clone made is there, no file holds conflict markers,
and the memory trees are identical. The default run uses a few blocks per clone; the `soak`
runs use 1,000 per clone and ten ring rounds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.sharing.driver import register
from tests.conftest import git
from tests.sharing.clones import folded
from tests.sharing.helpers import dream, ids_once, init, listed, remember, with_memory


def _many(repo: Path, prefix: str, n: int) -> list[str]:
    async def go(system: MemorySystem) -> list[str]:
        items = [{"content": f"{prefix} fact {i}: host h{i} serves shard {i}"} for i in range(n)]
        result = await system.remember_many(items)
        return list(result.created)

    return with_memory(repo, go)


def _work(
    repo: Path, prefix: str, n: int, shared: list[str], edit_text: str, signal: float
) -> list[str]:
    """N captures, an edit of the first shared block, a forget of another, a dream, and
    outcomes: ``signal`` for the first shared block and for this clone's first new block."""

    async def go(system: MemorySystem) -> list[str]:
        items = [{"content": f"{prefix} fact {i}: host h{i} serves shard {i}"} for i in range(n)]
        made = list((await system.remember_many(items)).created)
        assert len(made) == n
        await system.edit(shared[0], content=edit_text)
        await system.forget(shared[1 if prefix == "alpha" else 2])
        await system.dream(no_llm=True, max_blocks=n + 10)
        await system.outcome([shared[0], made[0]], signal)
        return made

    return with_memory(repo, go)


def _memory_tree(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD:.elfmem/memory").strip()


def _two_clones(tmp_path: Path, repo: Path, n: int) -> None:
    init(repo)
    shared = remember(repo, "Pool size is 20", "Backups run nightly", "Logs go to Loki")
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "fetch", "-q", "origin")
    git(repo, "branch", "-q", "--set-upstream-to=origin/main")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    register(other)  # what `elfmem hooks install` does for the driver in a fresh clone
    mine = _work(repo, "alpha", n, shared, "Pool size is 30", 1.0)
    yours = _work(other, "beta", n, shared, "Pool size is 40", 0.0)
    git(other, "push", "-q")
    git(repo, "pull", "-q", "--no-rebase", "--no-edit")
    seen = listed(repo)  # the next command reconciles
    git(repo, "push", "-q")
    git(other, "pull", "-q", "--no-rebase", "--no-edit")
    listed(other)
    git(other, "push", "-q")
    git(repo, "pull", "-q", "--no-rebase", "--no-edit")
    assert _memory_tree(repo) == _memory_tree(other)
    everything = ids_once(repo)
    assert set(shared + mine + yours) <= everything == ids_once(other)
    texts = set(seen.values())
    assert {"Pool size is 30", "Pool size is 40"} <= texts  # both edits, as a revision pair
    # The ledger travels by sync (the notes: plain git carries them only through the hooks):
    # afterwards both clones fold every event either clone recorded, as one clone would have.
    for clone in (repo, other, repo):
        with_memory(clone, lambda s: s.sync("origin"))
    ids = [shared[0], mine[0], yours[0]]
    states = folded(repo, ids)
    assert states == folded(other, ids)
    alpha_beta = {b: (a, b_) for b, (a, b_, _) in states.items()}
    assert alpha_beta == {
        shared[0]: (1.5, 1.5),  # a 1.0 from this clone, a 0.0 from the other
        mine[0]: (1.5, 0.5),
        yours[0]: (0.5, 1.5),
    }


def test_two_clones_pull_both_ways_and_converge(tmp_path: Path, repo: Path) -> None:
    _two_clones(tmp_path, repo, 6)


@pytest.mark.soak
def test_two_clones_of_a_thousand_blocks_each_converge(tmp_path: Path, repo: Path) -> None:
    _two_clones(tmp_path, repo, 1000)


def _ring(tmp_path: Path, repo: Path, rounds: int, per_round: int, dream_each_round: bool) -> None:
    init(repo)
    remember(repo, "Ring origin fact")
    clones = [repo]
    for name in ("b", "c"):
        clone = tmp_path / name
        git(tmp_path, "clone", "-q", str(repo), str(clone))
        register(clone)
        clones.append(clone)
    made: set[str] = set()
    for r in range(rounds + 2):  # two quiet rounds at the end: everything reaches everyone
        for k, clone in enumerate(clones):
            if r < rounds:
                made.update(_many(clone, f"round {r} clone {k}", per_round))
            upstream = clones[(k + 1) % len(clones)]
            git(clone, "pull", "-q", "--no-rebase", "--no-edit", str(upstream), "main")
            if dream_each_round:
                dream(clone)  # moves blocks between files: the pull after it reconciles
    trees = {_memory_tree(c) for c in clones}
    assert len(trees) == 1
    assert made <= ids_once(repo)


def test_three_clones_in_a_ring_converge(tmp_path: Path, repo: Path) -> None:
    _ring(tmp_path, repo, 3, 2, False)


@pytest.mark.soak
def test_three_clones_in_a_ring_for_ten_rounds_converge(tmp_path: Path, repo: Path) -> None:
    _ring(tmp_path, repo, 10, 30, True)
