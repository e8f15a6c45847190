"""The ``prior`` ledger event: an imported posterior replaces the Jeffreys prior, in any order."""

from __future__ import annotations

import itertools

from elfmem.store.ledger import encode, fold, make_event


def _line(kind: str, ts: str, **data: object) -> str:
    return encode(make_event(kind, agent="t", block="b", ts=ts, **data))


def test_prior_replaces_the_jeffreys_prior_and_outcomes_add_to_it() -> None:
    lines = [
        _line("prior", "2026-01-01T00:00:00.000000+00:00", alpha=0.6, beta=0.4),
        _line("outcome", "2026-01-02T00:00:00.000000+00:00", signal=0.9, weight=1.0),
    ]
    state = fold(lines)
    assert (state.alpha, state.beta) == (1.5, 0.5)
    assert state.outcomes == 1


def test_the_latest_prior_wins_whatever_the_line_order() -> None:
    lines = [
        _line("prior", "2026-01-01T00:00:00.000000+00:00", alpha=3.0, beta=1.0),
        _line("prior", "2026-02-01T00:00:00.000000+00:00", alpha=1.0, beta=2.0),
        _line("outcome", "2026-03-01T00:00:00.000000+00:00", signal=0.0, weight=2.0),
    ]
    states = {(fold(p).alpha, fold(p).beta) for p in itertools.permutations(lines)}
    assert states == {(1.0, 4.0)}


def test_an_undone_prior_no_longer_counts() -> None:
    prior = _line("prior", "2026-01-01T00:00:00.000000+00:00", alpha=5.0, beta=1.0, commit="c1")
    undo = _line("undo", "2026-01-02T00:00:00.000000+00:00", of="c1")
    assert (fold([prior, undo]).alpha, fold([prior, undo]).beta) == (0.5, 0.5)
