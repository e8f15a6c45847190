"""A memory as one file: a ``git bundle`` of the memory's branch and its notes ledger.

A bundle is what ``git clone`` reads like any remote, so a backup needs no elfmem to restore. A
plain clone only fetches branches, though, so the ledger in ``refs/notes/elfmem`` stays behind in
the file: ``adopt_bundle_notes`` fetches it from every remote that is a bundle file and merges it
by union (notesmerge.py), once per bundle file version.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import ReferenceType

from elfmem.errors import NotFound
from elfmem.store import repo as repo_mod
from elfmem.store.notes import NOTES_REF, NotesLedger

TRACKING_REF = "refs/elfmem/bundle-notes"
"""Where a bundle's notes are fetched to before the merge (never ``refs/notes/elfmem`` itself)."""
_SEEN = "bundle-notes.seen"


@dataclass(frozen=True, slots=True)
class BundleInfo:
    path: str
    refs: dict[str, str]
    """Ref name → commit id, as the bundle carries them."""
    size: int


def write_backup(repo: pygit2.Repository, target: Path, branch: str) -> BundleInfo:
    """Bundle the memory's ref ``branch`` (``Store.branch``), ``HEAD`` when it names that ref,
    and the notes ref.

    The file is written beside ``target`` and renamed over it, so a failure never leaves half a
    backup under the name asked for.
    """
    from elfmem.store import transport

    if repo.references.get(branch) is None:
        raise NotFound(
            "this memory has no commits yet, so there is nothing to back up.",
            "Remember something first (`elfmem remember TEXT`), then run the backup again.",
        )
    refs = [branch]
    head = repo.references.get("HEAD")
    if head is not None and head.type == ReferenceType.SYMBOLIC and head.target == branch:
        refs.insert(0, "HEAD")
    if repo.references.get(NOTES_REF) is not None:
        refs.append(NOTES_REF)
    target = target.resolve()
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        transport.bundle_create(Path(repo.path), partial, refs)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    heads = transport.bundle_heads(target)
    return BundleInfo(str(target), heads, target.stat().st_size)


def _bundle_remotes(repo: pygit2.Repository) -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    workdir = repo_mod.workdir(repo) or Path(repo.path)
    for remote in repo.remotes:
        url = remote.url or ""
        if not url or "://" in url or (":" in url and not Path(url).exists()):
            continue
        path = Path(url) if Path(url).is_absolute() else workdir / url
        if not path.is_file():
            continue
        from elfmem.store import transport  # every command looks; few remotes are files

        if transport.is_bundle(path):
            found.append((remote.name or "", path))
    return found


def _stamp(path: Path) -> str:
    stat = path.stat()
    return f"{path.resolve()} {stat.st_size} {stat.st_mtime_ns}"


def adopt_bundle_notes(repo: pygit2.Repository) -> str | None:
    """Merge the notes of any remote that is a bundle file; the new notes tip, or None.

    A bundle file is read once per version (size and time are remembered in the git dir), so
    the commands after the first pay only for a stat.
    """
    remotes = _bundle_remotes(repo)
    if not remotes:
        return None
    seen_path = repo_mod.state_dir(repo) / _SEEN
    seen = set(seen_path.read_text("utf-8").splitlines()) if seen_path.exists() else set()
    merged: str | None = None
    for name, path in remotes:
        stamp = _stamp(path)
        if stamp in seen:
            continue
        merged = _adopt_one(repo, name, path) or merged
        seen.add(stamp)
        seen_path.write_text("\n".join(sorted(seen)) + "\n", "utf-8")
    return merged


def _adopt_one(repo: pygit2.Repository, remote: str, path: Path) -> str | None:
    from elfmem.store import transport
    from elfmem.store.notesmerge import merge_notes

    heads = transport.bundle_heads(path)
    oid = heads.get(NOTES_REF)
    if oid is None:
        return None
    if oid not in repo:
        transport.fetch(Path(repo.path), remote, [f"+{NOTES_REF}:{TRACKING_REF}"])
    return merge_notes(NotesLedger(repo), str(oid), "Merge the ledger of a backup").commit
