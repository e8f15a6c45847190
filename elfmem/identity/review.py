"""Constitutional review: which principles what the agent has learned contradicts or leaves bare.

Review reads and proposes; it never writes (accepting is ``amendments.accept``). The evidence is
active knowledge only: declared relations into a principle (``contradicts`` against it;
``supports``, ``refines``, ``derived-from``, ``requires`` for it), the blocks that bear on it by
meaning (vector search over the index), and among those the ones dream judged out of line with
SELF. Knowledge another block ``supersedes`` no longer counts, since it was revised. Task
outcomes are left out on purpose: they are evidence about tasks, not principles, so no outcome
can move a proposal. ``self.md`` is reported on, never changed: its statements nothing bears on,
and how many amendments landed since a person last edited it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from elfmem.adapters.llm import LLM
from elfmem.block.text import preview
from elfmem.errors import InvalidInput
from elfmem.identity.amendments import CONSTITUTIONAL, history, proposal_id
from elfmem.index import queries, vector_store
from elfmem.index.calibration import model_cuts
from elfmem.rhythms.core import Core
from elfmem.rhythms.results import TOKEN_KEYS, Result

BEARING_COSINE = 0.6
"""Cosine at or above which a block bears on a principle. The embedded static model puts loosely
related English sentences near 0.5 and one on the same subject near 0.7 (a handful of sentences
looked at, not a tuned figure); another model's is moved to its scale (``index/calibration.py``)."""
LOW_ALIGNMENT = 0.3
"""A bearing block dream judged below this against SELF counts as evidence against."""
BEARING_LIMIT = 8
SUPPORTING = ("supports", "refines", "derived-from", "requires")
_SYSTEM = (
    "You amend an agent's constitutional principle so it agrees with what the agent has learned. "
    "Answer with the amended principle only: one short paragraph, first person, no preamble."
)


@dataclass(frozen=True)
class ReviewResult(Result):
    principles: list[dict[str, Any]] = field(default_factory=list)
    """Each constitutional block: ``{id, content, status, contradicted_by, supported_by,
    bearing}``; status ``contradicted``, ``unsupported`` or ``holds``."""
    proposals: list[dict[str, Any]] = field(default_factory=list)
    """``{id, block_id, kind, reason, evidence, text, source}``: pass ``id`` to
    ``review accept --proposal``; ``text`` is empty when no LLM or host wrote one."""
    self_md: list[str] = field(default_factory=list)
    """Suggestions for the person who owns ``self.md`` (elfmem never writes it)."""
    note: str = ""
    """Who wrote the proposal text: the LLM, the host agent, or nobody (deterministic)."""
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_KEYS, 0))
    """LLM tokens this review used: ``{input, output, cache_read, cache_creation, calls}``."""

    @property
    def summary(self) -> str:
        drift = [p for p in self.principles if p["status"] != "holds"]
        lines = [
            f"review: {len(self.principles)} principles, {len(drift)} drifted, "
            f"{len(self.proposals)} proposals ({self.note or 'deterministic'}); nothing changed"
        ]
        for p in self.proposals:
            lines.append(f"  {p['id']}  {p['kind']}: {p['reason']}")
            if p["text"]:
                lines.append(f"    proposed: {preview(p['text'])}")
        lines += [f"  self.md: {s}" for s in self.self_md]
        return "\n".join(lines)


def _declared(rows: list[queries.BlockRow]) -> tuple[dict[str, set[str]], set[str]]:
    """Declared relations into each target (``kind:target`` → sources) and superseded ids."""
    into: dict[str, set[str]] = {}
    for row in rows:
        for kind, target in row.relations:
            into.setdefault(f"{kind}:{target}", set()).add(row.id)
    superseded = {k.split(":", 1)[1] for k in into if k.startswith("supersedes:")}
    return into, superseded


def _bearing(core: Core, text: str, allowed: set[str]) -> list[tuple[str, float]]:
    if not allowed:
        return []
    vec = np.asarray(core.embedder.embed([text])[0], dtype=np.float32)
    found = vector_store(core.db()).dense(vec, BEARING_LIMIT, allowed, ("active",))
    cut = model_cuts(core.embedder).scaled(BEARING_COSINE)
    return [(b, round(s, 4)) for b, s in found if s >= cut]


def _assess(core: Core, row: queries.BlockRow, ctx: _Context) -> dict[str, Any]:
    into = ctx.into
    against = set(into.get(f"contradicts:{row.id}", set()))
    against |= {t for k, t in row.relations if k == "contradicts"}
    support = set().union(*(into.get(f"{k}:{row.id}", set()) for k in SUPPORTING))
    bearing = _bearing(core, row.content, ctx.knowledge)
    folded = core.ledger.folded_many([b for b, _ in bearing])
    against |= {
        b for b, _ in bearing if (a := folded[b].alignment) is not None and a < LOW_ALIGNMENT
    }
    against &= ctx.knowledge
    support = (support & ctx.knowledge) - against
    status = "contradicted" if against else "holds" if support or bearing else "unsupported"
    return {
        "id": row.id,
        "content": row.content,
        "status": status,
        "contradicted_by": sorted(against),
        "supported_by": sorted(support),
        "bearing": [{"id": b, "cosine": s} for b, s in bearing],
    }


