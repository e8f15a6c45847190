"""The heartbeat: remember, edit and forget. Milliseconds, no LLM, one commit each.

Capture appends to the inbox (``log/``); it analyses nothing. A duplicate of a live block is a
graceful reject that returns the existing id. Credentials are refused before any blob is written.
A capture that names blocks it ``supersedes`` carries the relation in its own file, so the block
and the correction it declares are one commit (``declared_corrections``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from elfmem import clock
from elfmem.block import secrets
from elfmem.block.facts import same_information
from elfmem.block.layout import month_of, parse_bucket_path
from elfmem.block.model import (
    BLOCK_ID_RE,
    WHEN_KEY,
    Block,
    Relation,
    content_hash,
    is_valid_category,
    is_valid_tag,
    normalise_content,
    refuse_control,
)
from elfmem.block.render import block_bytes, render_block, validate_block
from elfmem.block.text import preview
from elfmem.config import CONFIG_PATH
from elfmem.config import render as render_config
from elfmem.errors import BlockNotFound, InvalidInput, SecretRefused
from elfmem.index import queries
from elfmem.index.blockdiff import duplicate_error
from elfmem.progress import Progress, silent
from elfmem.retrieval.dates import parse_when
from elfmem.rhythms.core import Core
from elfmem.rhythms.results import BatchResult, ChangeResult, RememberResult
from elfmem.store import FileEdit, MemoryView, Plan


@dataclass(frozen=True)
class Capture:
    """One thing to remember, validated."""

    content: str
    cue: str = ""
    tags: tuple[str, ...] = ()
    category: str = "knowledge"
    pinned: bool = False
    when: str = ""
    """When it was said or learned, in any form ``retrieval.dates.parse_when`` reads."""
    supersedes: tuple[str, ...] = ()
    """Ids of the blocks this one corrects: written as ``supersedes:: [[id]]`` in its file."""


def check_when(when: str, today: date | None = None) -> tuple[tuple[str, str], ...]:
    """The ``when:`` frontmatter entry for a capture's date ("" states none); relative dates
    count from ``today`` (default: today, UTC)."""
    if not when.strip():
        return ()
    refuse_control("when", when)
    return ((WHEN_KEY, parse_when(when, today or datetime.now(UTC).date())),)


def check_text(
    content: str, cue: str, max_bytes: int, allow_secret: bool, overridable: bool = False
) -> str:
    """Normalised content, or a clear refusal; credentials are refused before anything else.
    ``overridable``: the command takes ``--allow-secret``, so its refusal may say so."""
    secrets.check([("content", content), ("cue", cue)], allow_secret, overridable=overridable)
    refuse_control("content", content)
    refuse_control("cue", cue)
    text = normalise_content(content)
    if not text:
        raise InvalidInput(
            "Content is empty.", 'Pass the text to remember, e.g. `elfmem remember "…"`.'
        )
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise InvalidInput(
            f"Content is {size:,} bytes; the limit is {max_bytes:,} (memory.max_content_bytes).",
            "Split it into several blocks, one idea each, or raise memory.max_content_bytes.",
        )
    if "\n" in cue or "\r" in cue:
        raise InvalidInput("A cue is one line.", "Pass the cue as a single line of text.")
    if "\x00" in text:
        raise InvalidInput("Content contains a NUL byte.", "Remove the NUL byte; memory is text.")
    return text


def check_tags(
    tags: Iterable[str], category: str, allow_secret: bool = False, overridable: bool = False
) -> tuple[str, ...]:
    """Clean tags, or a refusal; a credential is refused before a message could echo it."""
    for tag in tags:
        refuse_control("tag", tag)
    refuse_control("category", category)
    clean = tuple(dict.fromkeys(t.strip() for t in tags if t.strip()))
    fields = secrets.capture_fields("", tags=clean, category=category)
    secrets.check(fields, allow_secret, overridable=overridable)
    bad = [t for t in clean if not is_valid_tag(t)]
    if bad:
        raise InvalidInput(
            f"Invalid tag(s): {', '.join(bad)}.",
            "Tags use letters, digits and _ . / % : + - (no spaces), e.g. db/postgres.",
        )
    if not is_valid_category(category):
        raise InvalidInput(
            f"Invalid category {category!r}.",
            "A category is lower-case letters, digits, _ or - (e.g. knowledge, decision).",
        )
    return clean


def make_block(
    core: Core, item: Capture, allow_secret: bool = False, overridable: bool = False
) -> Block:
    limit = core.config.memory.max_content_bytes
    text = check_text(item.content, item.cue, limit, allow_secret, overridable)
    tags = check_tags(item.tags, item.category, allow_secret, overridable)
    for target in item.supersedes:
        refuse_control("supersedes", target)
        if not BLOCK_ID_RE.fullmatch(target):
            raise BlockNotFound(
                f"No block has id {target!r}, so nothing can supersede it; nothing was written.",
                "Pass the id (or a unique prefix of 4+ characters) of the block this one "
                "corrects, from `elfmem recall` or `elfmem ls`.",
            )
    block = Block(
        id=core.new_id(),
        content=text,
        cls=item.category,
        tags=tags,
        pinned=item.pinned,
        created=clock.iso_seconds(core.clock),
        cue=item.cue.strip(),
        relations=tuple(Relation("supersedes", t) for t in dict.fromkeys(item.supersedes)),
        extra=check_when(item.when, clock.today(core.clock)),
    )
    validate_block(block)
    return block


def superseded_ids(block: Block) -> list[str]:
    return [r.target for r in block.relations if r.kind == "supersedes"]


def declared_corrections(
    core: Core, view: MemoryView, blocks: Sequence[Block], numbers: Sequence[int] = ()
) -> None:
    """Refuse, before anything is written, a ``supersedes`` that names no block in memory, an
    archived one, a block of the same write, or a block saying exactly the same thing (a tie is
    never a revision). Checked against the tree the commit is built on; ``numbers`` names each
    block's record in a batch (``Record N: …``)."""
    batch = {b.id for b in blocks}
    for at, block in enumerate(blocks):
        if not numbers:
            _check_targets(core, view, block, batch)
            continue
        try:
            _check_targets(core, view, block, batch)
        except (InvalidInput, BlockNotFound) as exc:
            if type(exc) not in (InvalidInput, BlockNotFound):  # a subclass keeps its fields
                raise
            raise type(exc)(f"Record {numbers[at]}: {exc.message}", exc.recovery) from None


