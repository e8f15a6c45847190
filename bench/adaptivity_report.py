"""The tables of ``bench/adaptivity.py``: one corpus's measurements and the report over corpora."""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

import truthgen
from common import svg_lines


@dataclass
class CorpusResult:
    seed: int
    curate: bool
    wins: list[float] = field(default_factory=list)
    """Per round: share of subjects whose right block is in the top 5 above every misleading."""
    losses: list[tuple[int, bool]] = field(default_factory=list)
    """(round, flipped) per subject won after one round and lost after the next; ``flipped``
    when one of that subject's outcomes in the losing round was flipped."""
    negatives_to_leave: dict[str, list[int]] = field(default_factory=dict)
    """Negative outcomes each block took to leave the top 5: ``misleading`` ones from the start,
    ``obsolete`` ones (right until a right correction replaced them)."""
    never_left: dict[str, int] = field(default_factory=dict)
    correction_first: list[bool] = field(default_factory=list)
    """Right corrections: top 1 and above the block corrected, at the first recall after."""
    correction_top1_later: list[float] = field(default_factory=list)
    correction_rounds: list[tuple[str, int, bool]] = field(default_factory=list)
    """(subject kind, template family, top 1) per recall of a right correction's question after
    it arrived."""
    noted: list[tuple[str, int, bool]] = field(default_factory=list)
    """(subject, round, right block top 1) per measurement after a neutral note arrived, once
    the right block had drawn 3 confirmations."""
    wrong_correction_negatives: list[int] = field(default_factory=list)
    wrong_never_back: int = 0
    older_top1_rounds: dict[str, int] = field(default_factory=dict)
    """Per wrong correction that fell below the older block: rounds from that fall until the
    older block was first again (0: the same round)."""
    older_final_rank: list[int] = field(default_factory=list)
    """Per wrong correction: the older block's rank after the last round (0: not in the top 50)."""
    record_at_bound: dict[str, int] = field(default_factory=dict)
    """Of the blocks over a bound (5 negatives to leave; 3 for a wrong correction to fall back),
    how many had taken at least as many confirmations as refutations by their bound-th negative:
    every outcome such a block gets right is a flipped one, so its record is a right block's."""
    balanced_confirmations: list[int] = field(default_factory=list)
    """Confirmations at the 5th negative of each misleading block counted in ``record_at_bound``."""
    right_at_fifth: list[int] = field(default_factory=list)
    """Confirmations at the 5th negative of each right block that drew five (all mistaken)."""
    duplicates_collapsed: int = 0
    duplicates_total: int = 0
    distinct_archived: int = 0
    distinct_total: int = 0
    outcomes: int = 0
    flips: int = 0
    seconds: float = 0.0
    trace: str = ""
    loss_causes: dict[tuple[int, str, str, bool], int] = field(default_factory=dict)
    """With ``--trace``: subjects lost, by (round, cause, detail, made by dense feedback)."""


def show_failure(s: truthgen.Subject, result: object, good: str, bad: list[str]) -> None:
    print(f"seed failure: {s.question!r} right={good[:6]} misleading={[b[:6] for b in bad]}")
    for b in result.blocks:  # type: ignore[attr-defined]
        role = "RIGHT" if b.id == good else "WRONG" if b.id in bad else "     "
        print(
            f"   {role} {b.id[:6]} {b.tier:<10} score {b.score:.3f} sim {b.similarity:.3f} "
            f"bal {b.outcome_balance:+.1f} {b.content[:60]}"
        )


def _print_right_at_fifth(results: list[CorpusResult]) -> None:
    """What a rule that put those misleading blocks out by their 5th negative would also put out:
    right blocks whose record at their own 5th (mistaken) negative was no better."""
    most = max((n for c in results for n in c.balanced_confirmations), default=None)
    right = [n for c in results for n in c.right_at_fifth]
    if most is None:
        return
    alike = sum(1 for n in right if n <= most)
    print(
        f"    right blocks that drew a 5th (mistaken) negative: {len(right)}; with at most {most}"
        f" confirmations then, as a misleading block over 5 had: {alike}"
    )


def _print_negatives(kind: str, neg: list[int], ending: str) -> None:
    print(
        f"  {kind}: median {statistics.median(neg)}, max {max(neg)} ({len(neg)} blocks,"
        f" over 5: {sum(1 for n in neg if n > 5)}; {ending})"
    )


def _print_older(results: list[CorpusResult], wrong: int) -> None:
    """The block a wrong correction tried to replace: back at top 1, and where it ends."""
    rounds = [n for c in results for n in c.older_top1_rounds.values()]
    final = [n for c in results for n in c.older_final_rank]
    if rounds:
        print(
            f"  rounds from that fall until the older block was top 1 again: median"
            f" {statistics.median(rounds)}, max {max(rounds)} ({len(rounds)} of {wrong};"
            f" over 2: {sum(1 for n in rounds if n > 2)})"
        )
    if final:
        top1 = sum(1 for n in final if n == 1)
        lost = sorted(n for n in final if n != 1)
        print(
            f"  the older block after the last round: top 1 for {top1} of {len(final)};"
            f" elsewhere at rank(s) {lost or 'none'} (0: not in the top 50)"
        )


