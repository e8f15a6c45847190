"""Theory of Mind: blocks that model another agent, person or system, kept honest by predictions.

A mind is an active block of category ``mind`` tagged ``mind/<name>`` (the tag the simulate frame
guarantees a slot to). A prediction is an active block of category ``prediction`` tagged
``prediction/<name>`` and ``prediction/open``, whose declared relation ``derived-from:: [[mind]]``
says it follows from the model. Closing it retags it ``prediction/hit`` or ``prediction/miss`` in
one commit and records an ``outcome`` event (signal 1 or 0, weight 1) on the mind block carrying
that commit, so the mind's confidence is the Beta posterior with the Jeffreys prior:
(0.5 + hits) / (1 + hits + misses). The event's band is ``neutral``: a prediction calibrates the
model's confidence and leaves its decay alone. ``undo`` of the closing commit cancels the event.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from elfmem.block.model import Block, Relation, is_valid_tag, new_block_id, now_iso
from elfmem.block.text import preview
from elfmem.errors import BlockNotFound, InvalidInput
from elfmem.identity.writes import add_active, replace_in_place
from elfmem.index import queries
from elfmem.rhythms.capture import check_tags, check_text
from elfmem.rhythms.core import Core
from elfmem.rhythms.results import Result
from elfmem.store.ledger import NEUTRAL_BAND

LINK = "derived-from"
"""The declared relation from a prediction to its mind: the prediction follows from the model."""
OPEN, HIT, MISS = "prediction/open", "prediction/hit", "prediction/miss"
_STATES = {OPEN: "open", HIT: "hit", MISS: "miss"}


@dataclass(frozen=True)
class MindResult(Result):
    op: str
    """``mind-create``, ``mind-predict`` or ``mind-outcome``."""
    block_id: str
    """The mind (create) or the prediction (predict, outcome)."""
    mind_id: str
    name: str
    """The mind's name: its tag is ``mind/<name>``."""
    commit_id: str | None = None
    outcome: str = ""
    """For ``mind-outcome``: ``hit`` or ``miss``; empty otherwise."""
    confidence: float | None = None
    """For ``mind-outcome``: the mind's confidence after this outcome."""

    @property
    def summary(self) -> str:
        what = f" ({self.outcome}; confidence {self.confidence:.3f})" if self.outcome else ""
        return f"{self.op}: {self.block_id} for mind {self.name}{what}"


@dataclass(frozen=True)
class MindStats(Result):
    """One mind block with its prediction record."""

    id: str
    name: str
    content: str
    hits: int
    misses: int
    open: int
    """Predictions not yet closed."""
    confidence: float
    """The mind block's Beta posterior mean: (0.5 + hits) / (1 + hits + misses)."""
    predictions: list[dict[str, str]] = field(default_factory=list)
    """``{id, content, state}`` (state ``open``, ``hit`` or ``miss``); filled by ``mind show``."""

    @property
    def summary(self) -> str:
        closed = self.hits + self.misses
        head = (
            f"{self.name} ({self.id}): {self.hits}/{closed} hits, {self.open} open, "
            f"confidence {self.confidence:.3f} - {preview(self.content)}"
        )
        lines = [f"  [{p['state']}] {p['id']}  {preview(p['content'])}" for p in self.predictions]
        return "\n".join([head, *lines])


@dataclass(frozen=True)
class MindList(Result):
    minds: list[MindStats]
    """Every active mind, oldest first, with its hit/miss counts and confidence."""

    @property
    def summary(self) -> str:
        return "\n".join(m.summary for m in self.minds) or "(no minds)"


def _check_name(name: str) -> str:
    clean = name.strip()
    if not clean or "/" in clean or "%" in clean or not is_valid_tag(f"mind/{clean}"):
        raise InvalidInput(
            f"Invalid mind name {name!r}.",
            "Name a mind with letters, digits, _ . - (no spaces or slashes), e.g. alice.",
        )
    return clean


def _minds(core: Core) -> list[queries.BlockRow]:
    core.sync()
    return queries.list_blocks(core.db(), status="active", cls="mind", tag_pattern="mind/%")


def _name_of(row: queries.BlockRow) -> str:
    return next((t.removeprefix("mind/") for t in row.tags if t.startswith("mind/")), row.id)


def find_mind(core: Core, mind: str) -> queries.BlockRow:
    """A mind by name or block id."""
    for row in _minds(core):
        if mind in (row.id, _name_of(row)):
            return row
    raise BlockNotFound(
        f"No active mind is called or has id {mind!r}.",
        "List minds with `elfmem mind list`; create one with `elfmem mind create NAME TEXT`.",
    )


def _block(core: Core, content: str, cue: str, tags: list[str], cls: str) -> Block:
    text = check_text(content, cue, core.config.memory.max_content_bytes, False)
    return Block(
        id=new_block_id(),
        content=text,
        cls=cls,
        tags=check_tags(tags, cls),
        created=now_iso(),
        cue=cue.strip(),
    )


