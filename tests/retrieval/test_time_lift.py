"""A time the question names lifts the blocks said then, but only among blocks that bear on the
question about as much: never past one ahead of it by more than 0.15 of the top."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from elfmem.retrieval.ranking import lift_in_time
from elfmem.retrieval.settings import TIME_BOOST, TIME_LIFT_MAX

relevance = st.lists(st.floats(0.01, 1.0), min_size=2, max_size=30)


def test_the_date_decides_among_blocks_that_bear_on_the_question_alike() -> None:
    rel = np.array([1.0, 0.97, 0.95])
    lifted = lift_in_time(rel, [False, False, True], TIME_BOOST, TIME_LIFT_MAX)
    assert int(np.argmax(lifted)) == 2
    assert lifted.max() == 1.0  # the top keeps its value


def test_a_block_that_bears_on_the_question_much_less_stays_behind() -> None:
    # long sessions of another conversation said in the named time, at 0.8 of the answer: the
    # bare multiplier (1.5) put them first
    rel = np.array([1.0, 0.81, 0.8, 0.78])
    lifted = lift_in_time(rel, [False, True, True, True], TIME_BOOST, TIME_LIFT_MAX)
    assert int(np.argmax(lifted)) == 0
    assert list(np.argsort(-lifted)) == [0, 1, 2, 3]


def test_a_time_that_holds_every_candidate_or_none_changes_nothing() -> None:
    rel = np.array([0.9, 0.5, 0.2])
    assert lift_in_time(rel, [True, True, True], TIME_BOOST, TIME_LIFT_MAX) is rel
    assert lift_in_time(rel, [False, False, False], TIME_BOOST, TIME_LIFT_MAX) is rel


@settings(max_examples=300, deadline=None)
@given(rel=relevance, data=st.data())
def test_no_block_passes_one_ahead_of_it_by_more_than_the_bound(
    rel: list[float], data: st.DataObject
) -> None:
    inside = data.draw(st.lists(st.booleans(), min_size=len(rel), max_size=len(rel)))
    values = np.array(rel)
    lifted = lift_in_time(values, inside, TIME_BOOST, TIME_LIFT_MAX)
    top = values.max()
    assert abs(lifted.max() - top) < 1e-9
    for i in range(len(rel)):
        for j in range(len(rel)):
            if values[j] - values[i] > TIME_LIFT_MAX * top + 1e-9:
                assert lifted[j] > lifted[i], "a lift carried a block past a far better one"
            if inside[i] == inside[j] and values[i] > values[j]:
                assert lifted[i] >= lifted[j], "the order within one side of the time changed"
            if inside[i] and not inside[j] and values[i] >= values[j]:
                assert lifted[i] >= lifted[j], "a block said then fell behind one that was not"
