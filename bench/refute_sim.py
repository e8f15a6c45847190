"""How often a refutation rule loses a right block or keeps a misleading one, on noisy outcomes.

The outcome walk of one block, as in ``bench/adaptivity.py``: one outcome per round, right (1.0
for a right block, 0.0 for a misleading one) unless flipped, a tenth of them flipped. A block
taken out as refuted gets no further outcomes. Printed per rule, scaled to the report split of
the adaptivity benchmark (1,200 right blocks, about 1,300 misleading blocks that leave): right
blocks ever taken out, misleading blocks still in after five refutations, and the median number
of refutations a misleading block takes to go.

    python bench/refute_sim.py [--walks 200000] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections.abc import Callable

Rule = Callable[[int, int], bool]
"""(confirmations, refutations) → refuted?"""

RULES: dict[str, Rule] = {
    "net >= 2 (before)": lambda c, r: r - c >= 2,
    "net >= 2, or net >= 1 after 3": lambda c, r: r - c >= 2 or (r - c >= 1 and r >= 3),
    "net >= 3, or net >= 1 after 4": lambda c, r: r - c >= 3 or (r - c >= 1 and r >= 4),
    "net >= 3, or net >= 1 after 5 (shipped)": lambda c, r: r - c >= 3 or (r - c >= 1 and r >= 5),
    "net >= 4, or net >= 1 after 5": lambda c, r: r - c >= 4 or (r - c >= 1 and r >= 5),
}


def walk(rule: Rule, right: bool, rng: random.Random, rounds: int, flip: float) -> tuple[bool, int]:
    """(taken out, refutations drawn by then or by the end)."""
    c = r = 0
    for _ in range(rounds):
        if rule(c, r):
            return True, r
        confirms = right != (rng.random() < flip)
        c, r = (c + 1, r) if confirms else (c, r + 1)
    return rule(c, r), r


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--walks", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--flip", type=float, default=0.10)
    args = ap.parse_args()
    n = args.walks
    print(f"{'rule':<42} {'right lost /1200':>16} {'misleading > 5 /1300':>21} {'median':>6}")
    for name, rule in RULES.items():
        rng = random.Random(args.seed)
        lost = sum(walk(rule, True, rng, args.rounds, args.flip)[0] for _ in range(n))
        bad = [walk(rule, False, rng, args.rounds, args.flip) for _ in range(n)]
        late = sum(1 for out, r in bad if not out or r > 5)
        median = statistics.median(r for out, r in bad if out)
        print(f"{name:<42} {lost / n * 1200:>16.1f} {late / n * 1300:>21.1f} {median:>6}")


if __name__ == "__main__":
    main()