def create(core: Core, name: str, content: str, cue: str = "") -> MindResult:
    name = _check_name(name)
    if any(_name_of(r) == name for r in _minds(core)):
        raise InvalidInput(
            f"A mind called {name!r} exists already.",
            f"Edit it with `elfmem edit`, or see it with `elfmem mind show {name}`.",
        )
    block = _block(core, content, cue or f"reasoning about how {name} will act", [], "mind")
    block = block.with_changes(tags=(f"mind/{name}",))
    result = add_active(core, [block], "mind-create", f"mind create: {name}")
    return MindResult("mind-create", block.id, block.id, name, result.commit_id)


def predict(core: Core, mind: str, content: str, cue: str = "") -> MindResult:
    row = find_mind(core, mind)
    name = _name_of(row)
    block = _block(core, content, cue, [f"prediction/{name}", OPEN], "prediction")
    block = block.with_changes(relations=(Relation(LINK, row.id),))
    result = add_active(
        core,
        [block],
        "mind-predict",
        f"mind predict: {preview(block.content)}",
        trailers=[("Elfmem-Mind", row.id)],
        block_ids=[row.id],
    )
    return MindResult("mind-predict", block.id, row.id, name, result.commit_id)


def _prediction(core: Core, prediction_id: str) -> tuple[queries.BlockRow, queries.BlockRow]:
    core.sync()
    row = queries.get_blocks(core.db(), [prediction_id]).get(prediction_id)
    mind_id = next((t for k, t in row.relations if k == LINK), None) if row else None
    if row is None or row.cls != "prediction" or mind_id is None:
        raise BlockNotFound(
            f"No prediction has id {prediction_id!r}.",
            "See a mind's predictions with `elfmem mind show NAME`.",
        )
    mind = queries.get_blocks(core.db(), [mind_id]).get(mind_id)
    if mind is None or mind.status != "active":
        raise BlockNotFound(
            f"Prediction {prediction_id} belongs to mind {mind_id}, which is not active.",
            "Bring the mind back with `elfmem undo`, or close predictions of active minds only.",
        )
    return row, mind


def outcome(core: Core, prediction_id: str, hit: bool, note: str = "") -> MindResult:
    """Close a prediction as a hit or a miss: one commit, and one outcome event on its mind."""
    row, mind = _prediction(core, prediction_id)
    if OPEN not in row.tags:
        state = next((_STATES[t] for t in row.tags if t in _STATES), "closed")
        raise InvalidInput(
            f"Prediction {prediction_id} is already closed ({state}).",
            "Undo the commit that closed it (`elfmem undo`) to record it again.",
        )
    word = "hit" if hit else "miss"
    tags = tuple((HIT if hit else MISS) if t == OPEN else t for t in row.tags)
    new = row.to_block().with_changes(tags=tags)
    result = replace_in_place(
        core,
        {row.id: new},
        "mind-outcome",
        f"mind outcome: {word} for {_name_of(mind)}: {preview(row.content)}",
        body=note.strip(),
        trailers=[("Elfmem-Mind", mind.id), ("Elfmem-Outcome", word)],
        block_ids=[mind.id],
    )
    assert result is not None  # the tags changed
    event = core.event(
        "outcome",
        mind.id,
        signal=1.0 if hit else 0.0,
        weight=1.0,
        source=f"prediction:{row.id}",
        band=NEUTRAL_BAND,
        at=core.ledger.now_hours(),
        commit=result.commit_id,
    )
    core.record({mind.id: [event]}, f"elfmem: mind outcome {word}")
    after = core.ledger.folded(mind.id).confidence
    return MindResult(
        "mind-outcome", row.id, mind.id, _name_of(mind), result.commit_id, word, round(after, 6)
    )


def _stats(core: Core, mind: queries.BlockRow, with_predictions: bool) -> MindStats:
    rows = [
        r
        for r in queries.list_blocks(
            core.db(), status="active", cls="prediction", tag_pattern=f"prediction/{_name_of(mind)}"
        )
        if (LINK, mind.id) in r.relations
    ]
    states = [next((_STATES[t] for t in r.tags if t in _STATES), "open") for r in rows]
    folded = core.ledger.folded(mind.id)
    listed = [
        {"id": r.id, "content": r.content, "state": s}
        for r, s in zip(rows, states, strict=True)
        if with_predictions
    ]
    return MindStats(
        id=mind.id,
        name=_name_of(mind),
        content=mind.content,
        hits=states.count("hit"),
        misses=states.count("miss"),
        open=states.count("open"),
        confidence=round(folded.confidence, 6),
        predictions=listed,
    )


def list_minds(core: Core) -> MindList:
    return MindList([_stats(core, m, False) for m in _minds(core)])


def show(core: Core, mind: str) -> MindStats:
    return _stats(core, find_mind(core, mind), True)
