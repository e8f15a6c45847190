"""The ledger's storage: one JSONL note per block under ``refs/notes/elfmem``.

Notes are keyed by a deterministic anchor (the blob oid of ``elfmem-block <id>\\n``) so every clone
computes the same key and it survives edits, moves and rebases. The anchor blob itself is not
written: ``git notes show <oid>`` and ``git notes add`` accept a full object id whether or not the
object exists, clones would not receive it, and ``git gc`` would prune it as unreachable anyway.

We write the notes tree ourselves with a 2/38 fanout and path copy: libgit2's ``create_note``
rewrites one flat tree of every note on each append, which costs tens of milliseconds per event
at 10k blocks.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache

import pygit2
from pygit2.enums import FileMode, ReferenceType, SortMode

from elfmem.errors import READ_ONLY_ERRNOS, ConflictError, InvalidInput, LockedError
from elfmem.store import faults
from elfmem.store.locks import RefIntent, present, ref_lock_path, wait_for
from elfmem.store.objects import ObjectBatch
from elfmem.store.repo import memory_commit_oid, state_dir, write_lock

NOTES_REF = "refs/notes/elfmem"
CLOCK_ANCHOR_TEXT = "elfmem-clock\n"
FALLBACK_NAME = "elfmem"
FALLBACK_EMAIL = "elfmem@localhost"
MAX_ATTEMPTS = 50

_HEX = frozenset("0123456789abcdef")
_Path = tuple[str, ...]


REPAIR = (
    f"If a clone or remote holds the ledger, restore it from there (`git fetch <remote> "
    f"+{NOTES_REF}:{NOTES_REF}`); otherwise drop the damaged ref with `git update-ref -d "
    f"{NOTES_REF}` (its history of use is lost; blocks are not), then run `elfmem sync` or any "
    "command: events kept meanwhile are written to the new ledger."
)


class LedgerBroken(ConflictError):
    """The notes ref names no notes commit: a missing object, or a blob or tree. Reads go on
    without the ledger; nothing can be appended to it until it is repaired."""


def broken_ledger(ref: str, target: str, what: str) -> LedgerBroken:
    return LedgerBroken(
        f"{ref} points at {target}, which is {what}, not a notes commit: the ledger (history "
        "of use, outcomes, learned links) cannot be read or written.",
        REPAIR.replace(NOTES_REF, ref),
    )


def _read_only(exc: Exception) -> LockedError | None:
    """A ledger write the filesystem refused, as the locked kind (libgit2 reports it as text)."""
    if isinstance(exc, OSError) and exc.errno in READ_ONLY_ERRNOS:
        return LockedError(
            f"cannot write {exc.filename or 'the ledger'}: {exc.strerror} (the repository is "
            "read-only here, or not yours to write); nothing was recorded.",
            READ_ONLY_RECOVERY,
        )
    text = str(exc)
    if "Read-only file system" in text or "Permission denied" in text:
        return LockedError(
            f"cannot write the ledger ({text}); the repository is read-only here, or not yours "
            "to write; nothing was recorded.",
            READ_ONLY_RECOVERY,
        )
    return None


READ_ONLY_RECOVERY = (
    "Reads work on a read-only repository; to write, run elfmem where the repository and its "
    ".git directory are writable by you."
)


def anchor_text(block_id: str) -> str:
    """The bytes whose blob oid keys a block's note; plain git can hash them too."""
    return f"elfmem-block {block_id}\n"


@lru_cache(maxsize=16384)
def anchor_for_block(block_id: str) -> str:
    """Same as ``printf 'elfmem-block %s\\n' <id> | git hash-object --stdin``.

    Kept per id: a recall asks for the anchor of every candidate (about a hundred) each time.
    """
    return str(pygit2.hash(anchor_text(block_id).encode()))


def clock_anchor() -> str:
    """The anchor of the memory's global events (the session clock)."""
    return str(pygit2.hash(CLOCK_ANCHOR_TEXT.encode()))


def _is_hex(name: str) -> bool:
    return bool(name) and _HEX.issuperset(name)


def require_anchor(anchor: str) -> None:
    """Refuse anything but a 40-hex object id before it becomes a path in the notes tree."""
    if len(anchor) != 40 or not _is_hex(anchor):
        raise InvalidInput(
            f"not a notes anchor: {anchor!r} (expected 40 lowercase hex digits)",
            "Compute anchors with anchor_for_block(block_id) or clock_anchor().",
        )


