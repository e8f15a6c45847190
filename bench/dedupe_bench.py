"""Consolidation never costs a fact: true duplicates collapsed / distinct facts archived.

A seeded generator makes look-alike pairs that differ in exactly one content token, across every
kind ``block/facts.py`` names (a lower-case or capitalised name, an identifier, a path, a number,
a unit, a version in digits or words, a date, a negation, an antonym, a preposition, a state),
and true duplicates (the same sentence with other case, spacing, punctuation, articles or tag
order). Each set goes through a real memory: the first sides are remembered and dreamed, then
the second sides, and one ``dream --no-llm`` decides. Prints the two rates the issue asks for
(100% collapsed, 0% archived) and the distinct pairs archived per kind.

    python bench/dedupe_bench.py [--seed 0] [--pairs 120]

``measure(distinct, duplicates, root)`` is the function another benchmark can call with its own
pairs; ``generate(seed, n)`` gives this one's.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from elfmem.api import MemorySystem

FIRST = (
    "vesper serac quill marlin tansy orrin cobalt juniper ember halcyon wren basalt fennel "
    "lumen sorrel tamsin brisk calder dune"
).split()
SECOND = (
    "router loader queue cache gateway scheduler indexer broker worker proxy relay ledger "
    "crawler mirror bridge vault sentry beacon harbor"
).split()
MIDDLE = "north south east west inner outer upper lower".split()

# kind → (template with {s} for the subject and {x} for the token, left tokens, right tokens)
FAMILIES: dict[str, list[tuple[str, list[str], list[str]]]] = {
    "name": [
        ("After editing its config, restart the {x} with the --safe flag.", [], []),
        ("Ask {x} before changing the {s} settings.", ["Alice", "Priya"], ["Bob", "Tomas"]),
    ],
    "identifier": [
        ("Set {x} to 50 in the {s} config.", ["MAX_CONN", "poolSize"], ["MAX_POOL", "queueSize"]),
        ("Start the {s} with the {x} flag.", ["--safe", "-v"], ["--fast", "-q"]),
    ],
    "path": [
        ("The {s} reads its settings from {x}.", ["/etc/app/main.conf"], ["/etc/app/alt.conf"]),
        ("Logs of the {s} go to {x} on each host.", ["~/logs/run"], ["~/logs/old"]),
    ],
    "number": [
        ("The {s} retries {x} times before it gives up.", ["3", "12"], ["5", "120"]),
        ("The {s} keeps {x} replicas in production.", ["three"], ["five"]),
    ],
    "unit": [("The {s} times out after 30 {x} of silence.", ["seconds", "ms"], ["minutes", "s"])],
    "version": [
        ("The {s} needs release {x} of the client.", ["2.4.1", "v3"], ["2.5.0", "v4"]),
        ("The {s} speaks protocol version {x}.", ["two"], ["three"]),
    ],
    "date": [("The {s} is patched every {x} morning.", ["Monday"], ["Thursday"])],
    "negation": [
        ("The {s} is {x} restarted during deploys.", ["always"], ["never"]),
        ("Deploys of the {s} are {x} allowed on Friday afternoons.", ["often"], ["not"]),
    ],
    "antonym": [("{x} compression on the {s} for large payloads.", ["Enable"], ["Disable"])],
    "preposition": [
        ("Run the {s} migration {x} the deploy.", ["before"], ["after"]),
        ("Mount the {s} volume {x} the data disk.", ["above"], ["below"]),
    ],
    "state": [("The {s} rollout is {x} for the EU region.", ["pending"], ["done"])],
}
ARTICLE_FREE = "Keep the {s} warm with one request a minute."


@dataclass(frozen=True)
class Rates:
    collapsed: float
    """Share of true duplicates dream archived as duplicates of their twin."""
    archived: float
    """Share of distinct pairs where dream archived either side."""
    archived_by_kind: dict[str, int]
    refused_by_remember: int = 0
    """True duplicates ``remember`` already refused as the same text (case and spacing only)."""


def subjects(rng: random.Random, n: int) -> list[str]:
    """``n`` distinct lower-case multi-word names (two words, then three when those run out)."""
    pool = [f"{a} {b}" for a in FIRST for b in SECOND]
    rng.shuffle(pool)
    if n > len(pool):
        more = [f"{a} {c} {b}" for a in FIRST for c in MIDDLE for b in SECOND]
        rng.shuffle(more)
        pool += more
    if n > len(pool):
        raise ValueError(f"at most {len(pool)} subjects")
    return pool[:n]


def distinct_pair(
    kind: str, family: int, variant: int, subject: str, other: str
) -> tuple[str, str]:
    """Two sentences that differ in one content token of ``kind``."""
    template, left, right = FAMILIES[kind][family % len(FAMILIES[kind])]
    if not left:  # the token is the subject itself: "the vesper router" / "the serac loader"
        return template.format(x=subject, s=subject), template.format(x=other, s=other)
    i = variant % len(left)
    return template.format(s=subject, x=left[i]), template.format(s=subject, x=right[i])


def duplicate_pair(sentence: str, style: int) -> tuple[str, str]:
    """The same sentence written another way: case, spacing, punctuation or articles."""
    variants = [
        sentence.upper(),
        sentence.lower(),
        "  " + sentence.replace(" ", "   ", 2) + "\n",
        sentence.rstrip(".") + "!",
        sentence.replace(", ", " ").rstrip("."),
        sentence.replace("the ", "a ", 1) if "the " in sentence else "The " + sentence,
        sentence.replace(" the ", " ", 1),
    ]
    return sentence, variants[style % len(variants)]


def generate(seed: int, n: int) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """``n`` distinct pairs ``(kind, older, newer)``, ``n`` true duplicates ``(older, newer)``."""
    rng = random.Random(seed)
    names = subjects(rng, 2 * n + 1)
    kinds = sorted(FAMILIES)
    distinct = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        a, b = distinct_pair(
            kind, rng.randrange(9), rng.randrange(9), names[2 * i], names[2 * i + 1]
        )
        distinct.append((kind, a, b))
    duplicates = []
    for i in range(n):
        kind = rng.choice(kinds)
        sentence, _ = distinct_pair(kind, rng.randrange(9), rng.randrange(9), names[i], names[-1])
        duplicates.append(duplicate_pair(sentence, rng.randrange(9)))
    return distinct, duplicates


async def _older(system: MemorySystem, pairs: list[tuple[str, str]]) -> list[str]:
    first = await system.remember_many(
        [{"content": a, "tags": ["bench/a", "bench/b"]} for a, _ in pairs]
    )
    assert len(first.created) == len(pairs), "the older sides must all be new"
    await system.dream(max_blocks=len(pairs) + 1, no_llm=True)
    return first.created


async def _distinct(root: Path, pairs: list[tuple[str, str]]) -> list[bool]:
    """Whether either side of each pair ended archived."""
    system, _ = await MemorySystem.init(root)
    try:
        older = await _older(system, pairs)
        newer = await system.remember_many([{"content": b} for _, b in pairs])
        assert len(newer.created) == len(pairs), "the newer sides must all be new"
        await system.dream(max_blocks=len(pairs) + 1, no_llm=True)
        archived = {b.id for b in (await system.ls(status="archived")).blocks}
        return [bool({a, b} & archived) for a, b in zip(older, newer.created, strict=True)]
    finally:
        await system.close()


async def _duplicates(root: Path, pairs: list[tuple[str, str]]) -> list[tuple[bool, bool]]:
    """Whether each newer side ended as its older twin (refused by ``remember`` as the same
    text, or archived by dream as ``duplicate-of`` it), and whether ``remember`` refused it."""
    system, _ = await MemorySystem.init(root)
    try:
        older = await _older(system, pairs)
        newer = [await system.remember(b, tags=["bench/b", "bench/a"]) for _, b in pairs]
        result = await system.dream(max_blocks=len(pairs) + 1, no_llm=True)
        twin = {d["id"]: d["of"] for d in result.duplicates}
        return [
            ((r.status == "duplicate" and r.block_id == a) or twin.get(r.block_id) == a,
             r.status == "duplicate")
            for a, r in zip(older, newer, strict=True)
        ]  # fmt: skip
    finally:
        await system.close()


def measure(
    distinct: list[tuple[str, str, str]], duplicates: list[tuple[str, str]], root: Path
) -> Rates:
    """The two rates on real memories under ``root`` (two fresh repositories)."""
    for name in ("distinct", "duplicates"):
        (root / name).mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(root / name)], check=True)
    lost = asyncio.run(_distinct(root / "distinct", [(a, b) for _, a, b in distinct]))
    by_kind = Counter(kind for (kind, _, _), gone in zip(distinct, lost, strict=True) if gone)
    kept = asyncio.run(_duplicates(root / "duplicates", duplicates))
    return Rates(
        sum(k for k, _ in kept) / max(1, len(kept)),
        sum(lost) / max(1, len(lost)),
        dict(by_kind),
        sum(r for _, r in kept),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pairs", type=int, default=120)
    from common import parse  # here: tests import this module as bench.dedupe_bench

    args = parse(parser, {"pairs": 20})
    distinct, duplicates = generate(args.seed, args.pairs)
    with tempfile.TemporaryDirectory() as tmp:
        rates = measure(distinct, duplicates, Path(tmp))
    print(f"seed {args.seed}: {len(duplicates)} true duplicates, {len(distinct)} distinct pairs")
    print("| measure                     | rate   |")
    print("|-----------------------------|--------|")
    print(f"| true duplicates collapsed   | {rates.collapsed:6.1%} |")
    print(f"| distinct facts archived     | {rates.archived:6.1%} |")
    print(
        f"  duplicates refused by remember already: {rates.refused_by_remember}; the rest by dream"
    )
    for kind in sorted(FAMILIES):
        print(f"  archived {kind}: {rates.archived_by_kind.get(kind, 0)}")


if __name__ == "__main__":
    main()
