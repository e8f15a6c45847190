"""Adaptivity: does memory follow the truth from outcomes alone, on corpora it was never tuned on?

Each corpus comes from ``truthgen`` (a seed and a set of template families): 40 subjects, each
with one right answer, two misleading look-alikes that differ from it in one content token, and
distractors sharing its vocabulary. An agent loop then runs, each round inside a session: every
subject's question takes the attention frame's top 5 (product defaults), outcome 1.0 goes to the
right block and 0.0 to each misleading one, and 10% of outcomes are flipped (agents' feedback is
noisy). Corrections arrive before round ``--correct-at``, followed by a dream: some right (the old
answer becomes misleading), some wrong (they draw negative outcomes). Even seeds curate between
rounds, odd seeds do not.

The run is deterministic: the memory reads a simulated clock (``elfmem.clock``), not the wall
clock, and makes block ids from the seed. Rounds are a day apart (09:00 UTC); inside a round's
session every subject is one step of the agent's work, ``STEP`` seconds of active time (recall,
act on it, report). Dream, curate and the measurement run between sessions, where no active time
passes. The script re-runs itself with ``PYTHONHASHSEED=0`` so set order is the same too.

Tune on seeds 0–9 with families 0–2 (``--split tune``); report seeds 10–39 with families 3–5
(``--split report``, the default). Printed: the share of subjects whose right block ranks above
every misleading one, per round (mean and worst seed, and the largest fall from one round to the
next); negative outcomes a misleading block took to leave the top 5; corrections shown first; how
many negatives a wrong correction took to fall back below the block it tried to replace; true
duplicates collapsed and distinct facts archived by the first dream.

    python bench/adaptivity.py [--split report|tune] [--seeds 10-39] [--rounds 20] [--jobs 2]
        [--trace] [--flips hash|stream] [--link learned|declared] [--model static|mpnet]
        [--plot FILE.svg] [--quick]

``--quick``: the split's first two seeds, 8 rounds, no merge check.

Which outcomes are flipped is drawn from each outcome itself, (seed, subject, round, the block's
role) (``truthgen.flip_draw``), and the order of subjects from (seed, round): a ranking change
that alters which blocks one recall returns leaves every other outcome's noise as it was, so two
commits are compared on one draw of the noise. ``--flips stream`` draws both from one stream in
the order outcomes are given (the draw of the numbers published before 2026-12-05): there a
recall that returns one block more or less shifts every later draw, so a ranking change moves
the flips of subjects it never touched.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import truthgen  # noqa: E402
from adaptivity_corrections import (  # noqa: E402
    corrections_seen,
    fell_back,
    older_final_rank,
    older_top1,
)
from adaptivity_losses import Losses, loss_lines, record  # noqa: E402
from adaptivity_merge import merge_check  # noqa: E402
from adaptivity_report import CorpusResult, plot, report, show_failure  # noqa: E402
from adaptivity_trace import SLOW, Trace  # noqa: E402
from common import parse  # noqa: E402

from elfmem.api import MemorySystem  # noqa: E402
from elfmem.clock import SimulatedClock  # noqa: E402
from elfmem.config import EmbeddingsConfig  # noqa: E402

TOP_K = 5
FLIP = 0.10
DUPLICATES = 5
"""Subjects whose right answer is also captured again with only case, spacing and punctuation
changed: a true duplicate dream must collapse."""
START = 1767603600.0
"""The simulated clock's start: Monday 2026-01-05 09:00 UTC."""
DAY = 86400.0
STEP = 60.0
"""Active seconds one subject's recall, action and outcome take inside a session."""


def _duplicate_of(text: str) -> str:
    return "  " + text.upper().replace(" ", "  ") + " ."


def _ids(seed: int) -> Callable[[], str]:
    """Block ids drawn from the corpus seed: the same run makes the same ids."""
    rng = random.Random(f"ids-{seed}")
    return lambda: f"{rng.getrandbits(64):016x}"


