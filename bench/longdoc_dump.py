"""Dump what the long-document fusion sees for every question, for ``bench/longdoc_replay.py``.

python bench/longdoc_dump.py [--data ../shared/bench/locomo-dev.json] [--form session]...
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pickle
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import longdoc  # noqa: E402

from elfmem.api import MemorySystem  # noqa: E402
from elfmem.index import queries, vector_store  # noqa: E402
from elfmem.index.termhits import term_hits  # noqa: E402
from elfmem.retrieval import fusechoice  # noqa: E402
from elfmem.rhythms import recall as recall_mod  # noqa: E402


async def dump(form: str, data: list, out: Path) -> None:
    blocks, questions = longdoc.corpus(data, form)
    with tempfile.TemporaryDirectory() as tmp:
        system, _ = await MemorySystem.init(Path(tmp))
        items = [{"content": b["text"], "cue": f"said on {b['date']}"} for b in blocks]
        await system.remember_many(items)
        await system.dream(max_blocks=len(items) + 1, no_llm=True)
        core = system._core
        db = core.db()
        by_content = {b["text"]: k for k, b in enumerate(blocks)}
        rows = queries.list_blocks(db)
        id_to_k = {r.id: by_content[r.content] for r in rows if r.content in by_content}
        captured: dict = {}
        orig = fusechoice.similarity

        def spy(db_, fuse_by, candidates, lexical, dense, rrf, share, **kw):
            out_ = orig(db_, fuse_by, candidates, lexical, dense, rrf, share, **kw)
            captured.setdefault("calls", []).append(
                {"cands": list(candidates), "lex": dict(lexical), "dense": dict(dense)}
            )
            return out_

        fusechoice.similarity = spy
        vs = vector_store(db)
        per_q = []
        for q in questions:
            captured.clear()
            res = recall_mod.frame(core, "attention", q["q"], top_k=10, reinforce=False)
            ranked = [by_content[b.content] for b in res.ranked if b.content in by_content]
            qv = np.asarray(core.embedder.embed([q["q"]])[0], dtype=np.float32)
            calls = captured["calls"]
            cands = calls[-1]["cands"]
            th = term_hits(db, q["q"], [b for b in id_to_k], None)
            per_q.append(
                {
                    **q,
                    "ranked": ranked,
                    "qv": qv,
                    "first": {id_to_k[b]: v for b, v in calls[0]["dense"].items() if b in id_to_k},
                    "dense": {id_to_k[b]: v for b, v in calls[-1]["dense"].items() if b in id_to_k},
                    "lex": {id_to_k[b]: v for b, v in calls[-1]["lex"].items() if b in id_to_k},
                    "cands": [id_to_k[b] for b in cands if b in id_to_k],
                    "terms": {
                        t: {id_to_k[b]: v for b, v in parts.items() if b in id_to_k}
                        for t, parts in th.parts.items()
                    },
                    "holding": dict(th.holding),
                    "rows": th.rows,
                }
            )
        fusechoice.similarity = orig
        snap = vs._snap
        row_k = np.array([id_to_k.get(i, -1) for i in snap.ids])
        pas = {
            "block_matrix": np.asarray(snap.matrix),
            "block_k": row_k,
            "passages": np.asarray(snap.passages),
            "owner_k": row_k[snap.owners],
        }
        await system.close()
    with out.open("wb") as fh:
        pickle.dump({"blocks": blocks, "questions": per_q, "vectors": pas}, fh)
    print(form, len(per_q), "questions dumped", flush=True)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=longdoc.DEFAULT_DATA)
    ap.add_argument("--form", action="append", choices=("session", "joined"), default=None)
    args = ap.parse_args()
    data = json.loads(args.data.read_text())
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    for form in args.form or ["session", "joined"]:
        await dump(form, data, out / f"longdoc_{form}.pkl")


if __name__ == "__main__":
    asyncio.run(main())
