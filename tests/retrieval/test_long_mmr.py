"""MMR and long documents: two long blocks never pay the diversity penalty for resembling each
other (their whole-block vectors are means over many passages); short blocks still do."""

from __future__ import annotations

import numpy as np

from elfmem.index.passagevecs import LONG_BLOCK_CHARS
from elfmem.retrieval.ranking import order
from elfmem.retrieval.state import PRIOR
from tests.conftest import block_row

# a·b = 0.85 (below the near-twin cut, so no twin exemption), a·c = 0.5
VECTORS = {
    "a": np.array([1.0, 0.0, 0.0], dtype=np.float32),
    "b": np.array([0.85, float(np.sqrt(1 - 0.85**2)), 0.0], dtype=np.float32),
    "c": np.array([0.5, -0.5, float(np.sqrt(0.5))], dtype=np.float32),
}


def _order(length: int) -> list[str]:
    rows = [block_row(i, i * length) for i in ("a", "b", "c")]
    ranked = order(
        rows,
        np.array([1.0, 0.95, 0.9]),
        [PRIOR] * 3,
        set(),
        [],
        3,
        lambda ids: {i: VECTORS[i] for i in ids},
    )
    return [rows[r.index].id for r in ranked]


def test_short_blocks_still_pay_for_resembling_a_pick() -> None:
    # b: 0.7·0.95 − 0.3·0.85 = 0.41;  c: 0.7·0.9 − 0.3·0.5 = 0.48 → c before b
    assert _order(200) == ["a", "c", "b"]


def test_long_documents_keep_their_relevance_order() -> None:
    assert _order(LONG_BLOCK_CHARS + 1) == ["a", "b", "c"]
