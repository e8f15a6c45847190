"""Look-alike review: the near-twin pairs dream linked and kept, and one commit to settle each.

Dream never archives a block that differs from its twin (``block/facts.py``); it keeps both and
writes a ``similar`` ledger edge (at or above the model's look-alike cut). Those pairs wait here
until someone decides:

- ``keep``: both stand as they are. The newer block's frontmatter gains ``lookalike-kept: <id>``
  (ids space-separated), so the decision is in the file, travels with a clone, and a commit.
- ``supersede``: the first block declares ``supersedes:: [[second]]`` in its file, as ``connect``
  would; ranking follows that relation, and both stay readable.
- ``merge``: the first block takes the second's content after its own (unless the second says
  nothing more) and declares ``derived-from`` it; the second is archived with ``duplicate-of``.

Each is one commit with an ``Elfmem-Op: review`` trailer, so ``elfmem undo`` reverts it and the
pair is listed again. A pair also stops being listed once either block leaves the active set or
a ``supersedes`` relation joins them. The differences are computed when listed, from the texts
as they are now, so an edit made since dream shows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from elfmem.block.correction import corrects
from elfmem.block.facts import compare, same_information
from elfmem.block.layout import month_of
from elfmem.block.model import Block, Relation
from elfmem.block.render import block_bytes
from elfmem.errors import BlockNotFound, InvalidInput
from elfmem.index import queries
from elfmem.index.queries import BlockRow
from elfmem.rhythms.capture import check_text, locate
from elfmem.rhythms.core import Core
from elfmem.rhythms.lookalike_edges import lookalike_cuts
from elfmem.rhythms.results import Result
from elfmem.rhythms.revisions import ledger_birth, order_in_time
from elfmem.store import FileEdit, MemoryView, Plan
from elfmem.store.notes import anchor_for_block

KEPT_KEY = "lookalike-kept"
ACTIONS = ("keep", "supersede", "merge")


@dataclass(frozen=True)
class LookalikesResult(Result):
    """Linked look-alike pairs not yet resolved, newest first."""

    pairs: list[dict[str, object]] = field(default_factory=list)
    """``{newer, older, cosine, differs, revision, newer_content, older_content}``: ``differs``
    lists ``{kind, left, right}`` (left = older text); ``revision`` is true when the newer block
    restates the older with another value (a candidate revision)."""

    @property
    def summary(self) -> str:
        if not self.pairs:
            return "No look-alikes waiting for review."
        lines = [f"{len(self.pairs)} look-alike pair(s) to review:"]
        for p in self.pairs:
            lines.append(f"- {p['newer']} (newer) vs {p['older']}  cosine {p['cosine']}")
            lines.append(f"    newer: {str(p['newer_content'])[:100]}")
            lines.append(f"    older: {str(p['older_content'])[:100]}")
            for d in p["differs"]:  # type: ignore[attr-defined]
                left, right = " ".join(d["left"]) or "∅", " ".join(d["right"]) or "∅"
                lines.append(f"    {d['kind']}: {left} → {right}")
        lines.append("Resolve one: `elfmem review resolve ID OTHER keep|supersede|merge`.")
        return "\n".join(lines)


@dataclass(frozen=True)
class ResolveResult(Result):
    action: str
    block_id: str
    other: str
    commit_id: str | None = None
    detail: str = ""

    @property
    def summary(self) -> str:
        where = f" in commit {self.commit_id[:12]}" if self.commit_id else ""
        return f"{self.action}: {self.block_id} / {self.other}{where}; {self.detail}."


def kept_ids(block: Block | BlockRow) -> set[str]:
    """The look-alikes a block was reviewed against and kept beside."""
    return {i for k, v in block.extra if k == KEPT_KEY for i in v.split()}


def _resolved(a: BlockRow, b: BlockRow) -> bool:
    declared = {(k, t) for k, t in a.relations} | {(k, t) for k, t in b.relations}
    return (
        ("supersedes", b.id) in declared
        or ("supersedes", a.id) in declared
        or b.id in kept_ids(a)
        or a.id in kept_ids(b)
    )


class _Ages:
    """Order within a pair: ``created`` (to the second), then, for two captured in the same
    second, the ``birth`` event's microsecond stamp in the ledger (read once per block)."""

    def __init__(self, core: Core, active: dict[str, BlockRow]) -> None:
        self.core, self.active = core, active
        self.births: dict[str, str] = {}

    def pair(self, key: frozenset[str]) -> tuple[BlockRow, BlockRow]:
        """(older, newer)."""
        a, b = (self.active[i] for i in sorted(key))
        if a.created == b.created:
            a_key, b_key = (a.created, self.birth(a.id)), (b.created, self.birth(b.id))
        else:
            a_key, b_key = (a.created, ""), (b.created, "")
        return (a, b) if a_key <= b_key else (b, a)

    def birth(self, block_id: str) -> str:
        if block_id not in self.births:
            lines = self.core.ledger.lines(anchor_for_block(block_id))
            stamps = [str(e.get("ts", "")) for e in map(_event, lines) if e.get("kind") == "birth"]
            self.births[block_id] = min(stamps, default="")
        return self.births[block_id]


