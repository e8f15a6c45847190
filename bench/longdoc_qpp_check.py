"""The agreement rule of `bench/longdoc_qpp.py` through the product path (issue 15, ninth session).

``qpp-agree`` (the replay) sets score fusion's lexical share per question from how many blocks
the lexical and the dense lists have in common in their top five (``k``, 0-5):
``share = 0.2 + step x (2 - k)`` (main's 0.2 at the median k; late share 0.1 and the dense share
the rest, as main; every replay fold chose step 0.05, ``0.3 - 0.05 x k``). This script runs
``bench/longdoc.py`` with variants ``qpp-agree-<step>`` (0.025, 0.05, 0.075) that do that
inside the product's own fusion: ``fusechoice.similarity`` is wrapped so that, when it takes the
score path, it first rebuilds the two lists the product fuses (the smoothed bm25 over the
candidates and the dense list with the fill, both best first) and passes the share their top
fives give. Nothing in ``elfmem/`` changes; the ``default`` variant beside it is main.

    python bench/longdoc_qpp_check.py [--data ../shared/bench/locomo-dev.json] \\
        --variant default --variant qpp-agree-0.025 --variant qpp-agree-0.05 \
        --variant qpp-agree-0.075 [--out bench/out/longdoc_qpp.jsonl]

The steps take part in ``longdoc.py``'s held-out choice beside ``default`` (leave one
conversation out, per form and one setting for both forms).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import longdoc  # noqa: E402

from elfmem.index.termhits import term_hits  # noqa: E402
from elfmem.retrieval import fusechoice  # noqa: E402
from elfmem.retrieval.settings import SearchSettings  # noqa: E402
from elfmem.rhythms import recall as recall_mod  # noqa: E402

TOP = 5
MEDIAN_SHARE, MEDIAN_K = 0.2, 2
"""share = 0.2 + step x (2 - blocks in both lists' top five): main's share at the median k."""
STEPS = (0.025, 0.05, 0.075)
AGREE = {f"qpp-agree-{s:g}": (SearchSettings(), s) for s in STEPS}
"""Each variant's settings (main's, told apart by identity) and step."""
_ON: dict[str, float] = {"step": 0.0}
_similarity = fusechoice.similarity
_frame = recall_mod.frame


def agreement_share(
    db: Any,
    candidates: Any,
    lexical: Any,
    dense: Any,
    query: str,
    field_weights: Any,
    cosines: Any,
    step: float,
) -> float:
    lex = fusechoice.smoothed_lexical(term_hits(db, query, list(candidates), field_weights))
    den = fusechoice.filled_dense(dense, list(lex), cosines) if cosines else dict(dense)
    ranked = sorted(den, key=lambda b: (-den[b], b))
    both = len(set(list(lex)[:TOP]) & set(ranked[:TOP]))
    return min(0.6, max(0.05, MEDIAN_SHARE + step * (MEDIAN_K - both)))


def similarity(db, fuse_by, candidates, lexical, dense, rrf, share, **kw):  # type: ignore[no-untyped-def]
    query = kw.get("query", "")
    if (
        _ON["step"]
        and query
        and lexical
        and kw.get("idf", "smooth") == "smooth"
        and fusechoice.chosen(db, list(lexical), fuse_by) == "score"
    ):
        share = agreement_share(
            db,
            candidates,
            lexical,
            dense,
            query,
            kw.get("field_weights"),
            kw.get("cosines"),
            _ON["step"],
        )
    return _similarity(db, fuse_by, candidates, lexical, dense, rrf, share, **kw)


def frame(*args: Any, **kw: Any) -> Any:
    mine = [step for settings, step in AGREE.values() if kw.get("settings") is settings]
    _ON["step"] = mine[0] if mine else 0.0
    try:
        return _frame(*args, **kw)
    finally:
        _ON["step"] = 0.0


if __name__ == "__main__":
    fusechoice.similarity = similarity
    recall_mod.frame = frame
    longdoc.VARIANTS.update({name: settings for name, (settings, _) in AGREE.items()})
    longdoc.TUNED = (*longdoc.TUNED, "qpp-")  # held out over default and the steps
    asyncio.run(longdoc.main())