async def _build(
    root: Path, subjects: list[truthgen.Subject], clock: SimulatedClock, seed: int
) -> MemorySystem:
    new_id = _ids(seed)
    system, _ = await MemorySystem.init(root, name="Ada", seed=True, clock=clock, new_id=new_id)
    if MODEL:  # another embedded model than the default: the same memory reopened with it
        config = replace(system.config, embeddings=EmbeddingsConfig(model=MODEL))
        await system.close()
        system = await MemorySystem.from_config(root, config, clock=clock, new_id=new_id)
    items: list[tuple[truthgen.Subject, str, str]] = []
    for s in subjects:
        items.append((s, "right", s.right))
        items += [(s, f"misleading{n}", m) for n, m in enumerate(s.misleading)]
        items += [(s, f"distractor{n}", d) for n, d in enumerate(s.distractors)]
    for s in subjects[:DUPLICATES]:
        items.append((s, "duplicate", _duplicate_of(s.right)))
    random.Random(len(items)).shuffle(items)
    res = await system.remember_many([{"content": text} for _, _, text in items])
    for (s, role, _), block_id in zip(items, res.created, strict=True):
        s.ids[role] = block_id
    await system.dream()
    return system


async def _archive_check(
    system: MemorySystem, subjects: list[truthgen.Subject], out: CorpusResult
) -> None:
    """A true duplicate and its original are one fact: whichever dream kept stands for both."""
    archived = {b.id: b for b in (await system.ls(status="archived")).blocks}
    for s in subjects[:DUPLICATES]:
        right, dup = s.ids["right"], s.ids.get("duplicate", s.ids["right"])
        out.duplicates_total += 1
        if dup == right:  # remember already answered with the original's id
            out.duplicates_collapsed += 1
        elif dup in archived and archived[dup].extra.get("duplicate-of") == right:
            out.duplicates_collapsed += 1
        elif right in archived and archived[right].extra.get("duplicate-of") == dup:
            out.duplicates_collapsed += 1
            s.ids["right"] = dup
        s.ids.pop("duplicate", None)
    distinct = [bid for s in subjects for bid in s.ids.values()]
    out.distinct_total = len(distinct)
    out.distinct_archived = sum(1 for d in distinct if d in archived)


NOTE_AT = 5
"""The round before which neutral notes (``Subject.note``) are captured, followed by a dream."""


def make_corpus(seed: int, families: tuple[int, ...], source: str) -> list[truthgen.Subject]:
    """``truthgen``'s corpus, or with ``source`` "corrections:tune|report" ``correctiongen``'s
    (bench/corrections.py)."""
    if not source:
        return truthgen.corpus(seed, families)
    import correctiongen

    return correctiongen.corpus(seed, correctiongen.template_set(source.partition(":")[2]))