def _locate(
    tree: pygit2.Tree,
    rest: str,
    path: _Path = (),
    seen: dict[_Path, pygit2.Tree | None] | None = None,
) -> list[tuple[_Path, pygit2.Oid]]:
    """Every place a note for ``rest`` sits, whatever fanout wrote it (flat, 2/38, 2/2/36, ...).

    ``seen`` keeps the subtrees already loaded for other anchors of the same call: libgit2 does
    not cache a tree this large, so each lookup would inflate and parse its fanout tree again
    (1,578 notes at 100k blocks took a second)."""
    found: list[tuple[_Path, pygit2.Oid]] = []
    if rest in tree:
        entry = tree[rest]
        if entry.filemode != FileMode.TREE:
            found.append((path + (rest,), entry.id))
    head = rest[:2]
    if len(rest) > 2:
        where = path + (head,)
        if seen is not None and where in seen:
            sub = seen[where]
        else:
            node = tree[head] if head in tree else None
            sub = node if isinstance(node, pygit2.Tree) else None
            if seen is not None:
                seen[where] = sub
        if sub is not None:
            found.extend(_locate(sub, rest[2:], where, seen))
    return found


def _walk(tree: pygit2.Tree, prefix: str = "") -> Iterator[tuple[str, pygit2.Oid]]:
    for entry in tree:
        name = entry.name or ""
        full = prefix + name
        if not _is_hex(name) or len(full) > 40:
            continue
        if isinstance(entry, pygit2.Tree):
            if len(name) == 2 and len(full) < 40:
                yield from _walk(entry, full)
        elif len(full) == 40:
            yield full, entry.id


def _anchor_of(path: str) -> str | None:
    """The anchor a notes-tree path names (``ab/cdef…`` or any fanout), None for other files."""
    parts = path.split("/")
    if any(len(p) != 2 or not _is_hex(p) for p in parts[:-1]) or not _is_hex(parts[-1]):
        return None
    anchor = "".join(parts)
    return anchor if len(anchor) == 40 else None


def union_note(existing: str, lines: Sequence[str]) -> str | None:
    """The note with ``lines`` added where absent, or None when every line is already there."""
    kept = [line for line in existing.split("\n") if line.strip()]
    seen = set(kept)
    added = False
    for line in lines:
        if "\n" in line or "\r" in line:
            raise InvalidInput(
                "a ledger line may not contain a line break",
                "Encode the event with elfmem.store.ledger.encode(event).",
            )
        if line.strip() and line not in seen:
            seen.add(line)
            kept.append(line)
            added = True
    return "\n".join(kept) + "\n" if added else None


