"""Finding the repository that holds a memory, and the guards every write passes first.

Only the store layer imports pygit2; the layers above see paths, oids and bytes.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import RepositoryState

from elfmem.block.layout import MEMORY_DIR
from elfmem.errors import NotFound, RepoStateError
from elfmem.filelock import exclusive
from elfmem.store import writelock

_BLOCKING_STATES = {
    RepositoryState.MERGE: "a merge",
    RepositoryState.REVERT: "a revert",
    RepositoryState.REVERT_SEQUENCE: "a revert",
    RepositoryState.CHERRYPICK: "a cherry-pick",
    RepositoryState.CHERRYPICK_SEQUENCE: "a cherry-pick",
    RepositoryState.REBASE: "a rebase",
    RepositoryState.REBASE_INTERACTIVE: "a rebase",
    RepositoryState.REBASE_MERGE: "a rebase",
    RepositoryState.APPLY_MAILBOX: "`git am`",
    RepositoryState.APPLY_MAILBOX_OR_REBASE: "`git am` or a rebase",
}


@dataclass(frozen=True, slots=True)
class Identity:
    """Who writes: the agent is always the author; git's own identity commits when it has one."""

    name: str
    email: str


def discover(path: Path | None = None) -> pygit2.Repository:
    """The repository containing ``path`` (default: the current directory)."""
    start = Path(path or Path.cwd()).resolve()
    if not start.is_dir():
        raise NotFound(
            f"The folder {start} does not exist.",
            "Check the path given to -C; `elfmem -C DIR init` creates the folder and a "
            "repository in it.",
        )
    found = pygit2.discover_repository(str(start))
    if found is None:
        raise NotFound(
            f"No git repository contains {start}.",
            "Run `elfmem init` here (it creates a repository), or cd into one.",
        )
    return pygit2.Repository(found)


def init_repository(path: Path) -> pygit2.Repository:
    """A new repository whose first branch is ``main``."""
    path.mkdir(parents=True, exist_ok=True)
    return pygit2.init_repository(str(path), initial_head="main")


def workdir(repo: pygit2.Repository) -> Path | None:
    return Path(repo.workdir) if repo.workdir else None


JOURNAL_FILE = "journal.json"
"""In the state folder: the write in flight, which recovery finishes or takes back."""


def state_dir(repo: pygit2.Repository) -> Path:
    """``<gitdir>/elfmem``: the index, spool, journal and lock; never committed, never pushed."""
    d = Path(repo.path) / "elfmem"
    d.mkdir(exist_ok=True)
    return d


def branch_ref(repo: pygit2.Repository) -> str:
    """The ref memory commits go to: the checked-out branch, born or unborn."""
    head = repo.references.get("HEAD")
    if head is None:
        raise RepoStateError("The repository has no HEAD.", "Run `git init` or repair .git/HEAD.")
    target = head.target
    if isinstance(target, str):
        return target
    raise RepoStateError(
        "HEAD is detached: a memory write would land on no branch and be lost.",
        "Check out a branch first: `git switch <branch>` (or `git switch -c memory`).",
    )


MODE_KEY = "elfmem.ref"
"""Per-clone git config naming the dedicated memory ref; unset means the checked-out branch."""
DEFAULT_MEMORY_REF = "refs/heads/elfmem"

_MODE_CACHE: dict[str, tuple[int, str | None]] = {}


def _config_stamp(repo: pygit2.Repository) -> int:
    try:
        return os.stat(os.path.join(repo.path, "config")).st_mtime_ns
    except OSError:
        return -1


def configured_ref(repo: pygit2.Repository) -> str | None:
    """The dedicated memory ref this clone records in ``.git/config`` (``elfmem.ref``), or None.

    Read on every write, so the answer is kept until the config file changes."""
    stamp = _config_stamp(repo)
    kept = _MODE_CACHE.get(repo.path)
    if kept is not None and kept[0] == stamp and stamp != -1:
        return kept[1]
    try:
        value: str | None = repo.config["elfmem.ref"]
    except (KeyError, pygit2.GitError):
        value = None
    value = normalise_ref(value) if value else None
    _MODE_CACHE[repo.path] = (stamp, value)
    return value


