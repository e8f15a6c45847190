"""Every memory write is one commit on the branch, made without touching anything else.

The order is what makes a crash harmless: journal the paths, commit (the ref moving is the
acknowledgement), then bring the working tree and git's index up to date for exactly those paths,
then drop the journal. A process killed anywhere leaves a journal the next write uses to finish.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pygit2
from pygit2.enums import FileMode, ObjectType
from pygit2.errors import check_error
from pygit2.ffi import C as _C
from pygit2.ffi import ffi as _ffi

from elfmem.block.layout import MEMORY_DIR
from elfmem.block.model import Block
from elfmem.block.render import render_file
from elfmem.block.text import shorten
from elfmem.errors import ConflictError
from elfmem.store import repo as repo_mod
from elfmem.store.objects import ObjectBatch, commit_bytes
from elfmem.store.secretgate import check_plan
from elfmem.store.tree import blob_at
from elfmem.store.view import MemoryView, remember_parsed

_MAX_ATTEMPTS = 40


@dataclass(frozen=True, slots=True)
class FileEdit:
    """The new content of one memory file; ``text`` may be given when it is cheaper to build."""

    blocks: tuple[Block, ...]
    text: str | None = None


@dataclass(slots=True)
class Plan:
    """What one operation changes and how its commit reads."""

    op: str
    subject: str
    files: dict[str, FileEdit] = field(default_factory=dict)
    block_ids: list[str] = field(default_factory=list)
    body: str = ""
    trailers: list[tuple[str, str]] = field(default_factory=list)
    raw: dict[str, bytes | None] = field(default_factory=dict)
    """Other files under ``.elfmem`` (config, self.md), repository-relative; None deletes."""


@dataclass(frozen=True, slots=True)
class WriteResult:
    commit_id: str
    tree_oid: str
    paths: tuple[str, ...]
    carried: tuple[str, ...]
    blobs: dict[str, bytes | None]
    """Memory-relative path → the bytes now committed (None: deleted), for the index."""
    parent_tree_oid: str | None
    """The memory tree this commit was built on, so derived state can tell it is in step."""
    parsed: dict[str, tuple[str, tuple[Block, ...]]] = field(default_factory=dict)
    """Memory-relative path → (blob oid, blocks) for the files written: the index need not
    parse or hash them again."""


SUBJECT_WIDTH = 72
"""git's own advice for a subject line; longer ones are cut after a word (``shorten``)."""


def _message(plan: Plan, agent: str, carried: Sequence[str]) -> str:
    first = plan.subject.strip().splitlines()[0] if plan.subject.strip() else plan.op
    lines = [shorten(first, SUBJECT_WIDTH), ""]
    if plan.body:
        lines += [plan.body.rstrip(), ""]
    if carried:
        lines += ["Carries uncommitted hand edits to: " + ", ".join(sorted(carried)), ""]
    lines.append(f"Elfmem-Op: {plan.op}")
    lines += [f"Elfmem-Block: {b}" for b in dict.fromkeys(plan.block_ids)]
    lines += [f"{k}: {v}" for k, v in plan.trailers]
    lines.append(f"Elfmem-Agent: {agent}")
    return "\n".join(lines) + "\n"


