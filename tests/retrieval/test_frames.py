"""Frames: the seed's built-in strategies, tag patterns, filters versus guarantees, config."""

from __future__ import annotations

import dataclasses

import pytest

from elfmem.errors import InvalidInput
from elfmem.retrieval.frames import (
    BUILTIN_FRAMES,
    CONFIG_KEYS,
    FrameSpec,
    frame_from_config,
    frames_from_config,
    is_excluded,
    is_guaranteed,
    resolve_frame,
    tag_matches,
    validate_weights,
)
from elfmem.retrieval.signals import SIGNALS

FLAT = dict.fromkeys(SIGNALS, 0.2)


@pytest.mark.parametrize(
    ("tag", "pattern", "expected"),
    [
        ("self/goal", "self/%", True),
        ("self", "self/%", False),
        ("myself/goal", "self/%", False),  # anchored at the start
        ("self/goal", "self/goal", True),
        ("self/goals", "self/goal", False),  # and at the end
        ("mind/ada/v1", "mind/%", True),
        ("self/goal", "%/goal", True),
        ("anything", "%", True),
        ("self/a_b", "self/a_b", True),
        ("self/aXb", "self/a_b", False),  # _ is literal, unlike SQL
        ("xzy", "x.y", False),  # so is .
        ("Self/goal", "self/%", False),  # case-sensitive, as the tier rules are
        ("peer/from:did:key:z6", "peer/%", True),
    ],
)
def test_tag_matches(tag: str, pattern: str, expected: bool) -> None:
    assert tag_matches(tag, pattern) is expected


def test_builtin_weights_are_the_seeds() -> None:
    table = {name: tuple(spec.weights[s] for s in SIGNALS) for name, spec in BUILTIN_FRAMES.items()}
    assert table == {
        "self": (0.10, 0.30, 0.05, 0.25, 0.30),
        "attention": (0.35, 0.15, 0.25, 0.15, 0.10),
        "task": (0.20, 0.20, 0.20, 0.20, 0.20),
        "simulate": (0.25, 0.25, 0.15, 0.20, 0.15),
    }


def test_builtin_budgets_queries_and_templates() -> None:
    got = {n: (f.budget, f.queryless, f.template) for n, f in BUILTIN_FRAMES.items()}
    assert got == {
        "self": (600, True, "self"),
        "attention": (2000, False, "list"),
        "task": (800, False, "list"),
        "simulate": (2000, False, "list"),
    }


def test_self_frame_includes_only_self_and_guarantees_the_constitution_not_peers() -> None:
    spec = BUILTIN_FRAMES["self"]
    assert is_excluded(("knowledge",), spec)
    assert not is_excluded(("self/value",), spec)
    assert is_guaranteed(("self/constitutional",), spec)
    letter = ("self/constitutional", "peer/from:did:key:z6")
    assert not is_guaranteed(letter, spec)  # may rank in, cannot take an identity slot
    assert not is_excluded(letter, spec)


def test_attention_excludes_the_constitution_but_keeps_peer_letters() -> None:
    spec = BUILTIN_FRAMES["attention"]
    assert is_excluded(("self/constitutional", "self/value"), spec)
    assert not is_excluded(("self/constitutional", "peer/ada"), spec)
    assert not is_excluded(("db",), spec)
    assert not is_excluded((), spec)
    assert not is_guaranteed(("self/constitutional",), spec)


def test_task_guarantee_beats_its_exclusion() -> None:
    spec = BUILTIN_FRAMES["task"]
    assert is_excluded(("self/constitutional",), spec)
    both = ("self/goal", "self/constitutional")
    assert is_guaranteed(both, spec)
    assert not is_excluded(both, spec)


def test_simulate_guarantees_constitution_and_minds_and_filters_nothing() -> None:
    spec = BUILTIN_FRAMES["simulate"]
    assert is_guaranteed(("mind/ada",), spec)
    assert is_guaranteed(("self/constitutional",), spec)
    assert not is_guaranteed(("db",), spec)
    assert not is_excluded(("anything",), spec)


def test_validate_weights_returns_canonical_order_within_tolerance() -> None:
    shuffled = {"reinforcement": 0.3, "similarity": 0.1, "recency": 0.05, "centrality": 0.25}
    got = validate_weights({**shuffled, "confidence": 0.3 + 5e-7})
    assert list(got) == list(SIGNALS)