def normalise_ref(name: str) -> str:
    """``elfmem`` → ``refs/heads/elfmem``; a full ``refs/...`` name is kept as it is."""
    name = name.strip()
    full = name if name.startswith("refs/") else f"refs/heads/{name}"
    reserved = full.startswith(("refs/notes/", "refs/remotes/", "refs/tags/"))
    if reserved or not pygit2.reference_is_valid_name(full):
        raise RepoStateError(
            f"{name!r} is not a ref memory can live on.",
            "Use a branch name such as `elfmem` (refs/heads/elfmem) or a ref under refs/.",
        )
    return full


def set_memory_ref(repo: pygit2.Repository, ref: str | None) -> None:
    """Record (or, with None, clear) the dedicated-ref mode for this clone."""
    if ref is None:
        try:
            del repo.config[MODE_KEY]
        except (KeyError, pygit2.GitError):
            pass
    else:
        repo.config[MODE_KEY] = normalise_ref(ref)
    _MODE_CACHE.pop(repo.path, None)


def _checked_out(repo: pygit2.Repository) -> str | None:
    head = repo.references.get("HEAD")
    target = head.target if head is not None else None
    return target if isinstance(target, str) else None


def memory_ref(repo: pygit2.Repository) -> str:
    """The one answer to "which ref do memory commits go to": the dedicated ref in ref mode,
    else the checked-out branch (``branch_ref``). Writer, index, journal, undo, ``--at``, hooks
    and doctor all ask here."""
    return configured_ref(repo) or branch_ref(repo)


def ref_mode(repo: pygit2.Repository) -> bool:
    """True when memory lives on its own ref and that ref is not the checked-out branch (a
    person who checks the memory ref out works on it like a branch-mode memory)."""
    ref = configured_ref(repo)
    return ref is not None and ref != _checked_out(repo)


def memory_workdir(repo: pygit2.Repository) -> Path | None:
    """The working tree that holds the memory files: None in ref mode (and bare repositories),
    so hand-edit overlays, working-tree writes and git-index updates happen in branch mode only."""
    return None if ref_mode(repo) else workdir(repo)


def memory_commit(repo: pygit2.Repository) -> pygit2.Commit | None:
    """The commit memory is read from: the memory ref's tip in ref mode, HEAD's commit (detached
    or not) otherwise; None while the ref or branch is unborn."""
    oid = memory_commit_oid(repo)
    obj = repo.get(oid) if oid is not None else None
    return obj if isinstance(obj, pygit2.Commit) else None


def memory_commit_oid(repo: pygit2.Repository) -> pygit2.Oid | None:
    """The oid ``memory_commit`` reads, found from the refs alone (the commit is not loaded)."""
    ref = configured_ref(repo)
    if ref is None:
        return head_oid(repo)
    found = repo.references.get(ref)
    target = found.resolve().target if found is not None else None
    return target if isinstance(target, pygit2.Oid) else None


def head_commit(repo: pygit2.Repository) -> pygit2.Commit | None:
    """The commit HEAD names (detached or not); None on an unborn branch."""
    oid = head_oid(repo)
    obj = repo.get(oid) if oid is not None else None
    return obj if isinstance(obj, pygit2.Commit) else None


def head_oid(repo: pygit2.Repository) -> pygit2.Oid | None:
    """The oid HEAD names (detached or not), from the refs alone; None on an unborn branch."""
    head = repo.references.get("HEAD")
    if head is None:
        return None
    target = head.target
    if isinstance(target, str):
        ref = repo.references.get(target)
        if ref is None:
            return None
        target = ref.target
    return target if isinstance(target, pygit2.Oid) else None


@dataclass(frozen=True, slots=True)
class CommitFacts:
    """What every sync asks of the tip commit: its memory subtree and how many parents it has."""

    memory_tree: str | None
    parents: int


_FACTS: dict[str, CommitFacts] = {}
_FACTS_MAX = 64


