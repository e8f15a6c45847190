"""Checker for the paraphrase retrieval set (bench/sets/README.md).

Exits non-zero on any violation, and prints a summary table. It checks:

* the schema of paraphrase.jsonl, distractors.jsonl and absent.jsonl, unique ids, minimum counts
  (per file and per domain), the tune/report split;
* that no question shares a content term with its fact and cue: words lower-cased, stop words
  removed (the product's ``STOP_WORDS`` plus the function words below), then stemmed by SQLite
  FTS5's own ``porter`` tokenizer (the one the product's index uses), read back through an
  ``fts5vocab`` table;
* that the product's lexical search alone (``elfmem.index.fulltext.lexical`` over a real memory
  holding every fact with its cue and every distractor, built with ``remember_many`` and ``dream``
  with no LLM) returns none of the answers: the set exists to break a word-overlap retriever.

    .venv/bin/python bench/sets/check.py [--skip-memory]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sqlite3
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from elfmem.index.fulltext import STOP_WORDS, lexical

sys.path.insert(0, str(Path(__file__).resolve().parent))
import split as split_mod  # noqa: E402

HERE = Path(__file__).resolve().parent
MIN_PARAPHRASE, MIN_DISTRACTORS, MIN_ABSENT = 180, 1100, 60
MIN_DOMAINS, MIN_PER_DOMAIN = 9, 15
FACT_WORDS, CUE_WORDS = (8, 30), (3, 10)

FUNCTION_WORDS = frozenset(
    """about above after again against all also am any anyone anything because before being below
    between both do doing done down during each else even ever every few further get gets got
    here hers herself him himself his how's i'd i'll i'm i've just let lets more most much must
    myself no nor now off once only other ought ours ourselves out over own same she she'd shall
    some still such theirs themselves through too under until up upon us very via was wasn't
    whom whose yet yours yourself yourselves s t d ll m re ve don doesn didn isn aren won""".split()
)
"""Common function words the checker drops besides the product's ``STOP_WORDS``: the rule is about
content words. The lexical check below uses the product's own query, so a shared function word
outside ``STOP_WORDS`` still fails there."""

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """Lower-cased words less stop and function words, as the product's query builds them."""
    out = []
    for w in _WORD.findall(text.casefold()):
        w = w.strip("_")
        if w and w not in STOP_WORDS and w not in FUNCTION_WORDS and (len(w) > 1 or w.isdigit()):
            out.append(w)
    return out


