"""Why a subject was lost from one round to the next, for ``bench/adaptivity.py --trace``.

A subject is lost when its right block ranked above every misleading one in the top 5 after one
round and not after the next. For each loss this names the block that now stands in the way and
the reason, read from the outcomes that round and from the same recall with dense feedback off:

- ``fresh wrong correction``: a correction that outcomes will refute, not yet refuted (its
  outcomes this round: none, or one flipped to 1.0);
- ``fresh right correction not first``: the right block is a correction and a block it corrects
  (or a look-alike) still ranks above it; its outcomes this round are named;
- ``look-alike``: an original misleading block or an obsolete one above the right block, with the
  flips that round on either block;
- ``right out of the top 5``: no misleading block above it, the right block just missed the cut.

``feedback`` marks a loss that the same recall with dense feedback off would not have had.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from elfmem.retrieval.settings import SearchSettings
from elfmem.rhythms import recall as recall_mod

NO_FEEDBACK = SearchSettings(dense_feedback=0.0)


@dataclass
class Losses:
    given: dict[str, list[str]] = field(default_factory=dict)
    """This round's outcomes per block: "0", "1", "0f", "1f" (flipped)."""
    causes: Counter[tuple[int, str, str, bool]] = field(default_factory=Counter)
    """(round, cause, detail, feedback-made) → subjects lost."""

    def outcome(self, block_id: str, signal: float, flipped: bool) -> None:
        self.given.setdefault(block_id, []).append(f"{signal:.0f}{'f' if flipped else ''}")


def loss_lines(per_corpus: Iterable[dict[tuple[int, str, str, bool], int]]) -> list[str]:
    """The causes summed over corpora, one line per (round, cause, detail, feedback-made)."""
    causes: Counter[tuple[int, str, str, bool]] = Counter()
    for c in per_corpus:
        causes.update(c)
    out = ["", f"subjects lost from one round to the next, by cause ({sum(causes.values())}):"]
    out.append(f"  {'round':>5} {'lost':>4} {'feedback':>8}  cause (detail)")
    for (r, cause, detail, fb), n in sorted(causes.items()):
        out.append(f"  {r:>5} {n:>4} {'yes' if fb else 'no':>8}  {cause} ({detail})")
    by_cause: Counter[tuple[str, bool]] = Counter()
    for (_, cause, _, fb), n in causes.items():
        by_cause[(cause, fb)] += n
    out.append("  all rounds:")
    for (cause, fb), n in sorted(by_cause.items()):
        out.append(f"    {n:>4} {cause}{' (dense feedback made it)' if fb else ''}")
    return out


def _given(losses: Losses, block_id: str) -> str:
    return ",".join(losses.given.get(block_id, [])) or "no outcome"


def classify(
    losses: Losses,
    r: int,
    ids: list[str],
    right: str,
    wrong: list[str],
    roles: dict[str, str],
) -> tuple[str, str]:
    """The cause of one loss and its detail (see the module's docstring)."""
    above = [w for w in wrong if w in ids and (right not in ids or ids.index(w) < ids.index(right))]
    if not above:
        return "right out of the top 5", f"right {_given(losses, right)}"
    first = min(above, key=ids.index)
    role = roles.get(first, "?")
    right_role = roles.get(right, "?")
    if role == "correction-wrong":
        return (
            "fresh wrong correction",
            f"its {_given(losses, first)}; right {_given(losses, right)}",
        )
    if right_role == "correction-right":
        return (
            "fresh right correction not first",
            f"{role} above; correction {_given(losses, right)}; {role} {_given(losses, first)}",
        )
    return f"look-alike ({role})", f"right {_given(losses, right)}; it {_given(losses, first)}"


async def record(
    losses: Losses,
    system: Any,
    r: int,
    question: str,
    ids: list[str],
    right: str,
    wrong: list[str],
    roles: dict[str, str],
    top_k: int,
) -> None:
    """Classify one lost subject and count it."""
    cause, detail = classify(losses, r, ids, right, wrong, roles)
    plain = recall_mod.frame(
        system._core, "attention", question, top_k=top_k, reinforce=False, settings=NO_FEEDBACK
    )
    p = [b.id for b in plain.blocks]
    won = right in p and all(p.index(right) < p.index(w) for w in wrong if w in p)
    losses.causes[(r, cause, detail, won)] += 1