def per_seed(results: list[CorpusResult], rounds: int) -> None:
    """One line per corpus: where a regression sits, so a few seeds can be re-run alone."""
    print(
        f"{'seed':>4} {'final':>6} {'fall':>6} {'at':>3} {'first top 1':>11} {'obsolete max':>12}"
    )
    for c in results:
        fall, at = max((c.wins[r - 1] - c.wins[r], r + 1) for r in range(1, rounds))
        first = f"{sum(c.correction_first)}/{len(c.correction_first)}"
        obsolete = max(c.negatives_to_leave.get("obsolete", [0]))
        print(f"{c.seed:>4} {c.wins[-1]:>6.1%} {fall:>6.1%} {at:>3} {first:>11} {obsolete:>12}")
    print()


def report(results: list[CorpusResult], rounds: int) -> None:
    per_seed(results, rounds)
    print(f"{len(results)} corpora, seeds {results[0].seed}–{results[-1].seed}\n")
    print(f"{'round':>5} {'mean':>7} {'worst':>7} {'worst seed':>10}")
    for r in range(rounds):
        values = [(c.wins[r], c.seed) for c in results]
        low = min(values)
        print(
            f"{r + 1:>5} {statistics.mean(v for v, _ in values):>7.1%} {low[0]:>7.1%} {low[1]:>10}"
        )
    falls = [(max(c.wins[r - 1] - c.wins[r] for r in range(1, rounds)), c.seed) for c in results]
    worst_fall = max(falls)
    print(f"\nlargest fall from one round to the next: {worst_fall[0]:.1%} (seed {worst_fall[1]})")
    mean_curve = [statistics.mean(c.wins[r] for c in results) for r in range(rounds)]
    mean_fall = max((mean_curve[r - 1] - mean_curve[r], r + 1) for r in range(1, rounds))
    print(f"  of the mean curve: {mean_fall[0]:.1%} (round {mean_fall[1]})")
    over = sum(1 for fall, _ in falls if fall > 0.02 + 1e-9)
    lost = [x for c in results for x in c.losses]
    by_round = statistics.multimode([r for r, _ in lost]) if lost else []
    print(
        f"  seeds with a fall over 2 points: {over} of {len(results)}; subjects lost from one round"
        f" to the next: {len(lost)}, {sum(f for _, f in lost)} of them in a round where one of"
        f" their outcomes was flipped (most in round {by_round})"
    )
    for label, group in (
        ("curate", [c for c in results if c.curate]),
        ("no curate", [c for c in results if not c.curate]),
    ):
        if group:
            final = [c.wins[-1] for c in group]
            print(f"  {label:>9}: final mean {statistics.mean(final):.1%}, worst {min(final):.1%}")
    print(
        "negative outcomes until a block left the top 5 or fell to the refuted tier (shown only"
        " when fewer than 5 others bear on the question); an obsolete block's counted since its"
        " correction:"
    )
    for kind in ("misleading", "obsolete", "obsolete, from the start"):
        neg = [n for c in results for n in c.negatives_to_leave.get(kind, [])]
        never = sum(c.never_left.get(kind, 0) for c in results)
        if neg:
            _print_negatives(kind, neg, f"still in the top 5 at the end: {never}")
            if kind == "misleading":
                balanced = sum(c.record_at_bound.get(kind, 0) for c in results)
                print(f"    over 5 with a right block's record at the 5th negative: {balanced}")
                _print_right_at_fifth(results)
    first = [x for c in results for x in c.correction_first]
    later = [x for c in results for x in c.correction_top1_later]
    if first:
        print(
            f"right corrections top 1 above the block corrected, first recall after: "
            f"{sum(first) / len(first):.1%} of {len(first)}; later rounds: "
            f"{statistics.mean(later) if later else 0:.1%}"
        )
    wrong = [x for c in results for x in c.wrong_correction_negatives]
    wrong_never = sum(c.wrong_never_back for c in results)
    if wrong:
        print(
            f"negatives until a wrong correction fell below the block it tried to replace: "
            f"median {statistics.median(wrong)}, max {max(wrong)} "
            f"({len(wrong)}; never: {wrong_never}; over 3: {sum(1 for n in wrong if n > 3)},"
            f" with a right block's record at the 3rd negative:"
            f" {sum(c.record_at_bound.get('wrong', 0) for c in results)})"
        )
    if wrong:
        _print_older(results, len(wrong) + wrong_never)
    dup_t = sum(c.duplicates_total for c in results)
    dup_c = sum(c.duplicates_collapsed for c in results)
    dis_t = sum(c.distinct_total for c in results)
    dis_a = sum(c.distinct_archived for c in results)
    print(
        f"true duplicates collapsed {dup_c}/{dup_t} ({dup_c / max(1, dup_t):.0%}); distinct facts "
        f"archived {dis_a}/{dis_t} ({dis_a / max(1, dis_t):.1%})"
    )
    given, flipped = sum(c.outcomes for c in results), sum(c.flips for c in results)
    print(f"outcomes flipped: {flipped} of {given} ({flipped / max(1, given):.1%})")
    seconds = statistics.mean(c.seconds for c in results)
    print(f"seconds per corpus: {seconds:.1f}", file=sys.stderr)  # the one line that varies


def plot(results: list[CorpusResult], path: Path | None) -> None:
    """The per-round curve (right above every misleading block: mean and worst seed) as SVG."""
    if path is None or not results:
        return
    rounds = range(len(results[0].wins))
    mean = [(r + 1, 100 * statistics.mean(c.wins[r] for c in results)) for r in rounds]
    worst = [(r + 1, 100 * min(c.wins[r] for c in results)) for r in rounds]
    path.write_text(
        svg_lines(
            {"mean over seeds": mean, "worst seed": worst},
            title="Right answer above every misleading one, per round",
            x_label="round",
            y_label="% of subjects",
            y_min=10 * (min(y for _, y in worst) // 10),
        )
    )
