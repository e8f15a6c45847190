"""Backup and restore, the git way.

A backup is a ``git bundle`` of the memory's branch and its ledger (``refs/notes/elfmem``): one
file that plain ``git clone`` restores. The clone brings the branch; the ledger comes in at the
first elfmem command, which finds that its remote is a bundle and merges the bundle's notes by
union (``store/bundle.py``). ``restore`` does both at once. ``rescue`` is a care
tool (``care/rescue.py``): the index moves with the git dir, so there is nothing to rescue.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from elfmem.errors import ElfmemError, InvalidInput, NotFound
from elfmem.rhythms.core import Core
from elfmem.rhythms.result import Result
from elfmem.store import Store
from elfmem.store.bundle import adopt_bundle_notes, write_backup
from elfmem.store.notes import NOTES_REF
from elfmem.store.tracking import adopt_remote_memory


@dataclass(frozen=True)
class BackupResult(Result):
    path: str
    size: int
    """Bytes in the bundle file."""
    refs: dict[str, str] = field(default_factory=dict)
    """Ref name → commit id, as the bundle carries them."""
    excluded: str = ""
    """The line added to ``.git/info/exclude`` when the file was written inside the work tree
    (so ``git status`` stays clean and ``git add -A`` never commits a copy); else empty."""

    @property
    def summary(self) -> str:
        ledger = "with the ledger" if NOTES_REF in self.refs else "no ledger yet"
        branches = ", ".join(r for r in self.refs if r.startswith("refs/heads/"))
        kept_out = (
            f" Listed in .git/info/exclude as {self.excluded}, so git leaves it untracked."
            if self.excluded
            else ""
        )
        return (
            f"wrote {self.path} ({self.size:,} bytes): {branches}, {ledger}. "
            f"Restore with `elfmem restore {self.path} DIR` or `git clone {self.path} DIR`."
            + kept_out
        )


@dataclass(frozen=True)
class RestoreResult(Result):
    path: str
    """The new repository's folder."""
    source: str
    branch: str
    commit_id: str
    notes_tip: str | None

    @property
    def summary(self) -> str:
        ledger = f"ledger at {self.notes_tip[:12]}" if self.notes_tip else "no ledger in the bundle"
        return (
            f"restored {self.source} into {self.path}: {self.branch} at {self.commit_id[:12]}, "
            f"{ledger}. The index builds itself at the first command there."
        )


def backup(core: Core, target: Path) -> BackupResult:
    """Write the bundle; spooled ledger events are flushed first so the file holds them."""
    if target.is_dir():
        raise InvalidInput(f"{target} is a folder.", "Give a file name: `-o memory.bundle`.")
    if not target.resolve().parent.is_dir():
        raise NotFound(
            f"the folder {target.resolve().parent} does not exist.",
            "Create it first, or write the backup somewhere else.",
        )
    core.store.flush_spool()
    info = write_backup(core.store.repo, target, core.store.branch)
    return BackupResult(info.path, info.size, info.refs, _exclude(core, target))


def _exclude(core: Core, target: Path) -> str:
    """A bundle written inside the work tree is a copy of the repository in itself: list it in
    ``.git/info/exclude`` (the clone's own, never committed) unless git already ignores it."""
    wd = core.store.workdir
    if wd is None:
        return ""
    try:
        rel = target.resolve().relative_to(wd.resolve()).as_posix()
    except ValueError:
        return ""
    line = f"/{rel}"
    ignored = core.store.repo.path_is_ignored(rel)
    exclude = Path(core.store.repo.path) / "info" / "exclude"
    text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    if ignored or line in text.splitlines():
        return ""
    exclude.parent.mkdir(parents=True, exist_ok=True)
    sep = "" if not text or text.endswith("\n") else "\n"
    exclude.write_text(f"{text}{sep}{line}\n", encoding="utf-8")
    return line


def restore(source: Path, target: Path | None = None) -> RestoreResult:
    """Clone the bundle ``source`` into ``target`` (default: its name without ``.bundle``, in
    the current folder) and merge its ledger."""
    from elfmem.store import transport

    heads = transport.bundle_heads(source)
    branches = sorted(r for r in heads if r.startswith("refs/heads/"))
    if not branches:
        raise InvalidInput(
            f"{source} carries no branch, so it holds no memory.",
            "Pass a file written by `elfmem backup -o FILE`.",
        )
    dest = target if target is not None else Path.cwd() / (source.stem or "memory")
    if dest.exists() and any(dest.iterdir()):
        raise InvalidInput(
            f"{dest} exists and is not empty; nothing was restored.",
            "Name a new folder: `elfmem restore FILE NEW_DIR`.",
        )
    # A bundle without HEAD is a ref-mode backup: its one branch is the memory ref, which is
    # never checked out. Clone it as plain git does and adopt the ref, as the first command
    # after `git clone` would, so both ways give the same mode.
    transport.clone(str(source.resolve()), dest, None)
    store = Store.open(dest, "elf")
    try:
        if "HEAD" not in heads:
            adopt_remote_memory(store.repo, branches[0])
        adopt_bundle_notes(store.repo)
        head = store.branch
        commit = store.resolve(head)
        return RestoreResult(
            str(dest.resolve()), str(source), head, str(commit.id), store.ledger.tip()
        )
    finally:
        store.close()


def adopt_origin_notes(core: Core) -> None:
    """At the opening of a memory: bring in the ledger of a bundle it was cloned from. A
    bundle that cannot be read is a warning, never a reason for the command to fail."""
    try:
        adopt_bundle_notes(core.store.repo)
    except ElfmemError as exc:
        core.warnings[f"the ledger in the backup this memory was cloned from: {exc.message}"] = None
    except OSError as exc:  # a read-only git dir: the ledger comes in at a later command
        core.warnings[f"the ledger in the backup this memory was cloned from: {exc}"] = None
