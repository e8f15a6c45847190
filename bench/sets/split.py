"""The tune/report split of paraphrase.jsonl, deterministic and balanced per domain.

Within each domain the records are ordered by sha256 of their id; the first half (rounded up on
odd counts in alternate domains, by domain name order) is ``tune``, the rest ``report``. Tune a
method on ``tune`` only; quote ``report``.

    .venv/bin/python bench/sets/split.py   # rewrites the split field of paraphrase.jsonl in place
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def assign(records: list[dict[str, Any]]) -> dict[str, str]:
    """{id: "tune" | "report"} for every record."""
    by_domain: dict[str, list[str]] = defaultdict(list)
    for r in records:
        by_domain[r["domain"]].append(r["id"])
    out: dict[str, str] = {}
    odd = 0
    for domain in sorted(by_domain):
        ids = sorted(by_domain[domain], key=lambda i: hashlib.sha256(i.encode()).hexdigest())
        half = len(ids) // 2
        if len(ids) % 2:
            half += odd % 2 == 0  # odd domains take the extra one in turn, tune first
            odd += 1
        out.update({i: "tune" if n < half else "report" for n, i in enumerate(ids)})
    return out


def main() -> None:
    path = HERE / "paraphrase.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    split = assign(records)
    keys = ("id", "domain", "split", "fact", "cue", "question")
    with path.open("w", encoding="utf-8") as f:
        for r in records:
            r["split"] = split[r["id"]]
            f.write(json.dumps({k: r[k] for k in keys}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