def commit_facts(repo: pygit2.Repository, commit_oid: pygit2.Oid | None) -> CommitFacts | None:
    """``CommitFacts`` of commit ``commit_oid``; None when there is no such commit.

    Kept per commit oid: a commit's content, and so its tree and parents, is fixed by its oid
    in any repository. Reading a commit is not free: libgit2 caches no commit over 4 KB, and a
    dream's commit names every block it promoted (185 KB for 5,000 blocks, about 1.5 ms to
    inflate), which every recall's sync would otherwise read again to learn what it knew.
    """
    if commit_oid is None:
        return None
    key = str(commit_oid)
    found = _FACTS.get(key)
    if found is not None:
        return found
    commit = repo.get(commit_oid)
    if not isinstance(commit, pygit2.Commit):
        return None  # not kept: the object may arrive later (a fetch)
    tree = memory_tree(commit)
    found = CommitFacts(str(tree.id) if tree is not None else None, len(commit.parent_ids))
    if len(_FACTS) >= _FACTS_MAX:
        _FACTS.clear()
    _FACTS[key] = found
    return found


def memory_tree_oid_of(repo: pygit2.Repository, commit_oid: pygit2.Oid | None) -> str | None:
    """The oid of the ``.elfmem/memory`` subtree of commit ``commit_oid`` (None: no such tree)."""
    facts = commit_facts(repo, commit_oid)
    return facts.memory_tree if facts is not None else None


def memory_tree(commit: pygit2.Commit | pygit2.Tree | None) -> pygit2.Tree | None:
    """The ``.elfmem/memory`` subtree of a commit (or of a root tree), or None."""
    if commit is None:
        return None
    root = commit.tree if isinstance(commit, pygit2.Commit) else commit
    try:
        entry = root[MEMORY_DIR]
    except KeyError:
        return None
    return entry if isinstance(entry, pygit2.Tree) else None


def in_progress(repo: pygit2.Repository) -> str | None:
    """What git is in the middle of (``a merge``, ``a rebase``, ...), or None.

    A merge whose commit is made is finished, though git runs the post-merge hook before it
    removes ``MERGE_HEAD``: the hook may write (the reconciliation after a merge does)."""
    what = _BLOCKING_STATES.get(RepositoryState(repo.state()))
    if what == "a merge":
        tip = head_commit(repo)
        try:
            heads = (Path(repo.path) / "MERGE_HEAD").read_text().split()
        except OSError:
            return what
        if tip is not None and heads and {str(p) for p in tip.parent_ids[1:]} >= set(heads):
            return None
    return what


def ensure_writable(repo: pygit2.Repository) -> None:
    """Refuse to write while git is in the middle of something a person must finish."""
    what = in_progress(repo)
    if what is not None:
        raise RepoStateError(
            f"The repository is in the middle of {what}; elfmem will not write now.",
            "Finish or abort it first (`git status` says how), then run the command again.",
        )
    if repo.index.conflicts is not None:
        raise RepoStateError(
            "The git index has unresolved conflicts; elfmem will not write now.",
            "Resolve them (`git status`), commit, then run the command again.",
        )


def identities(repo: pygit2.Repository, agent: str) -> tuple[Identity, Identity]:
    """(author, committer): the agent authors; git's configured identity commits, or the agent."""
    slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in agent.lower()) or "agent"
    author = Identity(agent, f"{slug}@elfmem.invalid")
    try:
        sig = repo.default_signature
        committer = Identity(sig.name, sig.email)
    except (KeyError, pygit2.GitError):
        committer = author
    return author, committer


@contextmanager
def write_lock(repo: pygit2.Repository, name: str = "write") -> Iterator[None]:
    """Serialise elfmem processes on this machine around one critical section.

    ``write`` guards memory commits (libgit2 also checks the ref update): a writer waits for
    it at most ``writelock.wait_seconds()`` and then fails naming the holder, since a live
    holder (a paused dream) may never let go. ``notes-ref`` and ``notes-merge`` guard a single
    ref update and are held for milliseconds.
    """
    path = state_dir(repo) / f"{name}.lock"
    if name != "write":
        with exclusive(path):
            yield
        return
    with writelock.hold(path):
        yield


@contextmanager
def try_write_lock(repo: pygit2.Repository, name: str = "write") -> Iterator[bool]:
    """``write_lock`` if nobody holds it now (yields True), else yields False at once: a read
    must not wait for a live writer, which finishes its own work."""
    path = state_dir(repo) / f"{name}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