class NotesLedger:
    """Reads and appends JSONL notes on one notes ref; every append is a compare-and-swap."""

    def __init__(
        self,
        repo: pygit2.Repository,
        ref: str = NOTES_REF,
        *,
        author: pygit2.Signature | None = None,
        committer: pygit2.Signature | None = None,
    ) -> None:
        self.repo = repo
        self.ref = ref
        self._author = author
        self._committer = committer
        self._made: tuple[str | None, str, frozenset[str]] | None = None
        """(parent, commit, anchors it changed) of this handle's latest append: the diff a
        reader asks for right after a write, known without walking the trees."""

    def _reference(self) -> pygit2.Reference | None:
        ref = self.repo.references.get(self.ref)
        if ref is not None and ref.type == ReferenceType.SYMBOLIC:
            ref = ref.resolve()
        return ref

    def tip(self) -> str | None:
        """The notes commit the ref names; None when there is none, or when the ref names no
        notes commit (``broken`` says why): reads go on as if there were no ledger."""
        try:
            return self._checked_tip()
        except LedgerBroken:
            return None

    def broken(self) -> LedgerBroken | None:
        """Why the ref names no notes commit, or None when it is usable (or absent)."""
        try:
            self._checked_tip()
        except LedgerBroken as exc:
            return exc
        return None

    def _checked_tip(self, ref: pygit2.Reference | None = None) -> str | None:
        ref = ref if ref is not None else self._reference()
        if ref is None:
            return None
        target = str(ref.target)
        try:
            obj = self.repo.get(target)
        except (ValueError, pygit2.GitError):
            obj = None
        if obj is None:
            raise broken_ledger(self.ref, target, "an object this repository does not have")
        if not isinstance(obj, pygit2.Commit):
            raise broken_ledger(self.ref, target, f"a {obj.type_str}")
        return target

    def tip_for(self, rev: pygit2.Commit) -> str | None:
        """The ledger as it stood at memory commit ``rev`` (``--at REV``): the newest notes commit
        whose recorded memory tip is ``rev`` or an ancestor of it. A notes commit with no record
        (older, or a merge of clones' notes), or one naming a commit this clone lacks, counts by
        time: made at or before ``rev``."""
        tip = self.tip()
        for commit in [] if tip is None else self.repo.walk(tip, SortMode.TIME):
            on_rev = _ancestor(self.repo, memory_tip_of(commit.message), rev.id)
            if on_rev or (on_rev is None and commit.commit_time <= rev.commit_time):
                return str(commit.id)
        return None

    def tip_at(self, when: int) -> str | None:
        """The newest notes commit made at or before ``when`` (epoch seconds): ``--at REV``."""
        tip = self.tip()
        for commit in [] if tip is None else self.repo.walk(tip, SortMode.TIME):
            if commit.commit_time <= when:
                return str(commit.id)
        return None

    def _tree(self, tip: str | None) -> pygit2.Tree | None:
        return None if tip is None else self.repo[tip].peel(pygit2.Tree)

    def _text(
        self,
        tree: pygit2.Tree | None,
        anchor: str,
        seen: dict[_Path, pygit2.Tree | None] | None = None,
    ) -> tuple[str, list[_Path]]:
        found = [] if tree is None else _locate(tree, anchor, (), seen)
        return "".join(self._blob_text(oid) for _, oid in found), [path for path, _ in found]

    def _blob_text(self, oid: pygit2.Oid) -> str:
        # The object database's bytes, without a Blob object around them: a third faster over
        # the thousand notes ``status`` reads at 1k blocks.
        text: str = self.repo.odb.read(oid)[1].decode("utf-8", "surrogateescape")
        return text if text.endswith("\n") else text + "\n"

    def read(self, anchor: str, tip: str | None = None) -> str | None:
        """The note's text at ``tip`` (default: the current tip), or None if it has none."""
        require_anchor(anchor)
        text, paths = self._text(self._tree(tip if tip is not None else self.tip()), anchor)
        return text if paths else None

    def read_many(self, anchors: Iterable[str], tip: str | None = None) -> dict[str, str]:
        """Anchor → note text for those that have one, resolving the notes tree once."""
        tree = self._tree(tip if tip is not None else self.tip())
        out: dict[str, str] = {}
        seen: dict[_Path, pygit2.Tree | None] = {}
        for anchor in anchors:
            text, paths = self._text(tree, anchor, seen)
            if paths:
                out[anchor] = text
        return out

    def read_all(self, tip: str | None = None) -> dict[str, str]:
        """Anchor → note text at ``tip`` (default: the current tip)."""
        tree = self._tree(tip if tip is not None else self.tip())
        notes: dict[str, str] = {}
        for anchor, oid in [] if tree is None else _walk(tree):
            notes[anchor] = notes.get(anchor, "") + self._blob_text(oid)
        return notes

    def changed_anchors(self, old_tip: str | None, new_tip: str | None) -> set[str]:
        """Anchors whose notes differ between the two commits: libgit2's tree diff, which
        skips unchanged subtrees by oid and walks the rest in C."""
        if self._made is not None and (old_tip, new_tip) == self._made[:2]:
            return set(self._made[2])
        old, new = self._tree(old_tip), self._tree(new_tip)
        if old is None and new is None:
            return set()
        if old is None:
            assert new is not None
            diff = new.diff_to_tree(swap=True)
        else:
            diff = old.diff_to_tree(new) if new is not None else old.diff_to_tree()
        changed: set[str] = set()
        for delta in diff.deltas:
            for path in (delta.old_file.path, delta.new_file.path):
                anchor = _anchor_of(path)
                if anchor is not None:
                    changed.add(anchor)
        return changed

    def append_blocks(
        self, lines_by_block: Mapping[str, Sequence[str]], message: str
    ) -> str | None:
        """``append`` keyed by block id instead of anchor."""
        by_anchor = {
            anchor_for_block(block_id): lines for block_id, lines in lines_by_block.items()
        }
        return self.append(by_anchor, message)

    def append(
        self,
        lines_by_anchor: Mapping[str, Sequence[str]],
        message: str,
        *,
        author: pygit2.Signature | None = None,
        committer: pygit2.Signature | None = None,
    ) -> str | None:
        """One notes commit for the whole batch; returns its oid, or None if nothing was new."""
        for anchor, lines in lines_by_anchor.items():
            require_anchor(anchor)
            if isinstance(lines, str):
                raise InvalidInput(
                    f"lines for {anchor} must be a sequence of lines, not one string",
                    "Pass a list: {anchor: [line]}.",
                )
        from elfmem.block.secrets import check_note_lines  # secret patterns: writes only

        check_note_lines((ln for ls in lines_by_anchor.values() for ln in ls), f"{self.ref} event")
        last: Exception | None = None
        for attempt in range(MAX_ATTEMPTS):
            try:
                return self._attempt(lines_by_anchor, message, author, committer)
            except (pygit2.GitError, OSError) as exc:  # tip moved or ref locked: re-read, retry
                locked = _read_only(exc)
                if locked is not None:
                    raise locked from exc
                last = exc
                if self._stale_lock():
                    continue
                time.sleep(min(0.1, 0.001 * 2 ** min(attempt, 7)) * random.uniform(0.5, 1.5))
        raise ConflictError(
            f"{self.ref} kept moving; {MAX_ATTEMPTS} attempts to append failed ({last})",
            "Retry the call; if it keeps failing, look for a stuck writer or a stale "
            f"{self.ref}.lock file in the git directory.",
        )

    def _attempt(
        self,
        lines_by_anchor: Mapping[str, Sequence[str]],
        message: str,
        author: pygit2.Signature | None,
        committer: pygit2.Signature | None,
    ) -> str | None:
        ref = self._reference()
        old_tip = self._checked_tip(ref)  # a broken ref is named, never retried or overwritten
        tree = self._tree(old_tip)
        changes: dict[_Path, pygit2.Oid | None] = {}
        batch = ObjectBatch(self.repo)
        seen: dict[_Path, pygit2.Tree | None] = {}
        written: set[str] = set()
        for anchor, lines in lines_by_anchor.items():
            existing, paths = self._text(tree, anchor, seen)
            merged = union_note(existing, lines)
            if merged is None:
                continue
            written.add(anchor)
            target = (anchor[:2], anchor[2:])
            changes.update({path: None for path in paths if path != target})
            changes[target] = batch.blob(merged.encode("utf-8", "surrogateescape"))
        if not changes:
            return None
        tree_oid = batch.edit(tree, changes) or batch.tree([])
        batch.store()
        committer = committer or self._committer or self._default_signature()
        author = author or self._author or committer
        parents = [] if old_tip is None else [old_tip]
        message = with_memory_tip(message, memory_commit_oid(self.repo))
        commit = self.repo.create_commit(None, author, committer, message, tree_oid, parents)
        faults.point("notes.objects")
        reflog = "notes: " + (message.splitlines() or [""])[0]
        intent = RefIntent(state_dir(self.repo), self.ref)
        intent.record(str(commit))
        try:
            if ref is None:
                self._create_ref(commit, reflog)
            else:
                lock = ref_lock_path(self.repo, self.ref)
                faults.point("notes.ref-lock", leave=lambda: lock.touch(exist_ok=False))
                ref.set_target(commit, reflog)  # compare-and-swap against old_tip
        finally:
            intent.drop()
        faults.point("notes.ref")
        self._made = (old_tip, str(commit), frozenset(written))
        return str(commit)

    def _stale_lock(self) -> bool:
        """True when the ref's lock was a killed elfmem writer's and is now gone; raises at once
        when another program's lock has been held for more than a moment."""
        lock = ref_lock_path(self.repo, self.ref)
        if present(lock) is None:
            return False
        if RefIntent(state_dir(self.repo), self.ref).clear_stale(lock):
            return True
        wait_for(lock, self.ref)
        return False

    def _create_ref(self, commit: pygit2.Oid, reflog: str) -> None:
        """Create the ref only if it is still absent.

        libgit2 checks that a new ref does not exist before it takes the ref's lock, so two
        processes creating it at once could both succeed and the first commit would be lost.
        The check is repeated here under a lock that every elfmem process takes.
        """
        with write_lock(self.repo, "notes-ref"):
            if self._reference() is not None:
                raise OSError(f"{self.ref} was created by another writer")  # retried
            try:
                self.repo.create_reference_direct(self.ref, commit, False, message=reflog)
            except pygit2.AlreadyExistsError as exc:  # plain git created it just now
                raise OSError(str(exc)) from exc

    def _default_signature(self) -> pygit2.Signature:
        try:
            return self.repo.default_signature
        except (KeyError, pygit2.GitError):
            return pygit2.Signature(FALLBACK_NAME, FALLBACK_EMAIL)


