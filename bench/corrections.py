"""Corrections in plain words: is a correction of any kind of value shown first once it arrives?

The loop of ``bench/adaptivity.py`` (sessions, outcomes with a tenth flipped, dream, curate on
even seeds) on corpora from ``bench/correctiongen.py``: 40 subjects a corpus, each stated
through one template of one kind of changed value; before round 6 a share of them receive their
correction in plain words (two in three right), and before round 5 half of the others receive a
neutral note on the same attribute.

Printed, on the split's templates and seeds: right corrections top 1 for their question (above
the block corrected) in the rounds after they arrive, per kind of changed value and per phrasing
(bare: the fact with the value swapped; worded: with surrounding words); the share of subjects
whose right block ranks above every misleading one, per round, worst seed from round 3 on;
subjects with a neutral note whose right block, confirmed 3 times or more, is top 1; then the
adaptivity report (duplicates, distinct facts archived, wrong corrections).

    python bench/corrections.py [--split report|tune] [--seeds 10-29] [--rounds 12] [--jobs 2]
        [--link learned|declared] [--flips hash|stream] [--trace]
    python bench/corrections.py --quick          # 2 report seeds, 8 rounds (about a minute)

``--trace`` adds why each subject lost from one round to the next was lost
(``adaptivity_losses``). Each outcome's flip is drawn from the outcome itself
(``truthgen.flip_draw``), so two versions of the code meet the same mistakes whatever they show;
``--flips stream`` draws them from one stream instead, as before.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import adaptivity  # noqa: E402
import correctiongen  # noqa: E402
from adaptivity_losses import loss_lines  # noqa: E402
from adaptivity_report import CorpusResult, report  # noqa: E402


def _one(args: tuple[int, int, int, str, str, str, bool]) -> CorpusResult:
    seed, rounds, correct_at, split, link, flips, trace = args
    adaptivity.LINK = link
    adaptivity.FLIPS = flips
    adaptivity.TRACE = trace
    return adaptivity._one((seed, (), rounds, correct_at, f"corrections:{split}"))


def _share(values: list[bool]) -> str:
    return f"{sum(values) / len(values):6.1%} of {len(values):>4}" if values else "     – of    0"


def per_kind(results: list[CorpusResult]) -> None:
    print("right corrections top 1 for their question, rounds after they arrived:")
    print(f"{'kind':<11} {'bare':>15} {'worded':>15} {'all':>15}")
    worded = {i for i, t in enumerate(correctiongen.TEMPLATES) if t.worded}
    every: list[bool] = []
    for kind in correctiongen.KINDS:
        rows = [(f, top) for c in results for k, f, top in c.correction_rounds if k == kind]
        bare = [top for f, top in rows if f not in worded]
        said = [top for f, top in rows if f in worded]
        every += bare + said
        print(f"{kind:<11} {_share(bare):>15} {_share(said):>15} {_share(bare + said):>15}")
    print(f"{'all':<11} {'':>15} {'':>15} {_share(every):>15}")


def from_round(results: list[CorpusResult], first: int) -> None:
    worst = min((min(c.wins[first - 1 :]), c.seed) for c in results)
    mean = statistics.mean(w for c in results for w in c.wins[first - 1 :])
    print(
        f"right above every misleading block from round {first} on: mean {mean:.1%}, "
        f"worst seed {worst[1]} at {worst[0]:.1%}"
    )


def per_seed(results: list[CorpusResult], first: int) -> None:
    """Every target that is read per seed, one line each."""
    print(
        f"{'seed':>4} {'right corrections top 1':>24} {f'worst from round {first}':>20}"
        f" {'wrong: negatives to fall':>25} {'older top 1 again':>18}"
    )
    for c in results:
        tops = [top for _, _, top in c.correction_rounds]
        wrong = c.wrong_correction_negatives
        fell = f"max {max(wrong)} of {len(wrong)}" if wrong else "–"
        fell += f", never {c.wrong_never_back}" if c.wrong_never_back else ""
        back = list(c.older_top1_rounds.values())
        print(
            f"{c.seed:>4} {_share(tops):>24} {min(c.wins[first - 1 :]):>20.1%} {fell:>25}"
            f" {f'max {max(back)} of {len(back)}' if back else '–':>18}"
        )


def notes(results: list[CorpusResult]) -> None:
    rows = [(c.seed, name, top) for c in results for name, _, top in c.noted]
    if not rows:
        return
    subjects: dict[tuple[int, str], list[bool]] = {}
    for seed, name, top in rows:
        subjects.setdefault((seed, name), []).append(top)
    always = sum(1 for v in subjects.values() if all(v))
    print(
        f"neutral notes: right block (3+ confirmations) top 1 in {_share([t for *_, t in rows])}"
        f" measurements; top 1 in every one for {always} of {len(subjects)} subjects"
        f" ({always / len(subjects):.1%})"
    )


def main() -> None:
    if os.environ.get("PYTHONHASHSEED") != "0":  # set order must not vary between runs
        os.execve(
            sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"}
        )
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", choices=("report", "tune"), default="report")
    ap.add_argument("--seeds", default=None, help="e.g. 10-29 (default: by split)")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--correct-at", type=int, default=6)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="2 seeds of the split, 8 rounds")
    ap.add_argument(
        "--link",
        choices=("learned", "declared"),
        default="learned",
        help="corrections recognised by dream, or captured with `supersedes` naming the old block",
    )
    ap.add_argument("--trace", action="store_true", help="why subjects were lost, round by round")
    ap.add_argument(
        "--flips",
        choices=("stream", "hash"),
        default="hash",
        help="as bench/adaptivity.py: each flip drawn from a hash of the outcome, or one stream",
    )
    args = ap.parse_args()
    lo = min(correctiongen.TUNE_SEEDS if args.split == "tune" else correctiongen.REPORT_SEEDS)
    default = f"{lo}-{lo + 1}" if args.quick else f"{lo}-{lo + (9 if args.split == 'tune' else 19)}"
    rounds = 8 if args.quick else args.rounds
    seeds = adaptivity._seeds(args.seeds or default)
    work = [
        (seed, rounds, args.correct_at, args.split, args.link, args.flips, args.trace)
        for seed in seeds
    ]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = sorted(pool.map(_one, work), key=lambda c: c.seed)
    n = len(correctiongen.template_set(args.split))
    flips = "; flips drawn from one stream" if args.flips == "stream" else ""
    print(f"split {args.split}: {n} templates; corrections' links {args.link}{flips}")
    per_kind(results)
    from_round(results, 3)
    per_seed(results, 3)
    notes(results)
    print()
    report(results, rounds)
    if args.trace:
        print("\n".join(loss_lines(r.loss_causes for r in results)))


if __name__ == "__main__":
    main()