async def run_corpus(
    seed: int, families: tuple[int, ...], rounds: int, correct_at: int, source: str = ""
) -> CorpusResult:
    started = time.perf_counter()
    subjects = make_corpus(seed, families, source)
    out = CorpusResult(seed=seed, curate=seed % 2 == 0)
    noise = random.Random(seed * 7919 + 1)
    trace = Trace() if TRACE else None
    losses = Losses() if TRACE else None
    slow: list[tuple[str, str, str, int]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        clock = SimulatedClock(START)
        system = await _build(root, subjects, clock, seed)
        await _archive_check(system, subjects, out)
        right = {s.name: s.ids["right"] for s in subjects}
        if trace is not None:
            trace.roles = {b: f"{s.name}/{role}" for s in subjects for role, b in s.ids.items()}
        wrong = {s.name: [s.ids["misleading0"], s.ids["misleading1"]] for s in subjects}
        negatives: dict[str, int] = {}
        positives: dict[str, int] = {}
        at_bound: dict[str, int] = {}
        at_fifth: dict[str, int] = {}  # confirmations at the 5th negative, wrong corrections too
        """Confirmations a block had taken when its negatives reached the bound of its kind."""
        left: set[str] = set()
        seen: set[str] = set()
        corrections: dict[str, tuple[str, str, bool]] = {}
        wrong_negatives: dict[str, int] = {}
        wrong_back: set[str] = set()
        fell_at: dict[str, int] = {}
        first_after: set[str] = set()
        later_top1: dict[str, list[bool]] = {}
        obsolete: set[str] = set()
        won_before: set[str] = set()
        before_correction: dict[str, int] = {}
        """An obsolete block's negatives before the correction: outcomes mistaken then."""
        roles = {b: role for s in subjects for role, b in s.ids.items()}
        for r in range(1, rounds + 1):
            if r == correct_at:
                await _correct(system, subjects, right, wrong, corrections, wrong_negatives)
                obsolete |= {old for _, old, ok in corrections.values() if ok}
                before_correction.update({old: negatives.get(old, 0) for old in obsolete})
                for name, (new, old, ok) in corrections.items():
                    roles[new] = f"correction-{'right' if ok else 'wrong'}"
                    if ok:
                        roles[old] = "obsolete"
                    if trace is not None:
                        trace.roles[new] = f"{name}/correction-{'right' if ok else 'wrong'}"
            if r == NOTE_AT:
                await _notes(system, subjects)
            clock.advance(max(0.0, START + r * DAY - clock.time()))  # the next morning
            order = list(subjects)
            (noise if FLIPS == "stream" else random.Random(f"order-{seed}-{r}")).shuffle(order)
            feedback: dict[float, list[str]] = {}
            flipped: set[str] = set()
            if losses is not None:
                losses.given = {}
            async with system.session():
                for s in order:  # the agent: recall, act, report outcomes
                    clock.advance(STEP)
                    result = await system.recall(s.question, top_k=TOP_K)
                    ids = [b.id for b in result.blocks]
                    corrections_seen(s, ids, corrections, first_after, later_top1, out)
                    signals = [(w, 0.0) for w in wrong[s.name] if w in ids]
                    if right[s.name] in ids:
                        signals.append((right[s.name], 1.0))
                    for block_id, signal in signals:
                        if FLIPS == "stream":
                            flip = noise.random() < FLIP
                        else:
                            flip = truthgen.flip_draw(seed, s.name, r, roles[block_id]) < FLIP
                        out.outcomes += 1
                        out.flips += flip
                        if flip:
                            signal = 1.0 - signal
                            flipped.add(s.name)
                        if trace is not None:
                            trace.outcome(r, block_id, signal, flip)
                        if losses is not None:
                            losses.outcome(block_id, signal, flip)
                        if signal == 1.0:
                            positives[block_id] = positives.get(block_id, 0) + 1
                        if signal == 0.0:
                            negatives[block_id] = negatives.get(block_id, 0) + 1
                            if block_id in wrong_negatives:
                                wrong_negatives[block_id] += 1
                            got = wrong_negatives.get(block_id, negatives[block_id])
                            if got == (3 if block_id in wrong_negatives else 5):
                                at_bound.setdefault(block_id, positives.get(block_id, 0))
                            if negatives[block_id] == 5:  # the misleading bound, for any block
                                at_fifth.setdefault(block_id, positives.get(block_id, 0))
                        feedback.setdefault(signal, []).append(block_id)
                for signal, block_ids in sorted(feedback.items()):  # one call per signal
                    await system.outcome(block_ids, signal, source="bench")
            if out.curate:
                await system.curate()
            wins = 0
            won_now: set[str] = set()
            for s in subjects:  # the measurement: the state after this round's feedback
                result = await system.recall(s.question, top_k=TOP_K, reinforce=False)
                ids = [b.id for b in result.blocks]
                if trace is not None:
                    trace.measured(r, s.name, result.blocks)
                bad = [w for w in wrong[s.name] if w in ids]
                good = right[s.name]
                if s.note and r >= NOTE_AT and positives.get(good, 0) >= 3:
                    out.noted.append((s.name, r, bool(ids) and ids[0] == good))
                if good in ids and all(ids.index(good) < ids.index(w) for w in bad):
                    wins += 1
                    won_now.add(s.name)
                elif SHOW_FAILURES and r == rounds:
                    wide = await system.recall(s.question, top_k=12, reinforce=False)
                    show_failure(s, wide, good, wrong[s.name])
                if losses is not None and s.name in won_before and s.name not in won_now:
                    await record(
                        losses, system, r, s.question, ids, good, wrong[s.name], roles, TOP_K
                    )
                shown = [b.id for b in result.blocks if b.tier != "refuted"]
                for w in wrong[s.name]:  # out: below the top 5, or shown only as refuted
                    if w in shown:
                        seen.add(w)
                    elif w in seen and w not in left:
                        left.add(w)
                        kind = "obsolete" if w in obsolete else "misleading"
                        n = negatives.get(w, 0) - before_correction.get(w, 0)
                        out.negatives_to_leave.setdefault(kind, []).append(n)
                        if kind == "obsolete":
                            out.negatives_to_leave.setdefault("obsolete, from the start", [])
                            out.negatives_to_leave["obsolete, from the start"].append(negatives[w])
                        if n > SLOW:
                            slow.append((kind, s.name, w, n))
                        if kind == "misleading" and n > 5 and at_fifth.get(w, 0) >= 5:
                            out.record_at_bound[kind] = out.record_at_bound.get(kind, 0) + 1
                            out.balanced_confirmations.append(at_fifth[w])
                if fell_back(s, ids, corrections, wrong_negatives, wrong_back, out, at_bound):
                    new = corrections[s.name][0]
                    slow.append(("wrong correction", s.name, new, wrong_negatives[new]))
                older_top1(s, ids, r, corrections, wrong_back, fell_at, out)
            out.wins.append(wins / len(subjects))
            out.losses += [(r, name in flipped) for name in sorted(won_before - won_now)]
            won_before = won_now
        out.never_left = {
            kind: len([w for w in seen - left if (w in obsolete) == (kind == "obsolete")])
            for kind in ("misleading", "obsolete")
        }
        out.wrong_never_back = len(set(wrong_negatives) - wrong_back)
        for s in subjects:
            if s.name in corrections and not corrections[s.name][2]:
                await older_final_rank(system, s, corrections[s.name][1], out)
        out.right_at_fifth = [at_fifth[b] for b in right.values() if b in at_fifth]
        if trace is not None:
            by_name = {s.name: s for s in subjects}
            for s in subjects:
                for w in wrong[s.name]:
                    if w in seen - left:
                        kind = "obsolete" if w in obsolete else "misleading"
                        slow.append((f"{kind} never left", s.name, w, negatives.get(w, 0)))
            for name, (new, _, ok) in corrections.items():
                if not ok and new not in wrong_back:
                    slow.append(("wrong correction never back", name, new, wrong_negatives[new]))
            for kind, name, w, n in slow:
                trace.case(seed, kind, name, w, rounds, n)
                ids = [*by_name[name].ids.values()]
                if name in corrections:
                    ids.append(corrections[name][0])
                trace.edges(name, system._core.ledger.folded_many(ids))
            out.trace = "\n".join(trace.lines)
        if losses is not None:
            out.loss_causes = dict(losses.causes)
        out.correction_top1_later = [sum(v) / len(v) for v in later_top1.values() if v]
        await system.close()
    out.seconds = time.perf_counter() - started
    return out


async def _notes(system: MemorySystem, subjects: list[truthgen.Subject]) -> None:
    """Capture the neutral notes in one batch and dream: same subject, no answer."""
    due = [s for s in subjects if s.note]
    if due:
        res = await system.remember_many([{"content": s.note} for s in due])
        await system.dream()
        for s, block_id in zip(due, res.created, strict=True):
            s.ids["note"] = block_id


async def _correct(
    system: MemorySystem,
    subjects: list[truthgen.Subject],
    right: dict[str, str],
    wrong: dict[str, list[str]],
    corrections: dict[str, tuple[str, str, bool]],
    wrong_negatives: dict[str, int],
) -> None:
    """Capture the corrections, dream, and move what counts as right and misleading.

    With ``--link declared`` each correction is captured with ``supersedes`` naming the block it
    corrects; otherwise dream has to recognise it (a learned ``revises`` edge). A block curate
    archived (a right one that three mistaken outcomes refuted) cannot be superseded: as the
    refusal's recovery says, its correction is captured without the link."""
    due = [s for s in subjects if s.correction]
    records: list[dict[str, object]] = [{"content": s.correction} for s in due]
    if LINK == "declared":
        archived = {b.id for b in (await system.ls(status="archived")).blocks}
        for record, s in zip(records, due, strict=True):
            if right[s.name] not in archived:
                record["supersedes"] = right[s.name]
    res = await system.remember_many(records)
    await system.dream()
    if LINK == "declared":
        declared = zip(due, res.created, records, strict=True)
        _unlearn(system, [(n, right[s.name]) for s, n, r in declared if "supersedes" in r])
    for s, block_id in zip(due, res.created, strict=True):
        old = right[s.name]
        corrections[s.name] = (block_id, old, s.correction_right)
        if s.correction_right:
            right[s.name] = block_id
            wrong[s.name].append(old)
        else:
            wrong[s.name].append(block_id)
            wrong_negatives[block_id] = 0


def _unlearn(system: MemorySystem, pairs: list[tuple[str, str]]) -> None:
    """Take away the ``revises`` edges dream learned between each correction and the block it
    declares it supersedes: ``--link declared`` measures the declared link alone, as for a
    correction in other words that dream does not recognise."""
    core = system._core
    lines: dict[str, list[str]] = {}
    for new, old in pairs:
        for block, target, relation in ((new, old, "revises"), (old, new, "revised_by")):
            event = core.event("edge_remove", block, target=target, relation=relation)
            lines.setdefault(block, []).append(event)
    core.record(lines, "bench: declared links only")


SHOW_FAILURES = False
TRACE = False
FLIPS = "hash"
LINK = "learned"
MODEL = ""


def _one(args: tuple[int, tuple[int, ...], int, int, str]) -> CorpusResult:
    return asyncio.run(run_corpus(*args))


def _seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main() -> None:
    if os.environ.get("PYTHONHASHSEED") != "0":  # set order must not vary between runs
        os.execve(
            sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"}
        )
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", choices=("report", "tune"), default="report")
    ap.add_argument("--seeds", default=None, help="e.g. 10-39 (default: by split)")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--correct-at", type=int, default=6)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-merge-check", action="store_true")
    ap.add_argument("--show-failures", action="store_true", help="print the last round's misses")
    ap.add_argument("--trace", action="store_true", help="trace blocks slow to leave the top 5")
    ap.add_argument(
        "--flips",
        choices=("stream", "hash"),
        default="hash",
        help="draw each flip from a hash of (seed, subject, round, role), or from one stream",
    )
    ap.add_argument(
        "--link",
        choices=("learned", "declared"),
        default="learned",
        help="corrections recognised by dream, or captured with `supersedes` naming the old block",
    )
    ap.add_argument(
        "--model", default="", help="an embedded model other than the default (static, mpnet)"
    )
    ap.add_argument("--plot", type=Path, default=None, help="write the per-round curve as SVG")
    args = parse(ap, {"seeds": "", "rounds": 8, "no_merge_check": True})
    global SHOW_FAILURES, TRACE, FLIPS, LINK, MODEL
    LINK = args.link
    MODEL = args.model
    SHOW_FAILURES = args.show_failures
    TRACE = args.trace
    FLIPS = args.flips
    families = truthgen.REPORT_FAMILIES if args.split == "report" else truthgen.TUNE_FAMILIES
    first, last = (10, 39) if args.split == "report" else (0, 9)
    seeds = _seeds(args.seeds or f"{first}-{first + 1 if args.quick else last}")
    work = [(seed, families, args.rounds, args.correct_at, "") for seed in seeds]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = sorted(pool.map(_one, work), key=lambda c: c.seed)
    flips = "; flips drawn from one stream" if args.flips == "stream" else ""
    model = f"; model {args.model}" if args.model else ""
    print(f"split {args.split}: families {families}{flips}; corrections' links {args.link}{model}")
    for c in results:
        if c.trace:
            print(c.trace)
    report(results, args.rounds)
    plot(results, args.plot)
    if TRACE:
        print("\n".join(loss_lines(r.loss_causes for r in results)))
    if not args.no_merge_check:
        asyncio.run(merge_check())


if __name__ == "__main__":
    main()
