"""Temporal contiguity among candidates: it raises, never adds, within one file and one hour."""

from __future__ import annotations

import pytest

from elfmem.errors import InvalidInput
from elfmem.retrieval.contiguity import close_in_time, lift

T0 = "2026-01-01T10:00:00+00:00"
T1 = "2026-01-01T10:00:05+00:00"
LATER = "2026-01-02T10:00:00+00:00"


def _places() -> dict[str, tuple[str, int, str]]:
    return {
        "q": ("a.md", 4, T0),
        "next": ("a.md", 5, T1),
        "before": ("a.md", 3, T0),
        "far": ("a.md", 7, T1),
        "other": ("b.md", 5, T1),
        "late": ("a.md", 6, LATER),
    }


def test_a_candidate_next_to_a_top_hit_rises_to_its_share() -> None:
    sims = {"q": 1.0, "next": 0.1, "before": 0.6, "far": 0.2, "other": 0.1}
    raised = lift(sims, _places(), 0.5, (1, 1))
    assert raised == ["next"]
    assert sims == {"q": 1.0, "next": 0.5, "before": 0.6, "far": 0.2, "other": 0.1}


def test_a_block_that_is_not_a_candidate_never_becomes_one() -> None:
    sims = {"q": 1.0, "far": 0.2}  # "next" and "before" sit beside q but bear on nothing
    assert lift(sims, _places(), 0.9, (3, 2)) == []
    assert sims == {"q": 1.0, "far": 0.2}
    zero = {"q": 1.0, "next": 0.0}  # a zero relevance is no relevance
    assert lift(zero, _places(), 0.9, (1, 1)) == [] and zero["next"] == 0.0


def test_neighbours_in_another_file_or_another_day_do_not_count() -> None:
    sims = {"next": 1.0, "other": 0.1, "late": 0.1}
    assert lift(sims, _places(), 0.5, (1, 1)) == []
    assert close_in_time(T0, T1, 60) and not close_in_time(T0, LATER, 3600)
    assert not close_in_time("yesterday", T0, 3600)


def test_relevance_is_inherited_from_values_before_any_lift() -> None:
    sims = {"q": 1.0, "next": 0.01, "late": 0.01}
    lift(sims, _places(), 0.5, (2, 1))  # "next" rises to 0.5 but passes nothing on to "late"
    assert sims["next"] == 0.5 and sims["late"] == 0.01


def test_a_share_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(InvalidInput):
        lift({"q": 1.0}, _places(), 1.5, (1, 1))