def _check_targets(core: Core, view: MemoryView, block: Block, batch: set[str]) -> None:
    """One capture's ``supersedes`` targets, checked as ``declared_corrections`` says."""
    for target in superseded_ids(block):
        if target in batch:
            raise InvalidInput(
                f"A block cannot supersede {target}: it is written in the same batch.",
                "Remember the older block first, then the correction with its id.",
            )
        try:
            relpath, old = locate(core, view, target)
        except BlockNotFound:
            raise BlockNotFound(
                f"No block has id {target!r}, so nothing can supersede it; nothing was written.",
                "Pass the id of the block this one corrects, from `elfmem recall` or `elfmem ls`.",
            ) from None
        key = parse_bucket_path(relpath)
        if key is not None and key.status == "archived":
            raise InvalidInput(
                f"Block {target} is archived: recall no longer shows it, so a correction of "
                "it would rank against nothing; nothing was written.",
                "Remember the text without --supersedes, or bring the block back first "
                "(`elfmem undo` of the commit that archived it).",
            )
        if same_information(old.content, block.content):
            raise InvalidInput(
                f"The text says the same as block {target}: a tie is never a revision; "
                "nothing was written.",
                "Remember the corrected text with --supersedes, or leave the block as it is.",
            )


def _duplicate_of_correction(core: Core, existing: str, block: Block) -> None:
    """A capture that names blocks it supersedes but repeats a live block: fine when that block
    already declares the same corrections, a clear refusal otherwise (the link would be lost)."""
    wanted = superseded_ids(block)
    if existing in wanted:
        raise InvalidInput(
            f"The text is the same as block {existing}'s: a block cannot supersede itself, and a "
            "tie is never a revision; nothing was written.",
            "Remember the corrected text with --supersedes, or leave the block as it is.",
        )
    row = queries.get_blocks(core.db(), [existing]).get(existing)
    declared = {t for k, t in row.relations if k == "supersedes"} if row is not None else set()
    missing = [t for t in wanted if t not in declared]
    if missing:
        raise InvalidInput(
            f"The text is already in memory as block {existing}, which does not supersede "
            f"{', '.join(missing)}; nothing was written.",
            f"Record the correction on it: `elfmem connect {existing} {missing[0]} "
            "--relation supersedes`.",
        )


def _preview(content: str) -> str:
    """A commit subject's preview; content stored with the override has its credential named,
    never shown. Redacted before and after the preview drops the markup, so a value the check
    finds only in one of the two forms is named too."""
    return secrets.redact(preview(secrets.redact(content)))


def _allowed(blocks: Iterable[Block]) -> list[tuple[str, str]]:
    """The override's trailers: the kinds of credential let through, for the commit to record."""
    kinds = [k for b in blocks for k in secrets.check(secrets.block_fields(b), allow=True)]
    return secrets.allow_trailers(kinds)


