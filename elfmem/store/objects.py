"""New git objects gathered per write, then stored loose or as one pack.

A write makes blobs, the trees along each changed path and (later) a commit. Storing each as a
loose object costs a file creation apiece, which dominates a batch: 1,000 ledger notes took 2.2 s
as loose files on the development machine. Above ``PACK_THRESHOLD`` objects we write one pack and
its index instead, the way ``git fast-import`` and ``git receive-pack`` do; below it we keep git's
default of loose objects so that single writes do not leave a trail of tiny packs.

Trees are serialised here (not through ``TreeBuilder``, which writes each tree to the odb at
once) so that a whole write's objects can go into the same pack.
"""

from __future__ import annotations

import hashlib
import os
import struct
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import pygit2
from pygit2.enums import FileMode, ObjectType

PACK_THRESHOLD = 100  # git's transfer.unpackLimit: fewer objects than this stay loose
_MAX_OFFSET = 2**31  # pack .idx v2 without a large-offset table

_TYPE_NAMES = {
    ObjectType.COMMIT: b"commit",
    ObjectType.TREE: b"tree",
    ObjectType.BLOB: b"blob",
}

TreeEntry = tuple[str, int, bytes]  # (name, file mode, raw 20-byte oid)


def object_id(kind: ObjectType, data: bytes) -> bytes:
    """The raw SHA-1 git gives an object of this type and content."""
    header = b"%s %d\0" % (_TYPE_NAMES[kind], len(data))
    return hashlib.sha1(header + data).digest()


def tree_bytes(entries: Iterable[TreeEntry]) -> bytes:
    """A tree object's content; entries sorted as git sorts them (a tree's name ends in '/')."""

    def key(entry: TreeEntry) -> bytes:
        name = entry[0].encode("utf-8", "surrogateescape")
        return name + b"/" if entry[1] == FileMode.TREE else name

    return b"".join(
        b"%o %s\0%s" % (int(mode), name.encode("utf-8", "surrogateescape"), oid)
        for name, mode, oid in sorted(entries, key=key)
    )


def commit_bytes(
    tree: pygit2.Oid,
    parents: Iterable[pygit2.Oid],
    author: pygit2.Signature,
    committer: pygit2.Signature,
    message: str,
) -> bytes:
    """A commit's content exactly as libgit2's ``create_commit`` writes it (UTF-8, no encoding
    header), so the writer can store it with the other objects and libgit2 finds it there."""
    lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
    lines += [f"author {_signature(author)}", f"committer {_signature(committer)}"]
    return ("\n".join(lines) + "\n\n" + message).encode("utf-8")


def _signature(sig: pygit2.Signature) -> str:
    sign = "-" if sig.offset < 0 else "+"
    minutes = abs(sig.offset)
    return f"{sig.name} <{sig.email}> {sig.time} {sign}{minutes // 60:02d}{minutes % 60:02d}"


def _encode(name: str) -> bytes:
    return name.encode("utf-8", "surrogateescape")


def _record(name: bytes, mode: int, oid: bytes) -> bytes:
    return b"%o %s\0%s" % (mode, name, oid)


_RECORDS_KEPT = 64
_records: OrderedDict[bytes, dict[bytes, bytes]] = OrderedDict()
_records_lock = threading.Lock()


def tree_records(tree: pygit2.Tree | None) -> dict[bytes, bytes]:
    """A tree's entries as raw records (``<mode> <name>\\0<oid>``) by name, cut from its bytes.

    The caller gets its own dict. Recent trees are kept parsed by oid, including the ones this
    process just made: at 100k blocks a bucket folder holds ~400 entries, and every write reads
    it twice (to pick the bucket, then to edit it), then makes the next version of it.
    """
    if tree is None:
        return {}
    return _records_by_oid(tree.id.raw, tree.read_raw)


