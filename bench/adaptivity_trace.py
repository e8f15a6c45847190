"""The slow cases of ``bench/adaptivity.py``, traced (``--trace``).

A block that took more than ``SLOW`` negative outcomes to leave the top 5 (or never left) is
printed round by round: the outcomes it was given (``f`` marks a flipped one), its balance α − β
after them, its rank in the measuring recall, and every block ranked above it with the parts of
its score (similarity, composite, balance, tier, note). The revision edges dream wrote among the
subject's blocks come last, so a correction linked to the wrong look-alike shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SLOW = 5
_ID = re.compile(r"\[([0-9a-f]{16})\]")


@dataclass
class Trace:
    roles: dict[str, str] = field(default_factory=dict)
    """block id → "subject/role" for every generated block."""
    given: dict[tuple[int, str], list[str]] = field(default_factory=dict)
    """(round, block) → outcomes given this round, "0", "1", "0f" (flipped)."""
    seen: dict[tuple[int, str], list[tuple[str, float, float, float, str, str]]] = field(
        default_factory=dict
    )
    """(round, subject) → the measuring recall: (id, similarity, composite, balance, tier,
    note) per block."""
    lines: list[str] = field(default_factory=list)

    def label(self, block_id: str) -> str:
        return self.roles.get(block_id, block_id[:6])

    def named(self, note: str) -> str:
        """A ranking note with the ids it names given as roles ("superseded by [x/right]"): the
        id alone left the reader to guess which look-alike a correction was judged against."""
        return _ID.sub(lambda m: f"[{self.label(m.group(1)).split('/')[-1]}]", note)

    def outcome(self, r: int, block_id: str, signal: float, flipped: bool) -> None:
        self.given.setdefault((r, block_id), []).append(f"{signal:.0f}{'f' if flipped else ''}")

    def measured(self, r: int, subject: str, blocks: list[object]) -> None:
        self.seen[(r, subject)] = [
            (
                b.id,  # type: ignore[attr-defined]
                b.similarity,  # type: ignore[attr-defined]
                b.composite,  # type: ignore[attr-defined]
                b.outcome_balance,  # type: ignore[attr-defined]
                b.tier,  # type: ignore[attr-defined]
                b.note,  # type: ignore[attr-defined]
            )
            for b in blocks
        ]

    def case(
        self, seed: int, kind: str, subject: str, block_id: str, rounds: int, negatives: int
    ) -> None:
        out = self.lines
        out.append(f"\n== seed {seed} {kind} {self.label(block_id)} negatives {negatives}")
        mine = [b for b, label in self.roles.items() if label.startswith(subject + "/")]
        for r in range(1, rounds + 1):
            got = [
                f"{self.label(b).split('/')[-1]}:{','.join(self.given[(r, b)])}"
                for b in mine
                if (r, b) in self.given
            ]
            blocks = self.seen.get((r, subject), [])
            ids = [b[0] for b in blocks]
            rank = ids.index(block_id) + 1 if block_id in ids else "-"
            out.append(f"  round {r:>2}: rank {rank}; outcomes {' '.join(got) or '-'}")
            if (
                rank == "-"
                and r > 1
                and self.seen.get((r - 1, subject))
                and block_id not in [b[0] for b in self.seen[(r - 1, subject)]]
            ):
                continue
            for bid, sim, comp, bal, tier, note in blocks:
                mark = "*" if bid == block_id else " "
                out.append(
                    f"     {mark}{self.label(bid):<34} sim {sim:.3f} comp {comp:.3f} bal {bal:+.1f}"
                    f" {tier} {self.named(note)}"
                )

    def edges(self, subject: str, folded: dict[str, object]) -> None:
        for block_id, f in folded.items():
            edges = f.edges  # type: ignore[attr-defined]
            revises = [self.label(t) for (t, rel), w in edges.items() if rel == "revises" and w > 0]
            if revises:
                self.lines.append(f"  {self.label(block_id)} revises {', '.join(revises)}")