def _append_plan(
    core: Core, view: MemoryView, blocks: Sequence[Block], op: str, subject: str
) -> Plan:
    """Append to the inbox buckets (with the default config when there is none yet)."""
    plan = Plan(op=op, subject=subject, block_ids=[b.id for b in blocks])
    _first_config(core, plan)
    return append_blocks(view, plan, [("inbox", block) for block in blocks])


def _first_config(core: Core, plan: Plan) -> None:
    """A first write before any ``init`` commits the settings it ran with beside its blocks, so
    ``doctor`` and every clone read the same config; a config on disk, even uncommitted, is the
    user's and stays as it is."""
    if core.store.committed_file(CONFIG_PATH) is not None:
        return
    wd = core.store.memory_workdir
    if wd is not None and (wd / CONFIG_PATH).exists():
        return
    plan.raw[CONFIG_PATH] = render_config(core.config).encode("utf-8")
    core.warnings[
        f"no {CONFIG_PATH} yet: wrote the default one in the same commit "
        "(edit it to change models or thresholds)"
    ] = None


def append_blocks(view: MemoryView, plan: Plan, blocks: Iterable[tuple[str, Block]]) -> Plan:
    """Append each (status, block) to the bucket it belongs in, bounded by count and bytes; each
    file's text is joined once, so a batch of any size stays linear."""
    added: dict[str, list[Block]] = {}
    texts: dict[str, list[str]] = {}
    for status, block in blocks:
        relpath = view.append_target(status, block.cls, month_of(block.created), block_bytes(block))
        if relpath not in added:
            text = view.text(relpath)
            added[relpath], texts[relpath] = list(view.read(relpath)), [text] if text else []
        added[relpath].append(block)
        texts[relpath].append(render_block(block))
    for relpath, file_blocks in added.items():
        plan.files[relpath] = FileEdit(tuple(file_blocks), "\n".join(texts[relpath]))
    return plan


def remember(core: Core, item: Capture, allow_secret: bool = False) -> RememberResult:
    block = make_block(core, item, allow_secret, overridable=True)
    core.sync_committed()
    digest = content_hash(block.content)
    existing = core.live_duplicate(digest)
    if existing is not None:
        if block.relations:
            _duplicate_of_correction(core, existing, block)
        return RememberResult(block_id=existing, status="duplicate")
    plan_trailers = _allowed([block]) if allow_secret else []

    def build(view: MemoryView) -> Plan:
        if block.relations:
            declared_corrections(core, view, [block])
        plan = _append_plan(core, view, [block], "remember", f"remember: {_preview(block.content)}")
        plan.trailers += plan_trailers
        return plan

    result = core.store.write(
        build, lambda written, parent: core.after_remember(written, parent, {digest: block.id})
    )
    assert result is not None
    core.spool(
        block.id,
        core.event(
            "birth", block.id, cls=block.cls, created=block.created, commit=result.commit_id
        ),
    )
    return RememberResult(block.id, "created", result.commit_id, result.paths[0])


def remember_many(
    core: Core,
    items: Sequence[Capture],
    allow_secret: bool = False,
    progress: Progress | None = None,
) -> BatchResult:
    """Many captures, one commit: a batch import costs one write, not one per block.

    Every item is validated before any is checked for duplicates, so a bad item writes nothing.
    ``progress`` hears ``("check", done, total)`` per item; the single write that follows does
    not report.
    """
    report = progress or silent
    blocks = [_numbered(n, core, item, allow_secret) for n, item in enumerate(items, 1)]
    core.sync(overlay=False)
    fresh: list[Block] = []
    duplicates: list[str] = []
    seen: dict[str, str] = {}
    report("check", 0, len(blocks))
    for done, block in enumerate(blocks, 1):
        h = content_hash(block.content)
        existing = seen.get(h) or core.live_duplicate(h)
        report("check", done, len(blocks))
        if existing is not None:
            if block.relations:
                _batch_duplicate(core, existing, block, set(seen.values()), done)
            duplicates.append(existing)
            continue
        seen[h] = block.id
        fresh.append(block)
    if not fresh:
        return BatchResult([], duplicates, None)
    subject = f"remember: {len(fresh)} blocks"
    allowed = _allowed(fresh) if allow_secret else []

    numbered = [(n, b) for n, b in enumerate(blocks, 1) if b.relations and b in fresh]

    def build(view: MemoryView) -> Plan:
        declared_corrections(core, view, [b for _, b in numbered], [n for n, _ in numbered])
        plan = _append_plan(core, view, fresh, "remember", subject)
        plan.trailers += allowed
        return plan

    result = core.store.write(build, core.after_write)
    assert result is not None
    core.record(
        {
            b.id: [core.event("birth", b.id, cls=b.cls, created=b.created, commit=result.commit_id)]
            for b in fresh
        },
        "elfmem: birth",
    )
    return BatchResult([b.id for b in fresh], duplicates, result.commit_id)