def tree_records_at(repo: pygit2.Repository, oid: pygit2.Oid) -> dict[bytes, bytes]:
    """``tree_records`` by oid: a tree parsed recently is not even loaded."""
    return _records_by_oid(oid.raw, lambda: bytes(repo[oid].read_raw()))


def _records_by_oid(oid: bytes, read: Callable[[], bytes]) -> dict[bytes, bytes]:
    with _records_lock:
        cached = _records.get(oid)
        if cached is not None:
            _records.move_to_end(oid)
            return dict(cached)
    out = _parse_records(read())
    _keep_records(oid, out)
    return dict(out)


def _keep_records(oid: bytes, records: dict[bytes, bytes]) -> None:
    with _records_lock:
        _records[oid] = records
        _records.move_to_end(oid)
        while len(_records) > _RECORDS_KEPT:
            _records.popitem(last=False)


def _parse_records(data: bytes) -> dict[bytes, bytes]:
    out: dict[bytes, bytes] = {}
    find = data.find
    start, end = 0, len(data)
    while start < end:
        nul = find(b"\0", start)
        stop = nul + 21
        out[data[find(b" ", start) + 1 : nul]] = data[start:stop]
        start = stop
    return out


def _record_key(item: tuple[bytes, bytes]) -> bytes:
    """Git's order: a tree sorts as if its name ended in '/'."""
    name, record = item
    return name + b"/" if record.startswith(b"40000 ") else name


def objects_dir(repo: pygit2.Repository) -> Path:
    """The object directory, shared by every worktree of the repository."""
    gitdir = Path(repo.path)
    common = gitdir / "commondir"
    if common.is_file():
        gitdir = (gitdir / common.read_text().strip()).resolve()
    return gitdir / "objects"


