"""outcome(): ground truth folded into each block's Beta posterior (docs/ranking.md).

Signals at or above 0.8 raise confidence and reset the decay clock; those below 0.2 lower it and
double the block's decay rate (capped); in between only confidence moves. Inbox blocks and the
constitution are skipped, with the reason, and nothing is recorded for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from elfmem.block import secrets
from elfmem.errors import BlockNotFound, InvalidInput
from elfmem.index import queries
from elfmem.retrieval.confidence import band, check_signal, check_weight
from elfmem.rhythms.core import Core
from elfmem.rhythms.results import Result


@dataclass(frozen=True)
class OutcomeResult(Result):
    signal: float
    """The outcome recorded, in [0, 1]: 1 means the blocks were right, 0 that they were wrong."""
    band: str
    """``reinforce`` (signal ≥ 0.8), ``penalise`` (< 0.2) or ``neutral`` (in between)."""
    updated: list[dict[str, object]] = field(default_factory=list)
    """Blocks it was recorded for: ``{id, confidence_before, confidence_after}``."""
    skipped: list[dict[str, str]] = field(default_factory=list)
    """Skipped, as ``{id, reason}``: ``pending_inbox``, ``archived`` or ``constitutional``."""
    recovery: str = ""
    """What records a skipped outcome after all (a block still in the inbox: dream, then send
    it again); empty when nothing was skipped for a reason that can be fixed."""

    @property
    def summary(self) -> str:
        return (
            f"outcome {self.signal:.2f} ({self.band}): {len(self.updated)} updated, "
            f"{len(self.skipped)} skipped"
            + "".join(
                f"; {s['id']}: {_REASONS.get(s['reason'], s['reason'])}" for s in self.skipped
            )
        )


_REASONS = {"pending_inbox": "still in the inbox", "constitutional": "constitutional (pinned)"}
INBOX_RECOVERY = (
    "An outcome on a block still in the inbox is not recorded: run `elfmem dream` (API: "
    "dream) to consolidate it, then send the outcome again."
)


def outcome(
    core: Core,
    block_ids: Sequence[str],
    signal: float,
    weight: float = 1.0,
    source: str = "",
    allow_constitutional: bool = False,
) -> OutcomeResult:
    signal = check_signal(signal)
    weight = check_weight(weight)
    _check_source(source)
    ids = list(dict.fromkeys(block_ids))
    if not ids:
        raise InvalidInput(
            "No block ids given.", "Pass the ids the result depended on, e.g. from recall."
        )
    core.require_ledger()
    core.sync()
    rows = queries.get_blocks(core.db(), ids)
    unknown = [b for b in ids if b not in rows]
    if unknown:
        raise BlockNotFound(
            f"Unknown block id(s): {', '.join(unknown)}; nothing was recorded.",
            "Use ids from a recall result or `elfmem ls`.",
        )
    which = band(signal)
    now = core.ledger.now_hours()
    updated: list[dict[str, object]] = []
    skipped: list[dict[str, str]] = []
    lines: dict[str, list[str]] = {}
    for block_id in ids:
        row = rows[block_id]
        if row.status == "inbox":
            skipped.append({"id": block_id, "reason": "pending_inbox"})
            continue
        if row.status == "archived":
            skipped.append({"id": block_id, "reason": "archived"})
            continue
        if "self/constitutional" in row.tags and not allow_constitutional:
            skipped.append({"id": block_id, "reason": "constitutional"})
            continue
        lines[block_id] = [
            core.event(
                "outcome",
                block_id,
                signal=signal,
                weight=weight,
                source=source,
                band=_band_name(which),
                at=now,
            )
        ]
        before = core.ledger.folded(block_id)
        a = before.alpha + weight * signal
        b = before.beta + weight * (1 - signal)
        updated.append(
            {
                "id": block_id,
                "confidence_before": round(before.confidence, 4),
                "confidence_after": round(a / (a + b), 4),
            }
        )
    if lines:
        core.record(lines, f"elfmem: outcome {signal:.2f} from {source or 'caller'}")
    inbox = any(s["reason"] == "pending_inbox" for s in skipped)
    return OutcomeResult(signal, which, updated, skipped, INBOX_RECOVERY if inbox else "")


def _check_source(source: str) -> None:
    """The source is written into ``refs/notes/elfmem`` and its commit message: no credentials.

    There is no override: a source names where a signal came from, never needs a key.
    """
    findings = secrets.scan(source, "outcome source")
    if findings:
        raise secrets.refusal(
            findings,
            "Name the source without the credential (e.g. 'ci', 'user', a URL without its "
            "token), then record the outcome again.",
        )


def _band_name(which: str) -> str:
    """The ledger's band names (``penalty``) for the maths' (``penalise``)."""
    return {"penalise": "penalty"}.get(which, which)
