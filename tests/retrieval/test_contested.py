"""A contested block (five refutations, as many confirmations) ranks below every relevant block
nothing has refuted, and keeps its place by score among the rest."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from elfmem.retrieval import truth
from elfmem.retrieval.ranking import behind_unrefuted, order
from elfmem.retrieval.state import BlockState
from tests.conftest import block_row


def state(confirmed: float = 0.0, refuted: float = 0.0) -> BlockState:
    return BlockState(alpha=0.5 + confirmed, beta=0.5 + refuted)


CONTESTED = state(5, 5)


def _rank(
    relevance: list[float], states: list[BlockState], k: int, seed: int = 0
) -> list[tuple[str, str, str]]:
    rng = np.random.default_rng(seed)
    ids = [f"b{i}" for i in range(len(relevance))]
    vectors = {}
    for i in ids:
        v = rng.normal(size=8)
        vectors[i] = (v / np.linalg.norm(v)).astype(np.float32)
    rows = [block_row(i) for i in ids]
    ranked = order(
        rows,
        np.array(relevance),
        states,
        set(),
        [],
        k,
        lambda q: {i: vectors[i] for i in q},
        use_mmr=False,
    )
    return [(rows[r.index].id, r.tier, r.note) for r in ranked]


def test_a_contested_block_ranks_below_unrefuted_ones_and_above_a_weaker_refuted_one() -> None:
    # b0 is the most relevant but contested; b1, b2 unrefuted; b3 drew one refutation and is
    # less relevant than b0; b4 is refuted.
    states = [CONTESTED, state(), state(2), state(1, 1), state(0, 3)]
    got = _rank([1.0, 0.6, 0.5, 0.4, 0.9], states, 5)
    assert [name for name, _, _ in got] == ["b1", "b2", "b0", "b3", "b4"]
    assert got[2][2] == "contested: refuted as often as confirmed"
    assert got[2][1] == "relevant" and got[4][1] == "refuted"


def test_a_contested_block_leaves_the_top_k_when_k_unrefuted_blocks_bear_on_the_query() -> None:
    states = [CONTESTED] + [state()] * 5
    got = _rank([1.0, 0.6, 0.5, 0.4, 0.3, 0.2], states, 5)
    assert "b0" not in [name for name, _, _ in got]
    # with fewer than k others it is still shown, last: it needs outcomes to settle it
    got = _rank([1.0, 0.6, 0.5], [CONTESTED, state(), state()], 5)
    assert [name for name, _, _ in got] == ["b1", "b2", "b0"]


def test_a_contested_block_never_takes_a_place_above_an_unrefuted_block_past_the_top_k() -> None:
    # b1 drew a refutation and outscores b2, which nothing refuted: the top 2 is b3 and b1, and
    # b0 must not come back above b2 merely because b2 fell past the top 2.
    states = [CONTESTED, state(1, 1), state(), state(2)]
    got = _rank([1.0, 0.9, 0.3, 0.95], states, 2)
    assert [name for name, _, _ in got] == ["b3", "b1"]
    got = _rank([1.0, 0.9, 0.3, 0.95], states, 4)
    assert [name for name, _, _ in got] == ["b3", "b1", "b2", "b0"]


def test_behind_unrefuted_keeps_gains_falling_and_its_length() -> None:
    picks = [(1, 0.8), (2, 0.5), (3, 0.4)]
    out = behind_unrefuted(picks, [0], {1}, [0.9, 0.8, 0.5, 0.4], 3)
    assert [i for i, _ in out] == [1, 0, 2]
    assert [g for _, g in out] == [0.9, 0.8, 0.5]
    assert behind_unrefuted(picks, [], {1}, [0.9, 0.8, 0.5, 0.4], 3) == picks


_states = st.sampled_from(
    [state(), state(1), state(3), state(0, 1), state(1, 2), state(5, 5), state(6, 6), state(0, 3)]
)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    st.lists(st.tuples(st.floats(0.05, 1.0), _states), min_size=1, max_size=10),
    st.integers(1, 10),
    st.integers(0, 1000),
)
def test_the_rule_moves_only_contested_blocks(
    blocks: list[tuple[float, BlockState]], k: int, seed: int
) -> None:
    """The facts the rule could lose: an unrefuted block pushed out by a contested one, or any
    other block moved. Hunt for either, and for a contested block shown above an unrefuted one."""
    relevance = [r for r, _ in blocks]
    states = [s for _, s in blocks]
    got = [name for name, _, _ in _rank(relevance, states, k, seed)]
    plain = [BlockState() if truth.is_contested(s) else s for s in states]
    contested = {f"b{i}" for i, s in enumerate(states) if truth.is_contested(s)}
    unrefuted = {f"b{i}" for i, s in enumerate(states) if truth.is_unrefuted(s)}
    without = [n for n, _, _ in _rank(relevance, plain, len(blocks), seed) if n not in contested]
    shown_others = [n for n in got if n not in contested]
    assert shown_others == without[: len(shown_others)]  # the others keep their order
    assert len(shown_others) == min(k, len(without)) or len(got) == k
    for c in contested & set(got):  # every unrefuted block is shown, and above it
        assert all(u in got and got.index(u) < got.index(c) for u in unrefuted)
    for u in unrefuted & set(without[:k]):
        assert u in got
