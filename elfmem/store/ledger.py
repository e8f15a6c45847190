"""Ledger events and their fold into a block's state.

Each event is one self-contained, uniquely identified JSON line. The fold uses only sums, counts,
maxima and set unions over the distinct lines, so any order of the same lines gives the same
state: the union of two clones' notes (``git notes merge -s cat_sort_uniq``) is the correct merge.
"""

from __future__ import annotations

import json
import math
import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from elfmem.clock import WALL, iso_micros
from elfmem.errors import InvalidInput

PRIOR = 0.5
"""Jeffreys prior: α and β both start here."""

REINFORCE_BAND = "reinforce"
NEUTRAL_BAND = "neutral"
PENALTY_BAND = "penalty"
BANDS = (REINFORCE_BAND, NEUTRAL_BAND, PENALTY_BAND)
EDGE_SOURCES = ("co_retrieval", "outcome", "similar", "related", "dream")

_NUM = "number"
_TEXT = "text"
KIND_FIELDS: dict[str, dict[str, str]] = {
    "birth": {},
    "edit": {},
    "forget": {},
    "undo": {"of": _TEXT},
    "outcome": {"signal": _NUM},
    "reinforce": {"at": _NUM},
    "use": {"at": _NUM},
    "edge": {"target": _TEXT, "relation": _TEXT, "weight": _NUM},
    "edge_remove": {"target": _TEXT, "relation": _TEXT},
    "cooccur": {"other": _TEXT, "session": _TEXT},
    "session": {"id": _TEXT, "start": _NUM},
    "promote": {},
    "duplicate": {"of": _TEXT},
    "analysis": {"alignment": _NUM},
    "prior": {"alpha": _NUM, "beta": _NUM},
}
"""Required fields per kind; other fields are optional and carried untouched."""

_CORE = ("ts", "eid", "agent", "kind")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def now_ts() -> str:
    """An event's ``ts`` from the wall clock (an open memory stamps from ``Core.clock``)."""
    return iso_micros(WALL)


def make_event(
    kind: str, *, agent: str, block: str | None = None, ts: str | None = None, **data: Any
) -> dict[str, Any]:
    """A new event with a fresh ``eid``, so two equal actions never collapse into one line."""
    if kind not in KIND_FIELDS:
        raise InvalidInput(
            f"unknown ledger event kind {kind!r}",
            f"Use one of: {', '.join(sorted(KIND_FIELDS))}.",
        )
    if not agent or any(ch.isspace() for ch in agent):
        raise InvalidInput(f"bad agent id {agent!r}", "Pass a non-empty agent id without spaces.")
    clash = set(data) & {*_CORE, "block"}
    if clash:
        raise InvalidInput(f"event data may not set {sorted(clash)}", "Pass them as keywords.")
    event: dict[str, Any] = {
        "ts": ts or now_ts(),
        "eid": f"{agent}-{time.time_ns():x}{secrets.token_hex(3)}",
        "agent": agent,
        "kind": kind,
    }
    if block is not None:
        event["block"] = block
    event.update(data)
    if not _valid(event):
        raise InvalidInput(f"incomplete {kind} event: {data}", f"Give {KIND_FIELDS[kind]}.")
    if kind == "edge" and data.get("source", "related") not in EDGE_SOURCES:
        raise InvalidInput(
            f"unknown edge source {data['source']!r}", f"Use one of: {', '.join(EDGE_SOURCES)}."
        )
    return event


def encode(event: Mapping[str, Any]) -> str:
    """Canonical form: equal events always encode to the same line."""
    return json.dumps(
        event, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def _reject_constant(name: str) -> None:
    raise ValueError(name)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)  # NaN/Infinity are not events


def decode(line: str) -> dict[str, Any] | None:
    """The event on ``line``, or None for a blank or malformed line."""
    if not line.strip():
        return None
    try:
        event = _DECODER.decode(line)
    except ValueError:
        return None
    if not isinstance(event, dict):
        return None
    ts = event.get("ts")
    if not (isinstance(ts, str) and isinstance(event.get("eid"), str)):
        return None
    if not (isinstance(event.get("agent"), str) and isinstance(event.get("kind"), str)):
        return None
    return event if ts_micros(ts) is not None else None


def ts_micros(ts: str) -> int | None:
    """An ISO-8601 timestamp as integer microseconds since the epoch (exact, comparable)."""
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return (moment - _EPOCH) // (datetime.resolution)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _valid(event: Mapping[str, Any]) -> bool:
    needs = KIND_FIELDS.get(event["kind"], {})
    for key, kind in needs.items():
        value = event.get(key)
        if not (_is_number(value) if kind == _NUM else isinstance(value, str) and value):
            return False
    if event["kind"] == "outcome":
        weight = event.get("weight", 1.0)
        if not (0.0 <= event["signal"] <= 1.0 and _is_number(weight) and weight >= 0):
            return False
    if event["kind"] == "session" and event.get("end") is not None:
        return _is_number(event["end"])
    return True


