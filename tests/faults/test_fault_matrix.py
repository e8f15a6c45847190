"""The deterministic fault matrix: every write path killed (SIGKILL) at every step.

One worker process prepares nothing itself: a base repository is built here once, the worker
forks a child per (operation, point) that kills itself at that point, and each case is then
checked twice: through elfmem (recovery on open, nothing committed hidden, every acknowledged
write present, the next write works, ``git fsck`` and ``git status`` clean) and through a person
who commits another file with plain git before any elfmem command runs (no block reverted or
deleted).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pygit2
import pytest

from elfmem.api import MemorySystem
from elfmem.block.layout import parse_bucket_path
from elfmem.block.parse import parse_bytes
from elfmem.care.hooks import HOOK_NAMES, program
from elfmem.store.faults import POINTS
from tests.conftest import GIT_ENV, arun, git

ROOT = Path(__file__).resolve().parents[2]
BRANCH_OPS = [
    *("remember", "batch", "edit", "forget", "dream", "curate", "undo", "connect"),
    "mind",  # later write paths join the matrix
    "reconcile",
    *("import-upstream", "migrate"),
    *("import-bundle", "peer-add"),  # sharing: a bundle import, a roster change
]
BRANCH_POINTS = [p for p in POINTS if p.startswith("write.")] + ["write.file#2"]
CASES = [(op, point) for op in BRANCH_OPS for point in BRANCH_POINTS] + [
    ("outcome", "notes.objects"),
    ("outcome", "notes.ref-lock"),
    ("outcome", "notes.ref"),
    ("remember", "notes.ref-lock"),  # the spool flush at close, after the acknowledgement
    ("remember", "notes.ref"),  # reached after the acknowledgement, by close's spool flush
    ("sync", "notes-merge.objects"),  # sharing: the union merge of diverged notes
    ("sync", "notes-merge.ref"),
]


PERSON: dict[str, tuple[bool, list[list[str]]]] = {
    "add-all": (False, [["add", "-A"], ["commit", "-q", "-m", "mine"]]),
    "add-all-hooks": (True, [["add", "-A"], ["commit", "-q", "-m", "mine"]]),
    "commit-a": (False, [["commit", "-q", "-a", "-m", "mine"]]),
    "commit-a-hooks": (True, [["commit", "-q", "-a", "-m", "mine"]]),
}
"""What a person types after a kill, each on its own copy of the killed state: everything
committed at once (``git add -A``, ``git commit -a``), with and without elfmem's hooks."""
HAND_CASES = [(op, point, how) for op, point in CASES for how in PERSON]
DEFAULT_HAND = {(op, point, list(PERSON)[i % len(PERSON)]) for i, (op, point) in enumerate(CASES)}
"""The default run commits by hand one way per kill point, the four ways taking turns down the
matrix, so every way meets every kind of write; ``pytest -m soak`` runs all four at every point."""
HAND_PARAMS = [
    pytest.param(
        *case, id="{}@{}-{}".format(*case), marks=() if case in DEFAULT_HAND else [pytest.mark.soak]
    )
    for case in HAND_CASES
]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, Any]]:
    home = tmp_path_factory.mktemp("home")
    (home / ".gitconfig").write_text("[user]\n\tname = Pat Person\n\temail = pat@example.com\n")
    env = {
        **os.environ,
        **GIT_ENV,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("ELFMEM_FAULT", None)
    work = tmp_path_factory.mktemp("matrix")
    base = work / "base"
    base.mkdir()
    cases = [
        {"op": op, "point": point, "dir": str(work / f"{op}-{point.replace('#', '-')}")}
        for op, point in CASES
    ]
    copies = ["b", *PERSON]
    spec = {"base": str(base), "cases": cases, "out": str(work / "out.json"), "copies": copies}
    (work / "spec.json").write_text(json.dumps(spec))
    subprocess.run(
        [sys.executable, "-m", "tests.faults.worker", str(work / "spec.json")],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=300,
    )
    results = json.loads((work / "out.json").read_text())["cases"]
    return {(r["op"], r["point"]): r for r in results}


def _committed_blocks(root: Path, rev: str = "HEAD") -> dict[str, str]:
    """Block id → content, parsed from the memory files of ``rev`` (read with pygit2)."""
    repo = pygit2.Repository(str(root))
    tree = repo.revparse_single(rev).peel(pygit2.Commit).tree
    blocks: dict[str, str] = {}
    stack = [(tree[".elfmem/memory"], "")]
    while stack:
        folder, prefix = stack.pop()
        for entry in folder:
            name = prefix + entry.name
            if entry.type_str == "tree":
                stack.append((repo.get(entry.id), name + "/"))
            elif parse_bucket_path(name) is not None:
                data = repo.get(entry.id).data
                blocks.update({b.id: b.content for b in parse_bytes(data, name)})
    return blocks


def _check_through_elfmem(root: Path, ack: dict[str, str] | None) -> None:
    system = arun(MemorySystem.from_config(root))  # opening recovers, before any read
    committed = _committed_blocks(root)
    listed = {b.id for b in arun(system.ls(status="all")).blocks}
    assert set(committed) <= listed, "a committed block is hidden"
    if ack is not None:  # an acknowledged write is never rolled back
        repo = pygit2.Repository(str(root))
        for key, ref in (("head", "HEAD"), ("notes", "refs/notes/elfmem")):
            tip = repo.revparse_single(ref).id
            assert tip == pygit2.Oid(hex=ack[key]) or repo.descendant_of(tip, ack[key])
    after = arun(system.remember("After the crash the next write works", cue="after"))
    arun(system.close())
    assert after.block_id in _committed_blocks(root)
    assert git(root, "status", "--porcelain") == ""
    assert git(root, "fsck", "--strict", "--no-dangling") == ""
    git_locks = [root / ".git" / "index.lock", *(root / ".git" / "refs").glob("**/*.lock")]
    assert not [lock for lock in git_locks if lock.exists()]


@pytest.mark.parametrize(("op", "point"), CASES, ids=[f"{o}@{p}" for o, p in CASES])
def test_a_kill_at_each_point_loses_nothing_and_needs_no_repair(
    matrix: dict[tuple[str, str], dict[str, Any]], op: str, point: str
) -> None:
    case = matrix[(op, point)]
    where = Path(case["dir"])
    assert not (where / "error.txt").exists(), (where / "error.txt").read_text()
    ack_file = where / "ack.json"
    ack = json.loads(ack_file.read_text()) if ack_file.exists() else None
    assert case["signal"] == 9 or ack is not None, case
    if (op in BRANCH_OPS or op == "sync") and "#" not in point:
        assert case["signal"] == 9, f"{op} never reached {point}: the case proves nothing"
    _check_through_elfmem(where / "a", ack)


@pytest.mark.parametrize(("op", "point"), CASES, ids=[f"{o}@{p}" for o, p in CASES])
def test_a_plain_git_commit_right_after_the_kill_reverts_no_block(
    matrix: dict[tuple[str, str], dict[str, Any]], op: str, point: str
) -> None:
    """The person commits another file with plain git; where git refuses because a killed
    write left its lock, they do what git's message says (delete it) and commit again. Each
    block then holds what HEAD held, or what the interrupted write was making of it."""
    root = Path(matrix[(op, point)]["dir"]) / "b"
    before = _committed_blocks(root)
    pending = _pending_blocks(root)
    (root / "other.txt").write_text("a person's own change\n")
    for _ in range(3):
        add = _person_git(root, "add", "other.txt")
        commit = add if add.returncode else _person_git(root, "commit", "-q", "-m", "mine")
        if commit.returncode == 0:
            break
        lock = re.search(r"Unable to create '([^']+\.lock)'", commit.stderr)
        assert lock is not None, commit.stderr
        Path(lock.group(1)).unlink()
    else:
        raise AssertionError("the person could not commit")
    after = _committed_blocks(root)
    for block_id, content in before.items():
        allowed = {content} if pending is None else {content, pending.get(block_id)}
        assert after.get(block_id) in allowed, f"{block_id} reverted or deleted"
    _check_through_elfmem(root, None)


def _person_git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def hooks_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """elfmem's hook programs, as `elfmem hooks install` writes them, for core.hooksPath."""
    where = tmp_path_factory.mktemp("hooks")
    for name in HOOK_NAMES:
        (where / name).write_bytes(program(name, sys.executable))
        (where / name).chmod(0o755)
    return where


def _commit_everything(root: Path, hooks: Path | None, steps: list[list[str]]) -> bool:
    """The person's commands; a lock git names as stale is deleted, as git's message says
    (``rm .git/index.lock``). True when the commit was made; False when elfmem's pre-commit
    hook refused it (the only refusal allowed)."""
    config = ["-c", f"core.hooksPath={hooks}"] if hooks is not None else []
    for _ in range(4):
        failed = None
        for step in steps:
            proc = _person_git(root, *config, *step)
            if proc.returncode:
                failed = proc
                break
        if failed is None:
            return True
        lock = re.search(r"Unable to create '([^']+\.lock)'", failed.stderr)
        if lock is None:
            assert hooks is not None and "elfmem" in failed.stderr, failed.stderr
            return False
        Path(lock.group(1)).unlink()
    raise AssertionError("the person could not commit")


@pytest.mark.parametrize(("op", "point", "how"), HAND_PARAMS)
def test_committing_everything_by_hand_after_the_kill_loses_no_block(
    matrix: dict[tuple[str, str], dict[str, Any]], hooks_dir: Path, op: str, point: str, how: str
) -> None:
    """The person deletes the stale lock and commits all they have (``git add -A && git
    commit``, or ``git commit -a``), hooks installed or not. After the next elfmem call every
    block the memory held before the interrupted write is in HEAD (archive included)."""
    root = Path(matrix[(op, point)]["dir"]) / how
    journal = root / ".git" / "elfmem" / "journal.json"
    before = set(_committed_blocks(root))
    if journal.exists():  # the write may remove a block (undo of a remember); nothing else may
        pending = json.loads(journal.read_text())
        before = set(_committed_blocks(root, pending["base"]))
        before &= set(_committed_blocks(root, pending["commit"]))
    (root / "README.md").write_text("a person's edit\n")
    with_hooks, steps = PERSON[how]
    if ["add", "-A"] in steps:
        (root / "mine.txt").write_text("a person's new file\n")
    committed = _commit_everything(root, hooks_dir if with_hooks else None, steps)
    arun(arun(MemorySystem.from_config(root)).close())  # the next elfmem call
    if not committed:  # refused by the hook: after elfmem finished its write, it goes through
        assert _commit_everything(root, hooks_dir, steps)
    lost = before - set(_committed_blocks(root))
    assert not lost, f"blocks lost: {sorted(lost)}"
    _check_through_elfmem(root, None)


def _pending_blocks(root: Path) -> dict[str, str] | None:
    """The blocks as the interrupted write's stored commit has them (None: no write pending)."""
    journal = root / ".git" / "elfmem" / "journal.json"
    if not journal.exists():
        return None
    commit = json.loads(journal.read_text())["commit"]
    return _committed_blocks(root, commit)