MEMORY_TIP_TRAILER = "Elfmem-Memory-Tip"
"""The trailer of a notes commit naming the memory commit it was written on: ``--at REV`` reads
the events recorded while REV (or an ancestor) was the tip, whatever second they fell in."""


def with_memory_tip(message: str, tip: pygit2.Oid | None) -> str:
    """``message`` with the memory tip as a trailer (unchanged while memory has no commit)."""
    if tip is None:
        return message
    return f"{message.rstrip()}\n\n{MEMORY_TIP_TRAILER}: {tip}\n"


def memory_tip_of(message: str) -> str | None:
    """The memory tip a notes commit recorded, or None when it recorded none."""
    prefix = f"{MEMORY_TIP_TRAILER}: "
    for line in reversed(message.splitlines()):
        if line.startswith(prefix):
            return line[len(prefix) :].strip()
    return None


def _ancestor(repo: pygit2.Repository, recorded: str | None, rev: pygit2.Oid) -> bool | None:
    """Whether ``recorded`` is ``rev`` or an ancestor of it; None when there is no record or
    this clone lacks the commit it names (then time decides)."""
    if recorded is None:
        return None
    try:
        oid = pygit2.Oid(hex=recorded)
        if oid == rev:
            return True
        if oid not in repo:
            return None
        return bool(repo.descendant_of(rev, oid))
    except (ValueError, pygit2.GitError):
        return None
