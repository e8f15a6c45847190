"""Check the exact-token retrieval set (names.jsonl, names_absent.jsonl) and print its baselines.

The set is built to break a dense retriever: every question is decided by one name, number,
version, identifier, path or date, and each record carries look-alike facts that differ only in
that token. This script refuses the data if a rule in NAMES.md is broken (exit 1), then prints
counts and, for information, R@1/R@5 of plain Okapi BM25 and of the product's embedded embedding
model used alone, so a change to the hybrid retrieval can be judged against both arms.

Run: .venv/bin/python bench/sets/check_names.py            (check + baselines)
     .venv/bin/python bench/sets/check_names.py --no-dense  (skip the embedding baseline)
     .venv/bin/python bench/sets/check_names.py --write-splits  (rewrite the split fields)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from elfmem.index.fulltext import STOP_WORDS

HERE = Path(__file__).resolve().parent
NAMES = HERE / "names.jsonl"
ABSENT = HERE / "names_absent.jsonl"
Record = dict[str, Any]

KINDS = ("version", "number", "name", "identifier", "path", "date")
MIN_PER_KIND = {"version": 20, "number": 20, "name": 20, "identifier": 20, "path": 20, "date": 10}
MIN_RECORDS, MIN_ABSENT, MIN_DOMAINS = 120, 30, 8
FIELDS = {"id", "domain", "kind", "fact", "cue", "question", "lookalikes", "split"}
ABSENT_FIELDS = {"id", "kind", "question"}
SPLITS = ("tune", "report")

WORD = re.compile(r"[a-z0-9]+")
IDENT = re.compile(r"[a-z0-9~/][a-z0-9_./:~-]*[a-z0-9/]")
"""An identifier or path is a run of word characters joined by - _ . / : ~ (INC-4471,
infra/nginx/conf.d/limits.conf, 10.0.14.27); it must contain one of those joiners."""


# ---------------------------------------------------------------- tokens


def words(text: str) -> list[str]:
    """Lower-cased [a-z0-9]+ tokens without the product's lexical stop words and single letters
    (the ``s`` of ``Lena's``), as elfmem.index.fulltext drops them."""
    return [
        w for w in WORD.findall(text.lower()) if w not in STOP_WORDS and (len(w) > 1 or w.isdigit())
    ]


def identifiers(text: str) -> list[str]:
    """Whole identifiers and paths in ``text`` (lower-cased), trailing sentence dots stripped."""
    found = (m.rstrip(".:") for m in IDENT.findall(text.lower()))
    return [m for m in found if re.search(r"[^a-z0-9]", m)]


def has_word(text: str, word: str) -> bool:
    return word in set(WORD.findall(text.lower()))


def has_identifier(text: str, ident: str) -> bool:
    """``ident`` occurs whole: not inside a longer identifier (a trailing ``.x`` is allowed, so a
    host name pg-ledger-02 is found in pg-ledger-02.prod.internal)."""
    pattern = r"(?<![a-z0-9_./~-])" + re.escape(ident) + r"(?![a-z0-9_/-])"
    return re.search(pattern, text.lower()) is not None


def decisive_tokens(question: str, fact: str, lookalikes: Sequence[str]) -> list[str]:
    """Question tokens found in the fact and in none of the look-alikes."""
    out = []
    for w in dict.fromkeys(words(question)):
        if has_word(fact, w) and not any(has_word(la, w) for la in lookalikes):
            out.append(w)
    for ident in dict.fromkeys(identifiers(question)):
        if has_identifier(fact, ident) and not any(has_identifier(la, ident) for la in lookalikes):
            out.append(ident)
    return out


# ---------------------------------------------------------------- loading and rules


def load(path: Path) -> list[Record]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                sys.exit(f"{path.name}:{n}: not JSON: {exc}")
    return rows


def expected_splits(records: Sequence[Record]) -> dict[str, str]:
    """Per kind, ids ordered by sha256(id): the first half (rounded up) tune, the rest report."""
    out: dict[str, str] = {}
    for kind in KINDS:
        ids = sorted(
            (str(r["id"]) for r in records if r.get("kind") == kind),
            key=lambda i: hashlib.sha256(i.encode()).hexdigest(),
        )
        half = (len(ids) + 1) // 2
        out.update({i: ("tune" if n < half else "report") for n, i in enumerate(ids)})
    return out


def n_words(text: object) -> int:
    return len(str(text).split())


def check_record(r: Record, split: str | None) -> list[str]:
    rid = r.get("id", "?")
    errs = []
    if set(r) != FIELDS:
        errs.append(f"{rid}: fields {sorted(r)} != {sorted(FIELDS)}")
        return errs
    if not re.fullmatch(r"n\d{3}", str(rid)):
        errs.append(f"{rid}: id must look like n001")
    if r["kind"] not in KINDS:
        errs.append(f"{rid}: kind {r['kind']!r} not in {KINDS}")
    if not isinstance(r["domain"], str) or not r["domain"]:
        errs.append(f"{rid}: domain must be a non-empty string")
    if not 8 <= n_words(r["fact"]) <= 30:
        errs.append(f"{rid}: fact has {n_words(r['fact'])} words, want 8-30")
    if not 3 <= n_words(r["cue"]) <= 10:
        errs.append(f"{rid}: cue has {n_words(r['cue'])} words, want 3-10")
    if not str(r["question"]).strip():
        errs.append(f"{rid}: empty question")
    las = r["lookalikes"]
    if not isinstance(las, list) or not 3 <= len(las) <= 5:
        errs.append(f"{rid}: want 3-5 lookalikes")
        return errs
    if len(set(las)) != len(las):
        errs.append(f"{rid}: repeated lookalike")
    for la in las:
        if not isinstance(la, str) or la.strip().lower() == str(r["fact"]).strip().lower():
            errs.append(f"{rid}: lookalike equals the fact or is not a string: {la!r}")
    if not decisive_tokens(str(r["question"]), str(r["fact"]), las):
        errs.append(f"{rid}: no question token is in the fact and in none of its lookalikes")
    if r["split"] != split:
        errs.append(f"{rid}: split {r['split']!r}, the sha256 rule says {split!r}")
    return errs


def check_names(records: list[Record]) -> list[str]:
    errs = []
    ids = [str(r.get("id")) for r in records]
    errs += [f"{i}: duplicate id" for i, c in Counter(ids).items() if c > 1]
    splits = expected_splits(records)
    for r in records:
        errs += check_record(r, splits.get(str(r.get("id"))))
    facts = {str(r.get("fact", "")).strip().lower(): r.get("id") for r in records}
    repeated = Counter(str(r.get("fact", "")).strip().lower() for r in records)
    errs += [f"{facts[f]}: its fact is in {c} records" for f, c in repeated.items() if c > 1]
    seen: Record = {}
    for r in records:
        for la in r.get("lookalikes") or []:
            key = str(la).strip().lower()
            if key in facts and facts[key] != r.get("id"):
                errs.append(f"{r['id']}: lookalike is the fact of {facts[key]}: {la!r}")
            if key in seen and seen[key] != r.get("id"):
                errs.append(f"{r['id']}: lookalike repeats one of {seen[key]}: {la!r}")
            seen[key] = r.get("id")
    errs += check_counts(records)
    return errs


def check_counts(records: Sequence[Record]) -> list[str]:
    errs = []
    if len(records) < MIN_RECORDS:
        errs.append(f"{len(records)} records, want at least {MIN_RECORDS}")
    kinds = Counter(r.get("kind") for r in records)
    for kind, least in MIN_PER_KIND.items():
        if kinds[kind] < least:
            errs.append(f"{kinds[kind]} records of kind {kind}, want at least {least}")
    domains = {r.get("domain") for r in records}
    if len(domains) < MIN_DOMAINS:
        errs.append(f"{len(domains)} domains, want at least {MIN_DOMAINS}")
    return errs


def stored_texts(records: Sequence[Record]) -> list[str]:
    return [str(r["fact"]) for r in records] + [str(la) for r in records for la in r["lookalikes"]]


def check_absent(absent: list[Record], records: Sequence[Record]) -> list[str]:
    """An absent question names something stored nowhere (one of its tokens is in no fact or
    look-alike) while sharing topic words with the stored facts."""
    errs = []
    ids = [str(a.get("id")) for a in absent]
    errs += [f"{i}: duplicate absent id" for i, c in Counter(ids).items() if c > 1]
    if len(absent) < MIN_ABSENT:
        errs.append(f"{len(absent)} absent questions, want at least {MIN_ABSENT}")
    texts = stored_texts(records)
    vocab = {w for t in texts for w in words(t)}
    for a in absent:
        aid = a.get("id", "?")
        if set(a) != ABSENT_FIELDS:
            errs.append(f"{aid}: fields {sorted(a)} != {sorted(ABSENT_FIELDS)}")
            continue
        if not re.fullmatch(r"na\d{2,3}", str(aid)) or a["kind"] not in KINDS:
            errs.append(f"{aid}: bad id or kind")
        q = str(a["question"])
        missing = [w for w in words(q) if w not in vocab]
        missing += [i for i in identifiers(q) if not any(has_identifier(t, i) for t in texts)]
        if not missing:
            errs.append(f"{aid}: every token of the question is stored somewhere; not absent")
        if sum(w in vocab for w in words(q)) < 1:
            errs.append(f"{aid}: shares no word with the stored facts")
    return errs


# ---------------------------------------------------------------- baselines


def bm25_scores(
    docs: Sequence[list[str]], k1: float = 1.5, b: float = 0.75
) -> Callable[[list[str]], list[float]]:
    """Okapi BM25 over token lists; returns a scorer for a tokenised query."""
    n = len(docs)
    avgdl = sum(map(len, docs)) / n
    df = Counter(w for d in docs for w in set(d))
    idf = {w: math.log((n - c + 0.5) / (c + 0.5) + 1.0) for w, c in df.items()}
    tfs = [Counter(d) for d in docs]
    norms = [k1 * (1 - b + b * len(d) / avgdl) for d in docs]

    def score(query: list[str]) -> list[float]:
        out = []
        for tf, norm in zip(tfs, norms, strict=True):
            s = 0.0
            for w in query:
                f = tf.get(w, 0)
                if f:
                    s += idf[w] * f * (k1 + 1) / (f + norm)
            out.append(s)
        return out

    return score


def rank_of(scores: Sequence[float], target: int) -> int:
    """1-based rank of ``target``; ties count against it (every equal score ranks above)."""
    mine = scores[target]
    return 1 + sum(1 for i, s in enumerate(scores) if i != target and s >= mine)


def index_docs(records: Sequence[Record]) -> tuple[list[str], list[int]]:
    """All facts and look-alikes, each followed by its record's cue; returns texts and, per
    record, the position of its fact."""
    docs: list[str] = []
    fact_at: list[int] = []
    for r in records:
        fact_at.append(len(docs))
        docs.append(f"{r['fact']} {r['cue']}")
        docs += [f"{la} {r['cue']}" for la in r["lookalikes"]]
    return docs, fact_at


def bm25_ranks(
    records: Sequence[Record], absent: Sequence[Record]
) -> tuple[list[int], list[float], list[float]]:
    docs, fact_at = index_docs(records)
    score = bm25_scores([words(d) for d in docs])
    ranks, top_present = [], []
    for r, at in zip(records, fact_at, strict=True):
        s = score(words(str(r["question"])))
        ranks.append(rank_of(s, at))
        top_present.append(max(s))
    top_absent = [max(score(words(str(a["question"])))) for a in absent]
    return ranks, top_present, top_absent


def dense_ranks(
    records: Sequence[Record], absent: Sequence[Record]
) -> tuple[list[int], list[float], list[float]]:
    from elfmem.adapters.embedding import make_embedder, normalise_rows

    docs, fact_at = index_docs(records)
    embedder = make_embedder(None)
    print(f"dense model: {embedder.identity}")
    d = normalise_rows(embedder.embed(docs))
    q = normalise_rows(embedder.embed([str(r["question"]) for r in records]))
    qa = normalise_rows(embedder.embed([str(a["question"]) for a in absent]))
    sims = q @ d.T
    ranks = [rank_of(list(sims[i]), at) for i, at in enumerate(fact_at)]
    return ranks, [float(x) for x in sims.max(axis=1)], [float(x) for x in (qa @ d.T).max(axis=1)]


# ---------------------------------------------------------------- report


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [list(map(str, header))] + [list(map(str, r)) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    print(f"\n{title}")
    for n, row in enumerate(cells):
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
        if n == 0:
            print("  " + "  ".join("-" * w for w in widths))


def print_counts(records: Sequence[Record], absent: Sequence[Record]) -> None:
    by = Counter((r["kind"], r["split"]) for r in records)
    rows = [
        [k, by[(k, "tune")], by[(k, "report")], by[(k, "tune")] + by[(k, "report")]] for k in KINDS
    ]
    rows.append(
        [
            "all",
            sum(by[(k, "tune")] for k in KINDS),
            sum(by[(k, "report")] for k in KINDS),
            len(records),
        ]
    )
    table("records per kind and split", ["kind", "tune", "report", "total"], rows)
    domains = Counter((r["domain"], r["kind"]) for r in records)
    names = sorted({str(r["domain"]) for r in records})
    table(
        "records per domain and kind",
        ["domain", *KINDS, "total"],
        [
            [d, *[domains[(d, k)] for k in KINDS], sum(domains[(d, k)] for k in KINDS)]
            for d in names
        ],
    )
    ak = Counter(a["kind"] for a in absent)
    table("absent questions per kind", ["kind", "count"], [[k, ak[k]] for k in KINDS])


def recall_rows(records: Sequence[Record], ranks: dict[str, list[int]]) -> list[list[object]]:
    groups: list[tuple[str, str | None, str | None]] = [("all", None, None)]
    groups += [(f"split={s}", "split", s) for s in SPLITS]
    groups += [(f"kind={k}", "kind", k) for k in KINDS]
    rows: list[list[object]] = []
    for label, field, value in groups:
        idx = [i for i, r in enumerate(records) if field is None or r[field] == value]
        row: list[object] = [label, len(idx)]
        for rk in ranks.values():
            row += [
                f"{sum(rk[i] <= 1 for i in idx) / len(idx):.3f}",
                f"{sum(rk[i] <= 5 for i in idx) / len(idx):.3f}",
            ]
        rows.append(row)
    return rows


def median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    return (s[len(s) // 2] + s[(len(s) - 1) // 2]) / 2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-dense", action="store_true", help="skip the embedding baseline")
    parser.add_argument("--names", type=Path, default=NAMES, help="the records file")
    parser.add_argument("--absent", type=Path, default=ABSENT, help="the absent questions file")
    parser.add_argument(
        "--write-splits",
        action="store_true",
        help="rewrite each record's split by the sha256 rule, then check",
    )
    args = parser.parse_args()
    records, absent = load(args.names), load(args.absent)
    if args.write_splits:
        splits = expected_splits(records)
        args.names.write_text(
            "".join(
                json.dumps({**r, "split": splits[str(r["id"])]}, ensure_ascii=False) + "\n"
                for r in records
            ),
            encoding="utf-8",
        )
        records = load(args.names)
    errs = check_names(records) + check_absent(absent, records)
    if errs:
        print(f"{len(errs)} violation(s):")
        print("\n".join(f"  {e}" for e in errs))
        return 1
    print(
        f"ok: {len(records)} records, {sum(len(r['lookalikes']) for r in records)} lookalikes, "
        f"{len(absent)} absent questions, {len({r['domain'] for r in records})} domains"
    )
    print_counts(records, absent)
    ranks: dict[str, list[int]] = {}
    tops: list[list[object]] = []
    ranks["bm25"], present, missing = bm25_ranks(records, absent)
    tops.append(["bm25", f"{median(present):.3f}", f"{median(missing):.3f}"])
    if not args.no_dense:
        ranks["dense"], present, missing = dense_ranks(records, absent)
        tops.append(["dense", f"{median(present):.3f}", f"{median(missing):.3f}"])
    header = ["group", "n"] + [f"{m} {k}" for m in ranks for k in ("R@1", "R@5")]
    docs = len(records) + sum(len(r["lookalikes"]) for r in records)
    table(
        f"retrieval of the fact among {docs} facts + lookalikes (each text + its cue; ties "
        "count against)",
        header,
        recall_rows(records, ranks),
    )
    table(
        "median top-1 score (informational: present questions vs absent ones)",
        ["method", "present", "absent"],
        tops,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