def _batch_duplicate(core: Core, existing: str, block: Block, batch: set[str], n: int) -> None:
    """``_duplicate_of_correction`` for record ``n``; a repeat of an earlier record of the batch
    has no file yet to hold the link, so it is refused the same way."""
    try:
        if existing in batch:
            raise InvalidInput(
                f"The text repeats an earlier record of the batch ({existing}), so its "
                "supersedes would be lost; nothing was written.",
                "Give `supersedes` on the first record with this text, or drop the repeat.",
            )
        _duplicate_of_correction(core, existing, block)
    except InvalidInput as exc:
        raise InvalidInput(f"Record {n}: {exc.message}", exc.recovery) from None


def _numbered(n: int, core: Core, item: Capture, allow_secret: bool) -> Block:
    """``make_block``, with a refusal naming its record in the batch (``Record N: …``, which
    the CLI turns into the line of its file)."""
    try:
        return make_block(core, item, allow_secret, overridable=True)
    except SecretRefused as exc:
        raise SecretRefused(f"Record {n}: {exc.message}", exc.recovery) from None
    except InvalidInput as exc:
        if type(exc) is not InvalidInput:  # a subclass with its own fields keeps them
            raise
        raise InvalidInput(f"Record {n}: {exc.message}", exc.recovery) from None


RECORD_SHAPE = (
    'Each record looks like {"content": "…", "cue": "…", "tags": ["a/b"], "category": '
    '"knowledge", "pinned": false, "when": "2023-05-08", "supersedes": ["<block id>"]}; only '
    "content is required."
)
_TEXT_FIELDS = ("cue", "category", "when")


def captures_from(
    records: Iterable[Mapping[str, Any]], places: Sequence[str] | None = None
) -> list[Capture]:
    """Batch input (JSONL objects) → captures, with the record's place in any error.

    ``places`` names each record for a person (``batch.jsonl line 3``); by default, its number.
    Every field's type is checked: a value of another type is refused, never coerced, so a
    ``"pinned": "false"`` cannot pin and a ``"cue": {…}`` is not stored as its Python text.
    """
    out = []
    for n, rec in enumerate(records, 1):
        place = places[n - 1] if places is not None else f"Record {n}"
        out.append(capture_from(rec, place))
    return out


def capture_from(rec: object, place: str) -> Capture:
    """One batch record, its fields checked by type; ``place`` names it in an error."""
    if not isinstance(rec, Mapping) or not isinstance(rec.get("content"), str):
        raise InvalidInput(f"{place}: expected an object with a string `content`.", RECORD_SHAPE)
    for name in _TEXT_FIELDS:
        _expect(place, name, rec.get(name), str)
    _expect(place, "pinned", rec.get("pinned"), bool)
    return Capture(
        content=rec["content"],
        cue=rec.get("cue") or "",
        tags=_record_tags(place, rec.get("tags")),
        category=rec.get("category") or "knowledge",
        pinned=rec.get("pinned") or False,
        when=rec.get("when") or "",
        supersedes=_record_ids(place, rec.get("supersedes")),
    )


def _record_ids(place: str, ids: object) -> tuple[str, ...]:
    """``supersedes``: one block id, or a list of them."""
    if ids is None:
        return ()
    if isinstance(ids, str):
        return (ids,) if ids.strip() else ()
    if isinstance(ids, list | tuple) and all(isinstance(t, str) for t in ids):
        return tuple(t for t in ids if t.strip())
    raise InvalidInput(
        f"{place}: field `supersedes` must be a block id or a list of them, not {_json_kind(ids)}.",
        RECORD_SHAPE,
    )


def _expect(place: str, name: str, value: object, kind: type) -> None:
    if value is not None and not isinstance(value, kind):
        raise InvalidInput(
            f"{place}: field `{name}` must be {_KIND_WORDS[kind]}, not {_json_kind(value)}.",
            RECORD_SHAPE,
        )


_KIND_WORDS = {str: "a string", bool: "true or false"}