@pytest.mark.parametrize(
    "weights",
    [
        {k: v for k, v in FLAT.items() if k != "recency"},  # missing
        {**FLAT, "novelty": 0.0},  # unknown
        {**FLAT, "recency": 0.1},  # sums to 0.9
        {**FLAT, "similarity": 1.2, "recency": -0.8},  # sums to 1 but out of range
        {**FLAT, "similarity": "0.2"},  # not a number
    ],
)
def test_validate_weights_refuses(weights: dict[str, object]) -> None:
    with pytest.raises(InvalidInput) as err:
        validate_weights(weights)  # type: ignore[arg-type]
    assert err.value.recovery


def test_frame_spec_is_immutable_and_validated() -> None:
    spec = BUILTIN_FRAMES["attention"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.budget = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        spec.weights["similarity"] = 1.0  # type: ignore[index]
    for bad in ({"template": "fancy"}, {"budget": 0}, {"top_k": -1}, {"include": ("a b",)}):
        with pytest.raises(InvalidInput):
            FrameSpec(name="x", weights=FLAT, **bad)
    with pytest.raises(InvalidInput):
        FrameSpec(name="Bad Name", weights=FLAT)


def test_custom_frame_from_config_without_base() -> None:
    spec = frame_from_config("research", {"weights": FLAT, "include": "project/%", "budget": 1000})
    assert (spec.include, spec.budget, spec.top_k, spec.template) == (
        ("project/%",),
        1000,
        5,
        "list",
    )
    assert not spec.queryless


def test_custom_frame_from_config_on_a_base() -> None:
    spec = frame_from_config("wide", {"budget": 3000, "top_k": 8}, base=BUILTIN_FRAMES["attention"])
    assert dict(spec.weights) == dict(BUILTIN_FRAMES["attention"].weights)
    assert spec.exclude == ("self/constitutional",)
    assert (spec.name, spec.budget, spec.top_k) == ("wide", 3000, 8)


def test_frame_config_errors_name_the_problem() -> None:
    with pytest.raises(InvalidInput) as err:
        frame_from_config("x", {"weights": FLAT, "guarantee": ["self/goal"]})
    assert "guarantee" in str(err.value)
    assert all(key in err.value.recovery for key in CONFIG_KEYS)
    with pytest.raises(InvalidInput):
        frame_from_config("x", {"budget": 10})  # no weights, no base
    with pytest.raises(InvalidInput):
        frame_from_config("x", {"weights": FLAT, "queryless": "yes"})
    with pytest.raises(InvalidInput):
        frame_from_config("x", {"weights": [0.2] * 5})


def test_frames_from_config_overrides_and_extends_the_builtins() -> None:
    frames = frames_from_config(
        {
            "attention": {"budget": 3000},
            "research": {"base": "attention", "top_k": 10},
            "ops": {"weights": FLAT, "guarantees": ["ops/%"]},
        }
    )
    assert frames["attention"].budget == 3000
    assert frames["research"].exclude == ("self/constitutional",)
    assert frames["research"].top_k == 10
    assert frames["ops"].guarantees == ("ops/%",)
    assert frames["self"] is BUILTIN_FRAMES["self"]
    assert BUILTIN_FRAMES["attention"].budget == 2000  # the built-ins are untouched
    with pytest.raises(InvalidInput):
        frames_from_config({"odd": {"base": "nonesuch"}})


def test_resolve_frame_lists_the_choices() -> None:
    assert resolve_frame("task") is BUILTIN_FRAMES["task"]
    with pytest.raises(InvalidInput) as err:
        resolve_frame("focus")
    assert "attention" in err.value.recovery


def test_frame_specs_compare_and_hash_by_value() -> None:
    a = frame_from_config("x", {"weights": FLAT})
    b = frame_from_config("x", {"weights": dict(reversed(FLAT.items()))})
    assert a == b
    assert {a: "cached"}[b] == "cached"
    assert a != frame_from_config("x", {"weights": FLAT, "budget": 10})


def test_a_single_pattern_string_is_one_pattern_not_its_letters() -> None:
    spec = FrameSpec(name="x", weights=FLAT, include="self/%")  # type: ignore[arg-type]
    assert spec.include == ("self/%",)