class Stemmer:
    """Porter stems from SQLite FTS5's ``porter unicode61 remove_diacritics 2`` tokenizer."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(
            "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')"
        )
        self.conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        self.cache: dict[str, set[str]] = {}

    def terms(self, text: str, content_only: bool = True) -> set[str]:
        """The stemmed terms of ``text``: its content words only, or (``content_only`` False)
        every word, as the index stores them."""
        key = " ".join(words(text)) if content_only else text
        if key not in self.cache:
            self.conn.execute("DELETE FROM t")
            self.conn.execute("INSERT INTO t(rowid, x) VALUES (1, ?)", (key,))
            self.cache[key] = {r[0] for r in self.conn.execute("SELECT DISTINCT term FROM v")}
        return self.cache[key]


def load(name: str) -> list[dict[str, Any]]:
    rows = []
    with (HERE / name).open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise SystemExit(f"{name}:{n}: not JSON: {e}") from e
    return rows


def check_schema(
    name: str, rows: list[dict[str, Any]], keys: set[str], problems: list[str]
) -> None:
    seen: set[str] = set()
    for r in rows:
        rid = r.get("id", "?")
        if set(r) != keys:
            problems.append(f"{name} {rid}: keys {sorted(r)} != {sorted(keys)}")
            continue
        if not all(isinstance(r[k], str) and r[k].strip() for k in keys):
            problems.append(f"{name} {rid}: every field must be a non-empty string")
        if rid in seen:
            problems.append(f"{name} {rid}: duplicate id")
        seen.add(rid)
        for field, (lo, hi) in (("fact", FACT_WORDS), ("cue", CUE_WORDS)):
            if field in r:
                n = len(r[field].split())
                if not lo <= n <= hi:
                    problems.append(f"{name} {rid}: {field} has {n} words, wants {lo}-{hi}")


def check_counts(
    para: list[dict[str, Any]],
    dis: list[dict[str, Any]],
    absent: list[dict[str, Any]],
    problems: list[str],
) -> None:
    for name, rows, least in (
        ("paraphrase", para, MIN_PARAPHRASE),
        ("distractors", dis, MIN_DISTRACTORS),
        ("absent", absent, MIN_ABSENT),
    ):
        if len(rows) < least:
            problems.append(f"{name}: {len(rows)} records, wants at least {least}")
    per = Counter(r["domain"] for r in para)
    big = [d for d, n in per.items() if n >= MIN_PER_DOMAIN]
    if len(big) < MIN_DOMAINS:
        problems.append(
            f"paraphrase: {len(big)} domains with >= {MIN_PER_DOMAIN}, wants {MIN_DOMAINS}"
        )
    facts = Counter(r["fact"].casefold() for r in [*para, *dis])
    problems += [f"fact stored twice: {f!r}" for f, n in facts.items() if n > 1]
    questions = Counter(r["question"].casefold() for r in [*para, *absent])
    problems += [f"question asked twice: {q!r}" for q, n in questions.items() if n > 1]
    wanted = split_mod.assign(para)
    for r in para:
        if r["split"] != wanted[r["id"]]:
            problems.append(
                f"paraphrase {r['id']}: split {r['split']!r}, wants {wanted[r['id']]!r}"
            )


def check_overlap(para: list[dict[str, Any]], problems: list[str]) -> None:
    stem = Stemmer()
    for r in para:
        # the fact side keeps every word: the index does ("ones" stems to "on")
        shared = stem.terms(r["question"]) & stem.terms(f"{r['fact']} {r['cue']}", False)
        if shared:
            problems.append(f"paraphrase {r['id']}: question shares {sorted(shared)} with fact+cue")
        if not stem.terms(r["question"]):
            problems.append(f"paraphrase {r['id']}: question has no content word")


async def lexical_hits(
    para: list[dict[str, Any]], dis: list[dict[str, Any]], absent: list[dict[str, Any]]
) -> tuple[list[str], dict[str, int], dict[str, int]]:
    """(problems, hits per paraphrase question, hits per absent question) from the product's
    lexical search over a real memory of every fact and distractor."""
    from elfmem.api import MemorySystem

    problems: list[str] = []
    items = [{"content": r["fact"], "cue": r["cue"]} for r in [*para, *dis]]
    with tempfile.TemporaryDirectory() as tmp:
        system, _ = await MemorySystem.init(Path(tmp))
        batch = await system.remember_many(items)
        if batch.duplicates or len(batch.created) != len(items):
            problems.append(f"memory: {len(batch.duplicates)} items skipped as duplicates")
        await system.dream(max_blocks=len(items) + 1, no_llm=True)
        answer = {bid: r["id"] for bid, r in zip(batch.created, para, strict=False)}
        db = system._core.db()
        alive = {row[0]: row[1] for row in db.conn.execute("SELECT id, status FROM blocks")}
        for bid, rid in answer.items():
            if alive.get(bid) != "active":
                problems.append(f"paraphrase {rid}: block {alive.get(bid) or 'gone'} after dream")
        para_hits: dict[str, int] = {}
        for r, bid in zip(para, batch.created, strict=False):
            hits = [b for b, _ in lexical(db, r["question"], 10_000, None)]
            para_hits[r["id"]] = len(hits)
            if bid in hits:
                problems.append(f"paraphrase {r['id']}: lexical search returns its answer")
        absent_hits = {r["id"]: len(lexical(db, r["question"], 10_000, None)) for r in absent}
        await system.close()
    return problems, para_hits, absent_hits


def table(
    para: list[dict[str, Any]], dis: list[dict[str, Any]], absent: list[dict[str, Any]]
) -> str:
    domains = sorted({r["domain"] for r in [*para, *dis, *absent]})
    head = f"{'domain':<22} {'para':>5} {'tune':>5} {'report':>6} {'distr':>6} {'absent':>6}"
    lines = [head, "-" * len(head)]

    def row(name: str, p: list[dict[str, Any]], d: list[Any], a: list[Any]) -> str:
        tune = sum(1 for r in p if r["split"] == "tune")
        return f"{name:<22} {len(p):>5} {tune:>5} {len(p) - tune:>6} {len(d):>6} {len(a):>6}"

    for dom in domains:
        lines.append(
            row(
                dom,
                [r for r in para if r["domain"] == dom],
                [r for r in dis if r["domain"] == dom],
                [r for r in absent if r["domain"] == dom],
            )
        )
    lines.append("-" * len(head))
    lines.append(row("total", para, dis, absent))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--skip-memory", action="store_true", help="skip the lexical search check")
    args = ap.parse_args()
    para = load("paraphrase.jsonl")
    dis = load("distractors.jsonl")
    absent = load("absent.jsonl")
    problems: list[str] = []
    check_schema("paraphrase", para, {"id", "domain", "fact", "cue", "question", "split"}, problems)
    check_schema("distractors", dis, {"id", "domain", "fact", "cue"}, problems)
    check_schema("absent", absent, {"id", "domain", "question"}, problems)
    if problems:
        print("\n".join(problems))
        return 1
    check_counts(para, dis, absent, problems)
    check_overlap(para, problems)
    print(table(para, dis, absent))
    if not args.skip_memory:
        lex_problems, para_hits, absent_hits = asyncio.run(lexical_hits(para, dis, absent))
        problems += lex_problems
        with_hits = sum(1 for n in para_hits.values() if n)
        print(
            f"\nlexical search (product's FTS5 bm25, all {len(para) + len(dis)} blocks):"
            f"\n  paraphrase questions with any lexical hit: {with_hits}/{len(para)}"
            f" (incidental overlap with distractors; mean {sum(para_hits.values()) / len(para):.1f}"
            " hits per question); answers hit: "
            f"{sum(1 for p in lex_problems if 'returns its answer' in p)}"
        )
        by_dom: dict[str, list[int]] = defaultdict(list)
        for r in absent:
            by_dom[r["domain"]].append(absent_hits[r["id"]])
        a_with = sum(1 for n in absent_hits.values() if n)
        print(
            f"  absent questions with any lexical hit: {a_with}/{len(absent)}"
            f" (mean {sum(absent_hits.values()) / max(len(absent), 1):.1f} hits per question)"
        )
    if problems:
        print(f"\n{len(problems)} problem(s):")
        print("\n".join(problems))
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