@dataclass(frozen=True)
class _Context:
    into: dict[str, set[str]]
    knowledge: set[str]
    """Active, non-constitutional blocks nothing supersedes: the evidence review may use."""
    contents: dict[str, str]


def _context(core: Core) -> tuple[list[queries.BlockRow], _Context]:
    core.sync(vectors=True)
    active = queries.list_blocks(core.db(), status="active")
    into, superseded = _declared(active)
    principles = [r for r in active if CONSTITUTIONAL in r.tags]
    knowledge = {r.id for r in active if CONSTITUTIONAL not in r.tags} - superseded
    contents = {r.id: r.content for r in active}
    return principles, _Context(into, knowledge, contents)


def _proposal(p: dict[str, Any], text: str, source: str, reason: str = "") -> dict[str, Any]:
    evidence = p["contradicted_by"] if p["status"] == "contradicted" else []
    if not reason:
        reason = (
            f"{len(evidence)} active block(s) contradict it: {', '.join(evidence)}"
            if evidence
            else "no active knowledge bears on it or supports it"
            if p["status"] == "unsupported"
            else "the host agent proposed a change"
        )
    return {
        "id": proposal_id(p["id"], p["content"]),
        "block_id": p["id"],
        "kind": "amend" if p["status"] == "contradicted" or text else "recheck",
        "reason": reason,
        "evidence": evidence,
        "text": text.strip(),
        "source": source,
    }


def _llm_text(llm: LLM, p: dict[str, Any], contents: Mapping[str, str]) -> str:
    evidence = p["contradicted_by"] or [b["id"] for b in p["bearing"]]
    lines = "\n".join(f"- {contents[b]}" for b in evidence if b in contents) or "- (none)"
    prompt = (
        f"Principle:\n{p['content']}\n\nWhat the agent has learned that bears on it "
        f"({p['status']}):\n{lines}\n\nWrite the amended principle."
    )
    return llm.complete(_SYSTEM, prompt, max_tokens=400, temperature=0.0).strip()


def _host(hosted: Mapping[str, Any], known: set[str]) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for block_id, entry in hosted.items():
        if block_id not in known:
            raise InvalidInput(
                f"host analysis names {block_id}, which is not an active constitutional block.",
                "Key host analyses by the block ids `elfmem review --json` lists.",
            )
        text = entry.get("text") if isinstance(entry, Mapping) else None
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput(
                f"host analysis for {block_id} has no text.",
                'Give {"<block id>": {"text": "the amended principle", "reason": "why"}}.',
            )
        out[block_id] = (text, str(entry.get("reason") or ""))
    return out


def _self_md(core: Core, ctx: _Context) -> list[str]:
    text = core.store.read_self()
    statements = [
        s.strip().removeprefix("- ").strip()
        for s in text.splitlines()
        if s.strip().startswith("- ")
    ]
    out = [
        f"nothing learned bears on: {preview(s)}"
        for s in statements
        if not _bearing(core, s, ctx.knowledge)
    ]
    since = 0
    for entry in history(core, 10_000).entries:
        if entry["kind"] == "self.md":
            break
        since += entry["kind"] == "amend" and entry["reverted_by"] is None
    if since:
        out.append(
            f"{since} amendment(s) to constitutional blocks since self.md last changed; "
            "its owner may want to reflect them (elfmem never writes self.md)"
        )
    return out


def review(
    core: Core, llm: LLM | None, host_analyses: Mapping[str, Any] | None = None
) -> ReviewResult:
    principles, ctx = _context(core)
    assessed = [_assess(core, r, ctx) for r in principles]
    hosted = _host(host_analyses or {}, {r.id for r in principles})
    proposals = []
    for p in assessed:
        if p["id"] in hosted:
            text, why = hosted[p["id"]]
            proposals.append(_proposal(p, text, "host", why))
        elif p["status"] != "holds":
            text = _llm_text(llm, p, ctx.contents) if llm is not None else ""
            proposals.append(_proposal(p, text, llm.identity if llm else "deterministic"))
    note = (
        "proposal text by the host agent"
        if host_analyses is not None
        else f"proposal text by {llm.identity}"
        if llm is not None
        else "deterministic drift report: no LLM, proposal text left to you"
    )
    return ReviewResult(assessed, proposals, _self_md(core, ctx), note)