def band_of(signal: float) -> str:
    """≥ 0.8 reinforces, < 0.2 penalises, between is a neutral dead-band (docs/ranking.md)."""
    if signal >= 0.8:
        return REINFORCE_BAND
    return PENALTY_BAND if signal < 0.2 else NEUTRAL_BAND


def distinct_events(lines: Iterable[str]) -> tuple[list[dict[str, Any]], int]:
    """Valid events, one per ``eid`` (the smallest line wins, in any order), sorted; and the
    number of distinct malformed lines."""
    by_eid: dict[str, str] = {}
    events: dict[str, dict[str, Any]] = {}
    malformed = 0
    for line in set(lines):
        event = decode(line)
        if event is None or not _valid(event):
            malformed += bool(line.strip())
            continue
        eid = event["eid"]
        if eid not in by_eid or line < by_eid[eid]:
            by_eid[eid], events[eid] = line, event
    return [events[eid] for eid in sorted(events, key=by_eid.__getitem__)], malformed


@dataclass(frozen=True, slots=True)
class BlockState:
    """What a block's ledger note says about it, independent of line order."""

    alpha: float = PRIOR
    beta: float = PRIOR
    outcomes: int = 0
    penalties: int = 0
    reinforcements: int = 0
    uses: int = 0
    edits: int = 0
    last_use: float | None = None
    edges: Mapping[tuple[str, str], float] = field(default_factory=dict)
    cooccur_sessions: Mapping[str, frozenset[str]] = field(default_factory=dict)
    events: int = 0
    born: bool = False
    forgotten: bool = False
    malformed: int = 0
    alignment: float | None = None
    """The latest well-formed analysis's alignment with SELF; None if never judged."""
    summary: str = ""
    analyses: int = 0
    """Analysis events of any kind: dream's first judgement and every rescore after it."""
    last_analysis: float | None = None
    """Wall-clock time (epoch seconds) of the latest analysis, well-formed or not."""
    since_revision: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    """Per newer block with a live ``revised_by`` edge here: the outcome weight (confirming,
    refuting) stamped at or after that edge, what outcomes said about this block once the newer
    one had claimed to correct it."""
    outcome_times: tuple[tuple[int, float, float], ...] = ()
    """Each outcome as (microseconds since the epoch, confirming weight, refuting weight), in
    time order: what ``outcomes_since`` counts from any moment, such as a declared correction's."""

    @property
    def confidence(self) -> float:
        """The Beta posterior mean."""
        return self.alpha / (self.alpha + self.beta)


def fold(lines: Iterable[str]) -> BlockState:
    """Fold one block's note. Events whose ``commit`` was undone are ignored.

    A ``prior`` event (an import carrying another system's posterior) replaces the Jeffreys
    prior; if there are several, the latest by (time, eid) wins, so the fold stays independent
    of line order."""
    events, malformed = distinct_events(lines)
    undone = {e["of"] for e in events if e["kind"] == "undo"}
    live = [e for e in events if e["kind"] != "undo" and not _cancelled(e, undone)]
    kinds = [e["kind"] for e in live]
    outcomes = [e for e in live if e["kind"] == "outcome"]
    bands = [e.get("band") if e.get("band") in BANDS else band_of(e["signal"]) for e in outcomes]
    uses = [e["at"] for e in live if e["kind"] in ("reinforce", "use")]
    uses += [
        e["at"]
        for e, b in zip(outcomes, bands, strict=True)
        if b == REINFORCE_BAND and _is_number(e.get("at"))
    ]
    analyses = [e for e in live if e["kind"] == "analysis"]
    judged = [e for e in analyses if e.get("malformed") is not True]
    latest = max(judged, key=_stamp, default=None)
    priors = [e for e in live if e["kind"] == "prior" and e["alpha"] > 0 and e["beta"] > 0]
    prior = max(priors, key=_stamp, default=None)
    alpha0 = float(prior["alpha"]) if prior is not None else PRIOR
    beta0 = float(prior["beta"]) if prior is not None else PRIOR
    edges = _fold_edges(live)
    sessions: dict[str, set[str]] = {}
    for e in live:
        if e["kind"] == "cooccur":
            sessions.setdefault(e["other"], set()).add(e["session"])
    return BlockState(
        alpha=alpha0 + math.fsum(e.get("weight", 1.0) * e["signal"] for e in outcomes),
        beta=beta0 + math.fsum(e.get("weight", 1.0) * (1.0 - e["signal"]) for e in outcomes),
        outcomes=len(outcomes),
        penalties=bands.count(PENALTY_BAND),
        reinforcements=kinds.count("reinforce"),
        uses=kinds.count("use"),
        edits=kinds.count("edit"),
        last_use=max(uses, default=None),
        edges=edges,
        cooccur_sessions={other: frozenset(ids) for other, ids in sorted(sessions.items())},
        events=len(events),
        born="birth" in kinds,
        forgotten="forget" in kinds,
        malformed=malformed,
        alignment=float(latest["alignment"]) if latest is not None else None,
        summary=str(latest.get("summary") or "") if latest is not None else "",
        analyses=len(analyses),
        last_analysis=max((_stamp(e)[0] / 1e6 for e in analyses), default=None),
        since_revision=_since_revision(live, outcomes, edges),
        outcome_times=tuple(sorted(_weighed(outcomes))),
    )