class ObjectBatch:
    """Objects made during one write; nothing reaches the repository until ``store``."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self.repo = repo
        self._objects: dict[bytes, tuple[ObjectType, bytes]] = {}

    def __len__(self) -> int:
        return len(self._objects)

    def add(self, kind: ObjectType, data: bytes) -> pygit2.Oid:
        oid = object_id(kind, data)
        self._objects.setdefault(oid, (kind, data))
        return pygit2.Oid(raw=oid)

    def blob(self, data: bytes) -> pygit2.Oid:
        return self.add(ObjectType.BLOB, data)

    def tree(self, entries: Iterable[TreeEntry]) -> pygit2.Oid:
        return self.add(ObjectType.TREE, tree_bytes(entries))

    def edit(
        self, base: pygit2.Tree | None, changes: Mapping[tuple[str, ...], pygit2.Oid | None]
    ) -> pygit2.Oid | None:
        """Path copy: ``{path parts: blob oid or None (delete)}`` applied to ``base``.

        Only the trees along changed paths are rebuilt, and each from its raw bytes: a notes
        fanout tree at 100k blocks holds ~400 entries, and walking them as pygit2 objects cost
        more than the rest of the append. None means the result is empty.
        """
        return self._edit(tree_records(base), changes)

    def _edit(
        self, records: dict[bytes, bytes], changes: Mapping[tuple[str, ...], pygit2.Oid | None]
    ) -> pygit2.Oid | None:
        nested: dict[str, dict[tuple[str, ...], pygit2.Oid | None]] = {}
        added = False  # records come in git's order: only a new name calls for a sort
        for path, oid in changes.items():
            if len(path) > 1:
                nested.setdefault(path[0], {})[path[1:]] = oid
                continue
            name = _encode(path[0])
            if oid is None:
                records.pop(name, None)
            else:
                added = added or name not in records
                records[name] = _record(name, FileMode.BLOB, oid.raw)
        for folder, sub in nested.items():
            key = _encode(folder)
            current = records.get(key)
            below: dict[bytes, bytes] = {}
            if current is not None and current.startswith(b"40000 "):
                below = tree_records_at(self.repo, pygit2.Oid(raw=current[-20:]))
            new = self._edit(below, sub)
            if new is None:
                records.pop(key, None)
            else:
                added = added or key not in records
                records[key] = _record(key, FileMode.TREE, new.raw)
        if not records:
            return None
        if added:
            records = dict(sorted(records.items(), key=_record_key))
        oid = self.add(ObjectType.TREE, b"".join(records.values()))
        _keep_records(oid.raw, records)
        return oid

    def store(self) -> None:
        """Put every gathered object in the repository: loose when few, else one pack."""
        pending = [(oid, kind, data) for oid, (kind, data) in self._objects.items()]
        self._objects.clear()
        directory = objects_dir(self.repo)
        if len(pending) >= PACK_THRESHOLD and write_pack(directory, pending):
            return
        prepare_fanout(directory)
        odb = _loose_odb(directory)
        for _, kind, data in pending:
            odb.write(kind, data)  # an object already present is only freshened


_fanout_threads: dict[Path, threading.Thread] = {}
_fanout_lock = threading.Lock()


def prepare_fanout(directory: Path) -> None:
    """Make the 256 loose-object folders that are missing, in a thread, once per process.

    libgit2 makes ``objects/xx/`` when it first writes an object with that prefix; a mkdir costs
    about 0.5 ms on the development VM, and ``git gc`` removes the folders again once packing
    empties them. So in a fresh clone, a freshly filled memory or after a gc, a remember's seven
    objects paid for several folders. The thread makes them all while writes go on (a mkdir
    does not hold the GIL); ``finish_fanout`` waits for it.
    """
    with _fanout_lock:
        if directory in _fanout_threads:
            return
        thread = threading.Thread(
            target=_make_fanout, args=(directory,), name="elfmem-fanout", daemon=True
        )
        _fanout_threads[directory] = thread
    thread.start()


def finish_fanout(directory: Path) -> None:
    """Wait for the folder-making thread of ``directory``, if one ran (it takes ~0.1 s)."""
    with _fanout_lock:
        thread = _fanout_threads.get(directory)
    if thread is not None:
        thread.join()


def _make_fanout(directory: Path) -> None:
    try:
        present = set(os.listdir(directory))
    except OSError:
        return
    for i in range(256):
        name = f"{i:02x}"
        if name in present:
            continue
        try:
            os.mkdir(directory / name)  # the mode libgit2 uses, less the umask
        except FileExistsError:
            continue
        except OSError:
            return  # read-only or gone: libgit2 makes what it needs, or reports it


GC_AUTO_DEFAULT = 6700  # git's gc.auto: `git gc --auto` packs past this many loose objects


def loose_object_estimate(directory: Path) -> int:
    """Loose objects in ``directory``, estimated as ``git gc --auto`` does: the count in one
    fanout folder (``17/``) times 256. elfmem never packs; git's own commands do."""
    try:
        names = os.listdir(directory / "17")
    except (FileNotFoundError, NotADirectoryError):
        return 0
    return 256 * sum(1 for name in names if len(name) == 38 and set(name) <= _HEX)


_HEX = set("0123456789abcdef")


def prefer_loose_objects(repo: pygit2.Repository) -> None:
    """Give ``repo`` an object database that looks among loose objects before the packs.

    libgit2 looks in the packs first, one index search per pack, which suits a repository whose
    objects are mostly packed. A memory's hot objects are the opposite: every write reads back
    trees the previous write left loose (its bucket folder, the memory tree), and at 100k
    blocks the benchmark memory held 80 packs, so each such read searched 80 pack indexes
    before finding a loose file. The database is otherwise the one libgit2 builds: the same
    folder, its packs, and the alternates listed in ``objects/info/alternates``.
    """
    directory = objects_dir(repo)
    odb = pygit2.Odb()
    odb.add_backend(pygit2.OdbBackendPack(str(directory)), 1)
    # The higher priority is asked first; libgit2's own order is the other way round.
    odb.add_backend(pygit2.OdbBackendLoose(str(directory), 1, False), 2)
    for alternate in _alternates(directory):
        odb.add_disk_alternate(str(alternate))
    repo.set_odb(odb)