def _json_kind(value: object) -> str:
    """The JSON name of a value's type; never the value, which may hold a credential."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return type(value).__name__


def _record_tags(place: str, tags: object) -> tuple[str, ...]:
    """A list of strings, or one string of tags separated by commas or spaces."""
    if tags is None:
        return ()
    if isinstance(tags, str):
        return tuple(tags.replace(",", " ").split())
    if isinstance(tags, list | tuple) and all(isinstance(t, str) for t in tags):
        return tuple(tags)
    found = _json_kind(tags)
    if isinstance(tags, list | tuple):
        found += " holding " + next(_json_kind(t) for t in tags if not isinstance(t, str))
    raise InvalidInput(
        f"{place}: field `tags` must be a list of strings (or one string of tags), not {found}.",
        RECORD_SHAPE,
    )


def locate(core: Core, view: MemoryView, block_id: str) -> tuple[str, Block]:
    """Where a block lives now; the index gives a hint, the tree has the final word."""
    row = queries.get_blocks(core.db(), [block_id]).get(block_id)
    duplicate = duplicate_error(core.db().conn, block_id)
    if duplicate is not None:
        raise duplicate
    found = view.find(block_id, row.path if row else None)
    if found is None:
        raise BlockNotFound(
            f"No block has id {block_id!r}.",
            "List ids with `elfmem ls` (or `elfmem ls --status archived` for forgotten ones).",
        )
    return found


def _replace(view: MemoryView, relpath: str, new: Block | None, block_id: str) -> FileEdit:
    out: list[Block] = []
    for b in view.read(relpath):
        if b.id != block_id:
            out.append(b)
        elif new is not None:
            out.append(new)
    return FileEdit(tuple(out))


def edit(
    core: Core,
    block_id: str,
    content: str | None = None,
    cue: str | None = None,
    tags: Sequence[str] | None = None,
    allow_secret: bool = False,
) -> ChangeResult:
    """Change content, cue or tags; the id survives. No LLM mediation."""
    if content is None and cue is None and tags is None:
        raise InvalidInput("Nothing to change.", "Pass new content, --cue or --tags.")
    core.sync()  # with the overlay: the block may live in a file a person has not committed
    changed_fields: list[str] = []
    limit = core.config.memory.max_content_bytes

    def build(view: MemoryView) -> Plan | None:
        relpath, block = locate(core, view, block_id)
        new = block
        if content is not None:
            text = check_text(content, cue or "", limit, allow_secret, overridable=True)
            new = new.with_changes(content=text)
        if cue is not None:
            check_text(new.content, cue, limit, allow_secret, overridable=True)
            new = new.with_changes(cue=cue.strip())
        if tags is not None:
            new = new.with_changes(tags=check_tags(tags, new.cls, allow_secret, overridable=True))
        changed_fields[:] = [
            f for f in ("content", "cue", "tags") if getattr(new, f) != getattr(block, f)
        ]
        if not changed_fields:
            return None
        validate_block(new)
        return Plan(
            op="edit",
            subject=f"edit: {_preview(new.content)}",
            block_ids=[block_id],
            files={relpath: _replace(view, relpath, new, block_id)},
            body="Changed: " + ", ".join(changed_fields),
            trailers=_allowed([new]) if allow_secret else [],
        )

    result = core.store.write(build, core.after_write)
    if result is None:
        return ChangeResult("edit", block_id, False, detail="already says that")
    core.spool(
        block_id, core.event("edit", block_id, fields=changed_fields, commit=result.commit_id)
    )
    return ChangeResult(
        "edit", block_id, True, result.commit_id, "changed " + ", ".join(changed_fields)
    )


def forget(core: Core, block_id: str) -> ChangeResult:
    """Move a block to ``archive/``: kept, not deleted, and back with ``undo``. Idempotent."""
    core.sync()  # with the overlay: the block may live in a file a person has not committed

    def build(view: MemoryView) -> Plan | None:
        relpath, block = locate(core, view, block_id)
        key = parse_bucket_path(relpath)
        if key is not None and key.status == "archived":
            return None
        target = view.append_target(
            "archived", block.cls, month_of(block.created), block_bytes(block)
        )
        plan = Plan(op="forget", subject=f"forget: {_preview(block.content)}", block_ids=[block_id])
        plan.files[relpath] = _replace(view, relpath, None, block_id)
        plan.files[target] = FileEdit(tuple([*view.read(target), block]))
        return plan

    result = core.store.write(build, core.after_write)
    if result is None:
        return ChangeResult("forget", block_id, False, detail="already archived")
    core.spool(block_id, core.event("forget", block_id, commit=result.commit_id))
    return ChangeResult("forget", block_id, True, result.commit_id, "moved to archive/")