def _weighed(outcomes: Iterable[Mapping[str, Any]]) -> Iterable[tuple[int, float, float]]:
    for e in outcomes:
        weight = e.get("weight", 1.0)
        yield ts_micros(e["ts"]) or 0, weight * e["signal"], weight * (1.0 - e["signal"])


def outcomes_since(state: BlockState, micros: int) -> tuple[float, float]:
    """(confirming, refuting) outcome weight stamped at or after ``micros``."""
    later = [(c, r) for t, c, r in state.outcome_times if t >= micros]
    return math.fsum(c for c, _ in later), math.fsum(r for _, r in later)


def _since_revision(
    live: Iterable[Mapping[str, Any]],
    outcomes: Iterable[Mapping[str, Any]],
    edges: Mapping[tuple[str, str], float],
) -> dict[str, tuple[float, float]]:
    """Per block that revises this one: (α, β) increments of the outcomes stamped at or after
    its first live ``revised_by`` edge here.

    Minima and sums over distinct events: the same in any order, like the rest of the fold.
    """
    alive = {t for (t, relation), w in edges.items() if relation == "revised_by" and w > 0}
    if not alive:
        return {}
    revisions = [e for e in live if e.get("relation") == "revised_by" and e["target"] in alive]
    cut: dict[str, int] = {}
    for e in revisions:
        if e["kind"] == "edge_remove":
            cut[e["target"]] = max(cut.get(e["target"], 0), ts_micros(e["ts"]) or 0)
    start: dict[str, int] = {}
    for e in revisions:
        micros = ts_micros(e["ts"]) or 0
        if e["kind"] == "edge" and micros > cut.get(e["target"], -1):
            start[e["target"]] = min(start.get(e["target"], micros), micros)
    stamped = [(ts_micros(e["ts"]) or 0, e.get("weight", 1.0), e["signal"]) for e in outcomes]
    return {
        newer: (
            math.fsum(w * s for t, w, s in stamped if t >= since),
            math.fsum(w * (1.0 - s) for t, w, s in stamped if t >= since),
        )
        for newer, since in sorted(start.items())
    }


def _stamp(event: Mapping[str, Any]) -> tuple[int, str]:
    """A total order on events: time, then ``eid``; so "the latest" is the same in any clone."""
    return ts_micros(event["ts"]) or 0, event["eid"]


def _cancelled(event: Mapping[str, Any], undone: set[str]) -> bool:
    commit = event.get("commit")
    return isinstance(commit, str) and commit in undone


def _fold_edges(events: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], float]:
    """Sum of weight deltas per (target, relation), after the latest removal of that edge.

    A removal cancels only the deltas stamped at or before it, so it commutes with everything.
    """
    removed: dict[tuple[str, str], int] = {}
    deltas: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for e in events:
        if e["kind"] not in ("edge", "edge_remove"):
            continue
        key: tuple[str, str] = (e["target"], e["relation"])
        micros = ts_micros(e["ts"]) or 0
        if e["kind"] == "edge_remove":
            removed[key] = max(removed.get(key, micros), micros)
        else:
            deltas.setdefault(key, []).append((micros, float(e["weight"])))
    edges: dict[tuple[str, str], float] = {}
    for key in sorted(deltas):
        cut = removed.get(key)
        kept = [w for micros, w in deltas[key] if cut is None or micros > cut]
        if kept:
            edges[key] = math.fsum(kept)
    return edges


def session_event(
    session_id: str, *, agent: str, start: float, end: float | None = None, ts: str | None = None
) -> dict[str, Any]:
    """A clock event: the session's wall-clock start and, once closed, its end (epoch seconds)."""
    return make_event("session", agent=agent, ts=ts, id=session_id, start=start, end=end)


def fold_clock(lines: Iterable[str]) -> list[tuple[float, float]]:
    """The memory's active time as sorted, disjoint (start, end) intervals in epoch seconds.

    A session still open ends at the latest timestamp recorded for it. Clones' clocks merge by
    union, so every clone measures decay on the same clock.
    """
    starts: dict[str, float] = {}
    ends: dict[str, float] = {}
    seen: dict[str, float] = {}
    for e in distinct_events(lines)[0]:
        if e["kind"] != "session":
            continue
        sid, start = e["id"], float(e["start"])
        starts[sid] = min(starts.get(sid, start), start)
        stamp = (ts_micros(e["ts"]) or 0) / 1e6
        seen[sid] = max(seen.get(sid, stamp), stamp)
        if e.get("end") is not None:
            ends[sid] = max(ends.get(sid, float(e["end"])), float(e["end"]))
    spans = sorted((start, max(start, ends.get(sid, seen[sid]))) for sid, start in starts.items())
    merged: list[tuple[float, float]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def active_hours(intervals: Iterable[tuple[float, float]], until: float | None = None) -> float:
    """Active time in hours up to ``until`` (epoch seconds; default: all recorded time)."""
    limit = math.inf if until is None else until
    return math.fsum(max(0.0, min(end, limit) - start) for start, end in intervals) / 3600.0
