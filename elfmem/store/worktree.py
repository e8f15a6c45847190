"""Bringing chosen paths of the working tree and git's index to given blobs, touching nothing else.

Git's index is rewritten the way git does it: under ``index.lock`` (held by ``locks.IndexLock``),
a new file is built beside it and renamed over ``.git/index``. libgit2 cannot write an index
while somebody else holds ``index.lock``, so it builds the new file from a copy.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Collection, Mapping
from pathlib import Path

import pygit2
from pygit2.enums import FileMode
from pygit2.errors import check_error
from pygit2.ffi import C as _C
from pygit2.ffi import ffi as _ffi

from elfmem.store import faults

Target = tuple[bytes | None, str | None]
"""The bytes a path should hold (None: absent) and their blob oid."""


def disk_oid(workdir: Path, rel: str) -> str | None:
    try:
        return str(pygit2.hash((workdir / rel).read_bytes()))
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def staged_oids(repo: pygit2.Repository, paths: list[str]) -> dict[str, str | None]:
    """The blob git's index stages at each path now (None: not in the index)."""
    index = repo.index
    index.read(False)
    return {rel: (str(index[rel].id) if rel in index else None) for rel in paths}


def write_files(workdir: Path, targets: Mapping[str, Target]) -> None:
    for rel, (data, _) in targets.items():
        path = workdir / rel
        if data is None:
            path.unlink(missing_ok=True)
        else:
            atomic_write(path, data)
        faults.point("write.file")


def write_index(
    repo: pygit2.Repository,
    state: Path,
    targets: Mapping[str, Target],
    keep: Callable[[str, str | None], bool] | None = None,
    unwritten: Collection[str] = (),
) -> None:
    """Stage ``targets`` in git's index; the caller holds ``index.lock``.

    ``keep`` None: the files were just written with exactly these bytes, so each entry takes
    their stat data (but those in ``unwritten``, not on disk yet, go in without). Otherwise
    ``keep(rel, staged_oid)`` false leaves that path's entry as it is, and stat data goes in
    only where the disk holds the staged blob (an entry with stat data of other content would
    make git overlook a real change).
    """
    workdir = Path(repo.workdir)
    real = Path(repo.path) / "index"
    scratch = state / f"index.{os.getpid()}.tmp"
    if real.exists():
        shutil.copyfile(real, scratch)
    else:
        scratch.unlink(missing_ok=True)
    index = pygit2.Index(str(scratch))
    for rel, (data, oid) in targets.items():
        if keep is not None and not keep(rel, str(index[rel].id) if rel in index else None):
            continue
        if data is None or oid is None:
            if rel in index:
                index.remove(rel)
        elif (keep is None and rel not in unwritten) or (
            keep is not None and disk_oid(workdir, rel) == oid
        ):
            stage(index, rel, workdir / rel, oid)
        else:
            index.add(pygit2.IndexEntry(rel, pygit2.Oid(hex=oid), FileMode.BLOB))
    index.write()
    os.replace(scratch, real)


def stage(index: pygit2.Index, rel: str, path: Path, oid: str) -> None:
    """Put ``rel`` in git's index as the file just written, stat data included.

    ``Index.add(path)`` reads the file back, loads the attribute filters for it and stores its
    blob again; py-spy put that at 4% of a remember at 100k blocks. The blob is already stored
    and its oid known. pygit2's ``IndexEntry`` has no stat fields, so the entry is built with
    its cffi binding (``pygit2.ffi``), which pygit2 itself uses the same way;
    ``tests/api/test_writer_worktree.py`` runs ``git diff-files`` on it.
    """
    st = os.stat(path)
    entry = _ffi.new("git_index_entry *")
    try:  # the entry's seconds are 32-bit signed: past 2038 the entry goes in without stat data
        entry.ctime.seconds, entry.ctime.nanoseconds = divmod(st.st_ctime_ns, 1_000_000_000)
        entry.mtime.seconds, entry.mtime.nanoseconds = divmod(st.st_mtime_ns, 1_000_000_000)
    except OverflowError:
        index.add(pygit2.IndexEntry(rel, pygit2.Oid(hex=oid), FileMode.BLOB))
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


def atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    faults.point("write.tmp")
    os.replace(tmp, path)


def remove_temporaries(workdir: Path, paths: list[str], tracked: Callable[[str], bool]) -> None:
    """Delete the half-written ``.<name>.<pid>.tmp`` files a killed writer left beside them,
    but one git tracks (a person committed it): deleting it would leave a ``D`` in ``git
    status`` for good; ``doctor`` reports it instead (``strays.py``)."""
    for rel in paths:
        target = workdir / rel
        for tmp in target.parent.glob(f".{target.name}.*.tmp"):
            if not tracked(tmp.relative_to(workdir).as_posix()):
                tmp.unlink(missing_ok=True)