def _event(line: str) -> dict[str, object]:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def lookalikes(core: Core) -> LookalikesResult:
    """Every active pair joined by a look-alike ``similar`` edge and not yet resolved."""
    core.sync()
    db = core.db()
    active = {r.id: r for r in queries.list_blocks(db, status="active")}
    found: dict[frozenset[str], float] = {}
    cut = lookalike_cuts(core).lookalike
    for block_id, folded in core.ledger.folded_many(active).items():
        for (target, relation), weight in folded.edges.items():
            if relation == "similar" and weight >= cut and target in active:
                key = frozenset((block_id, target))
                found[key] = max(found.get(key, 0.0), min(weight, 1.0))
    pairs = []
    ages = _Ages(core, active)
    birth = ledger_birth(lambda block_id: core.ledger.lines(anchor_for_block(block_id)))
    for key, cos in found.items():
        older, newer = ages.pair(key)
        if _resolved(newer, older):
            continue
        cmp = compare(older.content, newer.content)
        pairs.append(
            {
                "newer": newer.id,
                "older": older.id,
                "cosine": round(cos, 4),
                "differs": [d.as_dict() for d in cmp.differences],
                "revision": corrects(older.content, newer.content)
                and order_in_time(older.to_block(), newer.to_block(), birth) is not None,
                "newer_content": newer.content,
                "older_content": older.content,
                "_order": (newer.created, newer.id),
            }
        )
    pairs.sort(key=lambda p: p.pop("_order"), reverse=True)  # type: ignore[arg-type,return-value]
    return LookalikesResult(pairs)


def resolve(core: Core, block_id: str, other: str, action: str) -> ResolveResult:
    """Settle one pair in one commit: ``keep`` both, ``block_id`` ``supersede``s ``other``, or
    ``merge`` ``other`` into ``block_id``."""
    if action not in ACTIONS:
        raise InvalidInput(f"Unknown action {action!r}.", f"Use one of: {', '.join(ACTIONS)}.")
    if block_id == other:
        raise InvalidInput("A block is not a look-alike of itself.", "Pass two different ids.")
    core.sync()
    rows = queries.get_blocks(core.db(), [block_id, other])
    for i in (block_id, other):
        if i not in rows:
            raise BlockNotFound(
                f"No block has id {i!r}.", "List pairs with `elfmem review lookalikes`."
            )
        if rows[i].status != "active":
            raise InvalidInput(
                f"Block {i} is {rows[i].status}, not active: the pair is settled already.",
                "List pairs still open with `elfmem review lookalikes`.",
            )
    detail: list[str] = []
    older, newer = _Ages(core, rows).pair(frozenset((block_id, other)))

    def build(view: MemoryView) -> Plan | None:
        if action == "keep":
            return _keep_plan(core, view, newer, older, detail)
        if action == "supersede":
            return _supersede_plan(core, view, block_id, other, detail)
        return _merge_plan(core, view, block_id, other, detail)

    result = core.store.write(build, core.after_write)
    if result is None:
        return ResolveResult(action, block_id, other, None, detail[0] if detail else "no change")
    stamp = {"commit": result.commit_id}
    touched = {"keep": [newer.id], "supersede": [block_id], "merge": [block_id, other]}[action]
    lines = {
        i: [core.event("forget" if i == other and action == "merge" else "edit", i, **stamp)]
        for i in touched
    }
    core.record(lines, "elfmem: review")
    return ResolveResult(action, block_id, other, result.commit_id, "; ".join(detail))