def _alternates(directory: Path) -> list[Path]:
    """The object folders ``info/alternates`` names, relative ones taken from ``directory``."""
    try:
        text = (directory / "info" / "alternates").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    lines = (line.strip() for line in text.splitlines())
    return [directory / line for line in lines if line and not line.startswith("#")]


_LOOSE_ODBS_KEPT = 8
_loose_odbs: OrderedDict[Path, pygit2.Odb] = OrderedDict()
_loose_odbs_lock = threading.Lock()


def _loose_odb(directory: Path) -> pygit2.Odb:
    """An object database of the loose objects alone, for writing.

    The repository's own odb looks for every new object among the packs before writing it, and
    when it is not there (it never is: the object is new) rescans the pack folder. At 10k
    blocks a memory has a hundred packs or more (every batch and every ledger flush is one),
    and the six objects of a ``remember`` paid six rescans. Written here, an object is looked
    for only among loose objects; one that some pack already holds gets a loose copy, which
    git tolerates and ``git gc`` drops.
    """
    with _loose_odbs_lock:
        odb = _loose_odbs.get(directory)
        if odb is None:
            odb = pygit2.Odb()
            # compression 1 is git's core.looseCompression default; no fsync, as libgit2's default
            odb.add_backend(pygit2.OdbBackendLoose(str(directory), 1, False), 1)
            _loose_odbs[directory] = odb
        _loose_odbs.move_to_end(directory)
        while len(_loose_odbs) > _LOOSE_ODBS_KEPT:
            _loose_odbs.popitem(last=False)
        return odb


def _entry_header(kind: ObjectType, size: int) -> bytes:
    out = bytearray()
    byte = (int(kind) << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def write_pack(directory: Path, objects: list[tuple[bytes, ObjectType, bytes]]) -> bool:
    """Write ``objects`` (undeltified) as ``pack-<sha>.pack`` + ``.idx`` (version 2).

    The index is renamed into place last: git and libgit2 see a pack only once its index exists,
    so a crash leaves at most an unused temporary file. False (nothing written) when the pack
    would need the large-offset table; the caller then stores the objects loose.
    """
    body = bytearray(b"PACK" + struct.pack(">II", 2, len(objects)))
    located: list[tuple[bytes, int, int]] = []
    for oid, kind, data in objects:
        offset = len(body)
        if offset >= _MAX_OFFSET:
            return False
        entry = _entry_header(kind, len(data)) + zlib.compress(data)
        located.append((oid, zlib.crc32(entry), offset))
        body += entry
    pack_sha = hashlib.sha1(body).digest()
    body += pack_sha
    located.sort()
    fanout = [0] * 256
    for oid, _, _ in located:
        fanout[oid[0]] += 1
    running = 0
    for i in range(256):
        running += fanout[i]
        fanout[i] = running
    idx = bytearray(b"\xfftOc" + struct.pack(">I", 2))
    idx += struct.pack(">256I", *fanout)
    idx += b"".join(oid for oid, _, _ in located)
    idx += b"".join(struct.pack(">I", crc) for _, crc, _ in located)
    idx += b"".join(struct.pack(">I", offset) for _, _, offset in located)
    idx += pack_sha
    idx += hashlib.sha1(idx).digest()
    pack_dir = directory / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)
    stem = pack_dir / f"pack-{pack_sha.hex()}"
    for suffix, content in ((".pack", body), (".idx", idx)):
        tmp = pack_dir / f"tmp_elfmem_{os.getpid()}{suffix}"
        with open(tmp, "wb") as fh:
            fh.write(content)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o444)
        os.replace(tmp, stem.with_suffix(suffix))
    return True
