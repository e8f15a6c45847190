"""A read view of the memory at one commit, with a person's uncommitted edits laid over it.

Writes are planned against a view. A memory file whose working-tree copy differs from its blob is a
hand edit: the view parses that copy (refusing with file:line if it does not parse), and a write
that touches the file carries the edit into its commit instead of overwriting it. A file that does
not parse (an unresolved conflict committed by plain git, say) is refused by every write that
reads it, so a write never rewrites a damaged file and loses its unreadable part.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

import pygit2
from pygit2.enums import FileMode

from elfmem.block.layout import (
    BUCKET_BYTES,
    BUCKET_LIMIT,
    MEMORY_DIR,
    BucketKey,
    parse_bucket_path,
)
from elfmem.block.model import Block
from elfmem.block.parse import parse_bytes
from elfmem.errors import BlockFormatError
from elfmem.store.objects import tree_records_at
from elfmem.store.repo import memory_tree, memory_workdir
from elfmem.store.tree import blob_at, blob_paths

_PARSED: OrderedDict[str, tuple[Block, ...]] = OrderedDict()
_PARSED_LIMIT = 512


def parsed(oid: str, data: bytes, path: str) -> tuple[Block, ...]:
    """Parse a memory file once per blob oid; a bucket being appended to is never re-read."""
    hit = _PARSED.get(oid)
    if hit is not None:
        _PARSED.move_to_end(oid)
        return hit
    blocks = tuple(parse_bytes(data, path))
    remember_parsed(oid, blocks)
    return blocks


def remember_parsed(oid: str, blocks: tuple[Block, ...]) -> None:
    _PARSED[oid] = blocks
    if len(_PARSED) > _PARSED_LIMIT:
        _PARSED.popitem(last=False)


_LAST_BUCKETS: OrderedDict[tuple[str, str, bytes], tuple[frozenset[bytes], int]] = OrderedDict()
_LAST_BUCKETS_KEPT = 64


def _is_file(record: bytes | None) -> bool:
    return record is not None and not record.startswith((b"40000 ", b"160000 "))


def _highest_bucket(records: dict[bytes, bytes], names: Iterable[bytes], prefix: bytes) -> int:
    start = len(prefix)
    stems = [
        name[start:-3]
        for name in names
        if name.startswith(prefix) and name.endswith(b".md") and _is_file(records[name])
    ]
    return max([1, *(int(stem) for stem in stems if stem.isdigit())])


def last_bucket(repo_key: str, folder: str, records: dict[bytes, bytes], prefix: bytes) -> int:
    """The highest ``<prefix><n>.md`` bucket number among a folder's file records.

    At 100k blocks a folder holds ~400 names and each write made a new version of it, so the
    answer is kept per folder with the names it was computed from: the next version usually
    only adds names, and only those are looked at. A name gone means a full look.
    """
    key = (repo_key, folder, prefix)
    kept = _LAST_BUCKETS.get(key)
    names = frozenset(records)
    if kept is not None:
        before, highest = kept
        added = names - before
        if len(names) - len(added) == len(before):  # nothing was removed
            highest = max(highest, _highest_bucket(records, added, prefix))
        else:
            highest = _highest_bucket(records, names, prefix)
    else:
        highest = _highest_bucket(records, names, prefix)
    _LAST_BUCKETS[key] = (names, highest)
    _LAST_BUCKETS.move_to_end(key)
    while len(_LAST_BUCKETS) > _LAST_BUCKETS_KEPT:
        _LAST_BUCKETS.popitem(last=False)
    return highest


class MemoryView:
    """The memory files of ``commit`` (None: an unborn branch), hand edits overlaid."""

    def __init__(self, repo: pygit2.Repository, commit: pygit2.Commit | None) -> None:
        self.repo = repo
        self.commit = commit
        self.tree = memory_tree(commit)
        self.workdir = memory_workdir(repo)
        self.carried: set[str] = set()
        self._paths: list[str] | None = None
        self._reserved: dict[str, int] = {}
        """Blocks this write has already sent to each bucket (see ``append_target``)."""
        self._reserved_bytes: dict[str, int] = {}
        """And about how many bytes they carry there."""
        self._last_reserved: dict[tuple[str, str], int] = {}
        """The highest bucket number reserved per (folder, month): a dream reserving hundreds of
        buckets asks for it once per block."""
        self._records: dict[str, dict[bytes, bytes]] = {}
        self._last_in_tree: dict[tuple[str, str], int] = {}
        self._files: dict[str, tuple[bytes, str]] = {}
        """Each file's bytes and oid, read once: a view is one snapshot for one write attempt."""
        self.disk_oids: dict[str, str | None] = {}
        """Blob oid of each loaded file's working-tree copy (None: no file), seen while loading."""

    def paths(self) -> list[str]:
        """Bucket files in the tree, memory-relative, sorted."""
        if self._paths is None:
            self._paths = sorted(
                p for p in blob_paths(self.repo, self.tree) if parse_bucket_path(p)
            )
        return self._paths

    def _folder_records(self, folder: str) -> dict[bytes, bytes]:
        """One folder's raw tree records (``objects.tree_records``), read once per view."""
        records = self._records.get(folder)
        if records is None:
            records = {}
            try:
                entry = self.tree[folder] if self.tree is not None else None
            except KeyError:
                entry = None
            if entry is not None and entry.filemode == FileMode.TREE:
                records = tree_records_at(self.repo, entry.id)
            self._records[folder] = records
        return records

    def _file_record(self, relpath: str) -> bytes | None:
        """The tree record of the committed file at ``relpath`` (in a folder), or None."""
        folder, _, name = relpath.rpartition("/")
        record = self._folder_records(folder).get(name.encode("utf-8", "surrogateescape"))
        return record if _is_file(record) else None

    def _blob_oid(self, relpath: str) -> pygit2.Oid | None:
        """The committed blob at ``relpath``, from its folder's records (no object loaded)."""
        if "/" not in relpath:
            blob = blob_at(self.repo, self.tree, relpath)
            return blob.id if blob is not None else None
        record = self._file_record(relpath)
        return pygit2.Oid(raw=record[-20:]) if record is not None else None

    def _last_bucket(self, key: BucketKey) -> int:
        """The highest bucket number of ``key``'s month in the tree or reserved by this view."""
        head, _, _ = key.relpath.rpartition("/")
        cached = self._last_in_tree.get((head, key.month))
        if cached is None:
            prefix = f"{key.month}-".encode()
            cached = last_bucket(self.repo.path, head, self._folder_records(head), prefix)
            self._last_in_tree[(head, key.month)] = cached
        return max(cached, self._last_reserved.get((head, key.month), 0))

    def blob_oid(self, relpath: str) -> str | None:
        blob = blob_at(self.repo, self.tree, relpath)
        return str(blob.id) if blob is not None else None

    def text(self, relpath: str) -> str:
        """The file as the next commit should start from it (hand edits included)."""
        data, _ = self._bytes(relpath)
        return data.decode("utf-8") if data else ""

    def read(self, relpath: str) -> tuple[Block, ...]:
        data, oid = self._bytes(relpath)
        if not data:
            return ()
        return parsed(oid, data, f"{MEMORY_DIR}/{relpath}")

    def _bytes(self, relpath: str) -> tuple[bytes, str]:
        if relpath not in self._files:
            self._files[relpath] = self._load(relpath)
        return self._files[relpath]

    def _load(self, relpath: str) -> tuple[bytes, str]:
        """The file's bytes and oid: the working-tree copy when it differs (a hand edit, carried),
        else the committed blob, taken from disk when the disk holds exactly it."""
        blob_oid = self._blob_oid(relpath)
        oid = str(blob_oid) if blob_oid is not None else ""
        if self.workdir is not None:
            try:
                on_disk: bytes | None = (self.workdir / MEMORY_DIR / relpath).read_bytes()
            except FileNotFoundError:
                on_disk = None
            disk_oid = str(pygit2.hash(on_disk)) if on_disk is not None else None
            self.disk_oids[relpath] = disk_oid
            if disk_oid == oid:
                return on_disk or b"", oid
            if on_disk is not None and (on_disk or blob_oid is not None):
                # It differs from the commit (an empty file where none is committed does not).
                parsed(str(disk_oid), on_disk, f"{MEMORY_DIR}/{relpath}")
                self.carried.add(relpath)
                return on_disk, str(disk_oid)
        blob = self.repo.get(blob_oid) if blob_oid is not None else None
        return (blob.data if isinstance(blob, pygit2.Blob) else b""), oid

    def find(self, block_id: str, hint: str | None = None) -> tuple[str, Block] | None:
        """Where a block lives; ``hint`` (from the index) is tried first, then every file."""
        order = ([hint] if hint else []) + [p for p in self.paths() if p != hint]
        for relpath in order:
            try:
                blocks = self.read(relpath)
            except BlockFormatError:
                if f"id: {block_id}" in self.text_lenient(relpath):
                    raise  # the block is in a file that does not parse: no write may touch it
                continue  # a damaged file elsewhere does not stop a write to this block
            for block in blocks:
                if block.id == block_id:
                    return relpath, block
        return None

    def text_lenient(self, relpath: str) -> str:
        """The file's text with undecodable bytes replaced: for searching, never for writing."""
        data, _ = self._bytes(relpath)
        return data.decode("utf-8", "replace")

    def _committed_damage(self, relpath: str) -> bool:
        """The committed file does not parse (a conflict committed by plain git, say) and the
        disk holds exactly it: no one is editing it now."""
        blob = self._blob_oid(relpath)
        return blob is not None and self.disk_oids.get(relpath, str(blob)) == str(blob)

    def append_target(self, status: str, cls: str, month: str, size: int = 0) -> str:
        """Reserve a place for one new block: the last bucket of its kind, or a fresh one when full.

        Each call counts as one block appended, of ``size`` bytes (``block_bytes``), so a batch
        planned against one view fills buckets to ``BUCKET_LIMIT`` blocks or ``BUCKET_BYTES``
        bytes and moves on instead of piling every block into the same file; a block past the
        byte bound on its own starts a fresh bucket. A committed last bucket that does not parse
        counts as full: it is left for a person to resolve (every read warns about it) and
        appends go on in a fresh one.
        """
        key = BucketKey(status, cls, month)
        key = BucketKey(status, cls, month, self._last_bucket(key))
        relpath = key.relpath
        try:
            committed = self._file_record(relpath) is not None
            held = len(self.read(relpath)) if committed else 0
            used = len(self._bytes(relpath)[0]) if committed else 0
        except BlockFormatError:
            if not self._committed_damage(relpath):
                raise  # a hand edit in progress: the person editing it is told, file and line
            held, used = BUCKET_LIMIT, 0  # never rewritten until resolved: appends go elsewhere
        held += self._reserved.get(relpath, 0)
        used += self._reserved_bytes.get(relpath, 0)
        if held >= BUCKET_LIMIT or (held and used + size > BUCKET_BYTES):
            relpath = key.next().relpath
        self._reserved[relpath] = self._reserved.get(relpath, 0) + 1
        reserved = parse_bucket_path(relpath)
        if reserved is not None:
            at = (relpath.rpartition("/")[0], reserved.month)
            self._last_reserved[at] = max(self._last_reserved.get(at, 0), reserved.n)
        self._reserved_bytes[relpath] = self._reserved_bytes.get(relpath, 0) + size
        return relpath