def _rewrite(view: MemoryView, relpath: str, new: Block) -> FileEdit:
    return FileEdit(tuple(new if b.id == new.id else b for b in view.read(relpath)))


def _keep_plan(
    core: Core, view: MemoryView, newer: BlockRow, older: BlockRow, detail: list[str]
) -> Plan | None:
    relpath, block = locate(core, view, newer.id)
    kept = kept_ids(block)
    if older.id in kept:
        detail.append("already kept")
        return None
    value = " ".join(sorted({*kept, older.id}))
    extra = (*((k, v) for k, v in block.extra if k != KEPT_KEY), (KEPT_KEY, value))
    detail.append(f"both kept; {newer.id} records {KEPT_KEY}: {older.id}")
    return Plan(
        op="review",
        subject=f"review: keep look-alikes {newer.id} and {older.id}",
        block_ids=[newer.id],
        files={relpath: _rewrite(view, relpath, block.with_changes(extra=extra))},
    )


def _supersede_plan(
    core: Core, view: MemoryView, block_id: str, other: str, detail: list[str]
) -> Plan | None:
    relpath, block = locate(core, view, block_id)
    rel = Relation("supersedes", other)
    if rel in block.relations:
        detail.append("already supersedes it")
        return None
    detail.append(f"{block_id} supersedes {other} (declared in its file)")
    return Plan(
        op="review",
        subject=f"review: {block_id} supersedes {other}",
        block_ids=[block_id],
        files={
            relpath: _rewrite(view, relpath, block.with_changes(relations=(*block.relations, rel)))
        },
    )


def _merge_plan(core: Core, view: MemoryView, block_id: str, other: str, detail: list[str]) -> Plan:
    """``other``'s content joins ``block_id``'s (unless it adds nothing); ``other`` is archived."""
    keep_path, keep = locate(core, view, block_id)
    drop_path, drop = locate(core, view, other)
    relations = keep.relations
    content = keep.content
    if not same_information(keep.content, drop.content):
        content = check_text(
            f"{keep.content}\n\n{drop.content}",
            keep.cue,
            core.config.memory.max_content_bytes,
            allow_secret=True,  # both texts are in memory already; merging reveals nothing new
        )
        relations = (*relations, Relation("derived-from", other))
    tags = tuple(dict.fromkeys([*keep.tags, *drop.tags]))
    merged = keep.with_changes(content=content, tags=tags, relations=relations)
    archived = drop.with_changes(extra=(*drop.extra, ("duplicate-of", block_id)))
    target = view.append_target("archived", drop.cls, month_of(drop.created), block_bytes(drop))
    files: dict[str, list[Block]] = {}

    def file(path: str) -> list[Block]:
        return files.setdefault(path, list(view.read(path)))

    file(keep_path)[:] = [merged if b.id == block_id else b for b in file(keep_path)]
    file(drop_path)[:] = [b for b in file(drop_path) if b.id != other]
    file(target).append(archived)
    detail.append(f"{other} merged into {block_id} and archived")
    return Plan(
        op="review",
        subject=f"review: merge {other} into {block_id}",
        block_ids=[block_id, other],
        files={p: FileEdit(tuple(bs)) for p, bs in files.items()},
    )