class MemoryWriter:
    """Turns plans into commits on the checked-out branch, serialised and compare-and-swapped."""

    def __init__(self, repo: pygit2.Repository, agent: str) -> None:
        self.repo = repo
        self.agent = agent
        self.journal = repo_mod.state_dir(repo) / "journal.json"

    def write(
        self,
        build: Callable[[MemoryView], Plan | None],
        after: Callable[[WriteResult, str | None], None] | None = None,
    ) -> WriteResult | None:
        """Run ``build`` against the tip and commit its plan; None when it plans nothing.

        ``after(result, parent_memory_tree_oid)`` runs while the lock is still held, so derived
        state (the index) is updated in commit order.
        """
        with repo_mod.write_lock(self.repo):
            self.recover()
            repo_mod.ensure_writable(self.repo)
            for attempt in range(_MAX_ATTEMPTS):
                result = self._attempt(build)
                if result is not False:
                    if isinstance(result, WriteResult) and after is not None:
                        after(result, result.parent_tree_oid)
                    return result
                time.sleep(min(0.2, 0.002 * 2 ** min(attempt, 7)) * random.uniform(0.5, 1.5))
        raise ConflictError(
            f"The branch kept moving under {_MAX_ATTEMPTS} attempts; nothing was written.",
            "Another program is committing continuously; run the command again when it stops.",
        )

    def _attempt(
        self, build: Callable[[MemoryView], Plan | None]
    ) -> WriteResult | Literal[False] | None:
        ref = repo_mod.branch_ref(self.repo)
        tip = repo_mod.head_commit(self.repo)
        view = MemoryView(self.repo, tip)
        plan = build(view)
        if plan is None or not (plan.files or plan.raw):
            return None
        check_plan(plan, view)
        blobs: dict[str, bytes | None] = {}
        parsed: dict[str, tuple[str, tuple[Block, ...]]] = {}
        changes: dict[tuple[str, ...], pygit2.Oid | None] = {}
        batch = ObjectBatch(self.repo)
        for relpath, edit in plan.files.items():
            text = edit.text if edit.text is not None else render_file(edit.blocks)
            data = text.encode("utf-8") if edit.blocks else None
            blobs[relpath] = data
            oid = batch.blob(data) if data is not None else None
            if oid is not None:
                remember_parsed(str(oid), edit.blocks)
                parsed[relpath] = (str(oid), edit.blocks)
            changes[tuple(f"{MEMORY_DIR}/{relpath}".split("/"))] = oid
        for path, raw in plan.raw.items():
            changes[tuple(path.split("/"))] = batch.blob(raw) if raw is not None else None
        base_tree = tip.tree if tip is not None else None
        tree_oid = batch.edit(base_tree, changes) or batch.tree([])
        if base_tree is not None and tree_oid == base_tree.id:
            return None
        author, committer = repo_mod.identities(self.repo, self.agent)
        now = int(time.time())
        author_sig = pygit2.Signature(author.name, author.email, now, 0)
        committer_sig = pygit2.Signature(committer.name, committer.email, now, 0)
        carried = sorted(view.carried & set(plan.files))
        message = _message(plan, self.agent, carried)
        parents = [tip.id] if tip is not None else []
        # Stored with the rest, the commit is found among the loose objects when create_commit
        # writes it, so libgit2 does not rescan the pack folder looking for it.
        batch.add(
            ObjectType.COMMIT, commit_bytes(tree_oid, parents, author_sig, committer_sig, message)
        )
        batch.store()
        disk = {f"{MEMORY_DIR}/{p}": d for p, d in blobs.items()} | plan.raw
        seen = {f"{MEMORY_DIR}/{p}": oid for p, oid in view.disk_oids.items()}
        made = {
            "/".join(path): str(oid) if oid is not None else None for path, oid in changes.items()
        }
        self._journal(tip, disk, seen, made)
        try:
            commit_id = self.repo.create_commit(
                ref, author_sig, committer_sig, message, tree_oid, parents
            )
        except (pygit2.GitError, OSError):
            self.journal.unlink(missing_ok=True)
            return False
        if self._sync_worktree(disk, made):
            self.journal.unlink(missing_ok=True)
        mem_tree = repo_mod.memory_tree(self.repo.get(commit_id))  # type: ignore[arg-type]
        return WriteResult(
            str(commit_id),
            str(mem_tree.id) if mem_tree is not None else "",
            tuple(plan.files),
            tuple(carried),
            blobs,
            str(view.tree.id) if view.tree is not None else None,
            parsed,
        )

    def _journal(
        self,
        tip: pygit2.Commit | None,
        disk: dict[str, bytes | None],
        seen: Mapping[str, str | None],
        made: Mapping[str, str | None],
    ) -> None:
        """Name the paths about to change, with what the disk holds now and what it will hold.

        ``seen``: disk oids the view found while planning, so those files are not read again;
        ``made``: the blob oid each path gets in the commit, so none is hashed again.
        """
        entries = {
            path: {
                "before": seen[path] if path in seen else self._disk_oid(path),
                "after": made[path] if path in made else _blob_oid(data),
            }
            for path, data in disk.items()
        }
        payload = {"base": str(tip.id) if tip is not None else None, "paths": entries}
        self.journal.write_text(json.dumps(payload), encoding="utf-8")

    def recover(self) -> None:
        """Finish a write a killed process acknowledged but did not bring to the working tree."""
        try:
            payload = json.loads(self.journal.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (json.JSONDecodeError, UnicodeDecodeError):
            self.journal.unlink(missing_ok=True)
            return
        self._remove_temporaries(payload.get("paths", {}))
        tip = repo_mod.head_commit(self.repo)
        tree = tip.tree if tip is not None else None
        redo: dict[str, bytes | None] = {}
        made: dict[str, str | None] = {}
        if tip is not None and str(tip.id) != payload.get("base"):
            for path, oids in payload.get("paths", {}).items():
                blob = blob_at(self.repo, tree, path)
                if (str(blob.id) if blob is not None else None) != oids.get("after"):
                    continue
                if self._disk_oid(path) in (oids.get("before"), oids.get("after")):
                    redo[path] = blob.data if blob is not None else None
                    made[path] = oids.get("after")
        if self._sync_worktree(redo, made):
            self.journal.unlink(missing_ok=True)

    def _remove_temporaries(self, paths: Iterable[str]) -> None:
        """Delete the half-written ``.<name>.<pid>.tmp`` files a killed writer left beside them."""
        wd = repo_mod.workdir(self.repo)
        if wd is None:
            return
        for path in paths:
            target = wd / path
            for tmp in target.parent.glob(f".{target.name}.*.tmp"):
                tmp.unlink(missing_ok=True)

    def _disk_oid(self, path: str) -> str | None:
        wd = repo_mod.workdir(self.repo)
        if wd is None:
            return None
        try:
            return str(pygit2.hash((wd / path).read_bytes()))
        except FileNotFoundError:
            return None

    def _sync_worktree(
        self, blobs: dict[str, bytes | None], oids: Mapping[str, str | None]
    ) -> bool:
        """Write exactly these repository paths to disk and git's index; touch nothing else.

        ``oids``: the blob oid of each path's new bytes, so git's index need not hash them.

        False when git's index stayed locked: the journal is kept and the next write finishes.
        """
        wd = repo_mod.workdir(self.repo)
        if wd is None or not blobs:
            return True
        index = self.repo.index
        index.read(False)
        for rel, data in blobs.items():
            path = wd / rel
            if data is None:
                path.unlink(missing_ok=True)
                if rel in index:
                    index.remove(rel)
                continue
            _atomic_write(path, data)
            _stage(index, rel, path, oids.get(rel))
        return _write_index(index)


def _blob_oid(data: bytes | None) -> str | None:
    return str(pygit2.hash(data)) if data is not None else None


def _stage(index: pygit2.Index, rel: str, path: Path, oid: str | None) -> None:
    """Put ``rel`` in git's index as the file just written, stat data included.

    ``Index.add(path)`` reads the file back, loads the attribute filters for it and stores its
    blob again; py-spy put that at 4% of a remember at 100k blocks. The blob is already stored
    and its oid known; without it the file is added by path. pygit2's ``IndexEntry`` has no stat
    fields, so the entry is built with its cffi binding (``pygit2.ffi``), which pygit2 itself
    uses the same way; ``tests/api/test_writer_worktree.py`` runs ``git diff-files`` on it.
    """
    if oid is None:
        index.add(rel)
        return
    st = os.stat(path)
    entry = _ffi.new("git_index_entry *")
    try:  # the entry's seconds are 32-bit signed: a clock past 2038 falls back to the path
        entry.ctime.seconds, entry.ctime.nanoseconds = divmod(st.st_ctime_ns, 1_000_000_000)
        entry.mtime.seconds, entry.mtime.nanoseconds = divmod(st.st_mtime_ns, 1_000_000_000)
    except OverflowError:
        index.add(rel)
        return
    entry.dev = st.st_dev & 0xFFFFFFFF
    entry.ino = st.st_ino & 0xFFFFFFFF
    entry.mode = int(FileMode.BLOB)  # as committed; the file was just created 0666 & ~umask
    entry.uid = st.st_uid & 0xFFFFFFFF
    entry.gid = st.st_gid & 0xFFFFFFFF
    entry.file_size = st.st_size & 0xFFFFFFFF
    _ffi.buffer(_ffi.addressof(entry, "id"))[:] = bytes.fromhex(oid)
    encoded = _ffi.new("char[]", rel.encode("utf-8", "surrogateescape"))
    entry.path = encoded
    check_error(_C.git_index_add(index._index, entry), io=True)


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _write_index(index: pygit2.Index) -> bool:
    """Git's own commands may hold index.lock for a moment; wait a little rather than fail."""
    for attempt in range(40):
        try:
            index.write()
            return True
        except (pygit2.GitError, OSError):
            time.sleep(0.005 * (attempt + 1))
    return False
