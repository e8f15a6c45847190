"""Ledger events and the order-independent fold, down to a merge of two clones with git."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elfmem.errors import InvalidInput
from elfmem.store.ledger import (
    BlockState,
    active_hours,
    band_of,
    decode,
    encode,
    fold,
    fold_clock,
    make_event,
    session_event,
    ts_micros,
)
from elfmem.store.notes import NotesLedger, anchor_for_block, clock_anchor

BLOCK = "50bb7e4575aab7fe"
T0 = "2026-04-07T16:00:00.000000+00:00"
T1 = "2026-04-07T17:00:00.000000+00:00"
T2 = "2026-04-07T18:00:00.000000+00:00"


def line(kind: str, ts: str = T0, agent: str = "elf", **data: Any) -> str:
    return encode(make_event(kind, agent=agent, block=BLOCK, ts=ts, **data))


def test_events_are_canonical_and_unique() -> None:
    event = make_event("outcome", agent="elf", block=BLOCK, ts=T0, signal=1.0, source="tests")
    text = encode(event)
    assert text.startswith('{"agent":"elf","block":"50bb7e4575aab7fe","eid":"elf-')
    assert " " not in text and decode(text) == event
    assert encode(json.loads(text)) == text
    twin = make_event("outcome", agent="elf", block=BLOCK, ts=T0, signal=1.0, source="tests")
    assert twin["eid"] != event["eid"]
    assert ts_micros(make_event("birth", agent="elf")["ts"]) is not None


def test_make_event_refuses_what_the_fold_would_drop() -> None:
    with pytest.raises(InvalidInput):
        make_event("outcomes", agent="elf")
    with pytest.raises(InvalidInput):
        make_event("outcome", agent="elf", signal=1.5)
    with pytest.raises(InvalidInput):
        make_event("edge", agent="elf", target="b" * 16, relation="related")
    with pytest.raises(InvalidInput):
        make_event("use", agent="elf", at=1.0, eid="elf-1")
    with pytest.raises(InvalidInput):
        make_event("use", agent="two words", at=1.0)
    with pytest.raises(InvalidInput):
        make_event("edge", agent="elf", target="b", relation="x", weight=1.0, source="guess")


def test_decode_skips_blank_and_malformed_lines() -> None:
    assert decode("") is None and decode("   ") is None
    assert decode("{not json") is None and decode("[1, 2]") is None
    assert decode('{"kind":"use","at":1}') is None  # no ts, eid or agent
    assert decode(line("use", at=1.0).replace("2026-04-07", "yesterday")) is None
    assert decode(line("use", at=1.0).replace("1.0", "NaN")) is None


def test_fold_of_a_hand_written_note() -> None:
    lines = [
        line("birth", cls="knowledge", created=T0),
        line("outcome", signal=1.0, source="tests", band="reinforce", at=5.0),
        line("outcome", signal=0.0, source="tests"),
        line("outcome", signal=0.5, weight=2.0, source="review"),
        line("reinforce", at=3.0),
        line("use", at=7.5),
        line("edit"),
        "",
        "garbage",
    ]
    state = fold(lines)
    assert (state.alpha, state.beta) == (2.5, 2.5)  # 0.5 + 1 + 0 + 1, 0.5 + 0 + 1 + 1
    assert (state.outcomes, state.penalties, state.reinforcements, state.uses) == (3, 1, 1, 1)
    assert state.last_use == 7.5 and state.edits == 1
    assert state.born and not state.forgotten
    assert (state.events, state.malformed) == (7, 1)
    assert state.confidence == 0.5
    assert fold([]) == BlockState()


def test_outcome_band_sets_reinforcement_and_penalty() -> None:
    assert [band_of(s) for s in (0.0, 0.19, 0.2, 0.79, 0.8, 1.0)] == [
        "penalty", "penalty", "neutral", "neutral", "reinforce", "reinforce",
    ]  # fmt: skip
    state = fold([line("outcome", signal=0.9, at=9.0), line("outcome", signal=0.5, at=20.0)])
    assert state.last_use == 9.0 and state.penalties == 0


def test_edge_removal_commutes_with_later_and_earlier_deltas() -> None:
    other = "b" * 16
    lines = [
        line("edge", T0, target=other, relation="co_retrieval", weight=0.5, source="co_retrieval"),
        line("edge_remove", T1, target=other, relation="co_retrieval"),
        line("edge", T1, target=other, relation="co_retrieval", weight=0.25),
        line("edge", T2, target=other, relation="co_retrieval", weight=0.125),
        line("edge", T0, target=other, relation="related", weight=1.0, source="related"),
    ]
    expected = {(other, "co_retrieval"): 0.125, (other, "related"): 1.0}
    assert fold(lines).edges == expected
    assert fold(reversed(lines)).edges == expected


def test_cooccurrence_and_undo() -> None:
    state = fold(
        [
            line("cooccur", other="c" * 16, session="s1"),
            line("cooccur", other="c" * 16, session="s2"),
            line("cooccur", other="c" * 16, session="s1", agent="other"),
            line("forget", commit="abc123"),
            line("undo", of="abc123"),
        ]
    )
    assert state.cooccur_sessions == {"c" * 16: frozenset({"s1", "s2"})}
    assert not state.forgotten
    assert fold([line("forget", commit="abc123"), line("undo", of="fff")]).forgotten


def test_duplicate_eids_keep_one_line_whatever_the_order() -> None:
    first = make_event("use", agent="elf", ts=T0, at=1.0)
    second = dict(first, at=2.0)
    lines = [encode(first), encode(second)]
    assert fold(lines) == fold(lines[::-1])
    assert fold(lines).uses == 1


AGENTS = st.sampled_from(["elf", "ent"])
STAMPS = st.sampled_from([T0, T1, T2])
TARGETS = st.sampled_from(["b" * 16, "c" * 16])
AT = st.floats(0, 1000, allow_nan=False)
SIGNAL = st.floats(0, 1, allow_nan=False)
KIND_DATA = st.one_of(
    st.fixed_dictionaries({"kind": st.just("birth")}),
    st.fixed_dictionaries({"kind": st.just("forget"), "commit": st.sampled_from(["c1", "c2"])}),
    st.fixed_dictionaries({"kind": st.just("undo"), "of": st.sampled_from(["c1", "c2"])}),
    st.fixed_dictionaries(
        {"kind": st.just("outcome"), "signal": SIGNAL, "weight": st.floats(0, 3), "at": AT}
    ),
    st.fixed_dictionaries({"kind": st.sampled_from(["reinforce", "use"]), "at": AT}),
    st.fixed_dictionaries(
        {
            "kind": st.just("edge"),
            "target": TARGETS,
            "relation": st.sampled_from(["co_retrieval", "related"]),
            "weight": st.floats(-1, 1, allow_nan=False),
        }
    ),
    st.fixed_dictionaries(
        {"kind": st.just("edge_remove"), "target": TARGETS, "relation": st.just("related")}
    ),
    st.fixed_dictionaries(
        {"kind": st.just("cooccur"), "other": TARGETS, "session": st.sampled_from(["s1", "s2"])}
    ),
    st.fixed_dictionaries(
        {
            "kind": st.just("session"),
            "id": st.sampled_from(["s1", "s2", "s3"]),
            "start": st.floats(0, 100),
            "end": st.none() | st.floats(0, 200),
        }
    ),
)
EVENT_LINES = st.builds(
    lambda common, data: encode({**common, **data}),
    st.fixed_dictionaries(
        {"ts": STAMPS, "agent": AGENTS, "eid": st.sampled_from([f"e{n}" for n in range(12)])}
    ),
    KIND_DATA,
)
HOSTILE = [
    "",
    "junk",
    "{}",
    '{"agent":"elf","commit":[1],"eid":"h1","kind":"forget","ts":"2026-04-07T16:00:00+00:00"}',
    '{"agent":"elf","band":[1],"eid":"h2","kind":"outcome","signal":1,"ts":"2026-04-07T16:00:00Z"}',
    '{"agent":"elf","eid":"h3","kind":"later-kind","ts":"2026-04-07T16:00:00+00:00"}',
]
LINES = st.lists(EVENT_LINES | st.sampled_from(HOSTILE), max_size=30)


@settings(deadline=None, derandomize=True)
@given(lines=LINES, data=st.data())
def test_any_order_of_the_same_lines_folds_the_same(lines: list[str], data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(lines + lines[: len(lines) // 2]))
    assert fold(shuffled) == fold(lines)
    assert fold_clock(shuffled) == fold_clock(lines)


def test_clock_merges_session_intervals() -> None:
    base = 1_700_000_000.0
    early = "2023-11-14T22:13:20+00:00"  # base itself: before s3 starts
    lines = [
        encode(session_event("s1", agent="elf", start=base, end=base + 3600, ts=T0)),
        encode(session_event("s2", agent="ent", start=base + 1800, end=base + 5400, ts=T0)),
        encode(session_event("s3", agent="elf", start=base + 7200, ts=early)),
        encode(session_event("s4", agent="elf", start=1_775_577_600.0, ts=T0)),
        encode(session_event("s4", agent="elf", start=1_775_577_600.0, ts=T1)),
    ]
    intervals = fold_clock(lines)
    assert intervals == [
        (base, base + 5400),
        (base + 7200, base + 7200),  # open, only its start seen
        (1_775_577_600.0, 1_775_581_200.0),  # open, last seen at T1
    ]
    assert active_hours(intervals) == 2.5
    assert active_hours(intervals, until=base + 1800) == 0.5


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com")
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env
    )
    return done.stdout


def test_two_clones_merged_with_cat_sort_uniq_fold_to_the_sum(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    git(tmp_path, "init", "-q", str(origin))
    git(origin, "commit", "-q", "--allow-empty", "-m", "init")
    base = [line("birth", cls="knowledge")]
    NotesLedger(pygit2.Repository(str(origin))).append_blocks({BLOCK: base}, "birth")
    clones = {}
    for name in ("a", "b"):
        git(tmp_path, "clone", "-q", str(origin), name)
        git(tmp_path / name, "fetch", "-q", "origin", "refs/notes/elfmem:refs/notes/elfmem")
        clones[name] = NotesLedger(pygit2.Repository(str(tmp_path / name)))
    a_lines = [line("outcome", signal=1.0, agent="a"), line("reinforce", at=2.0, agent="a")]
    b_lines = [line("outcome", signal=0.0, agent="b"), line("outcome", signal=0.9, weight=2.0)]
    a_clock = [encode(session_event("sa", agent="a", start=0.0, end=3600.0))]
    b_clock = [encode(session_event("sb", agent="b", start=1800.0, end=7200.0))]
    clones["a"].append({anchor_for_block(BLOCK): a_lines, clock_anchor(): a_clock}, "a")
    clones["b"].append({anchor_for_block(BLOCK): b_lines, clock_anchor(): b_clock}, "b")

    git(tmp_path / "a", "fetch", "-q", str(tmp_path / "b"), "refs/notes/elfmem:refs/notes/other")
    git(tmp_path / "a", "notes", "--ref=elfmem", "merge", "-s", "cat_sort_uniq", "refs/notes/other")
    ledger = NotesLedger(pygit2.Repository(str(tmp_path / "a")))
    merged = fold((ledger.read(anchor_for_block(BLOCK)) or "").splitlines())
    assert merged == fold(base + a_lines + b_lines)
    assert (merged.alpha, merged.beta) == (0.5 + 1.0 + 1.8, 0.5 + 1.0 + 0.2)
    assert (merged.outcomes, merged.reinforcements, merged.events) == (3, 1, 5)
    assert fold_clock((ledger.read(clock_anchor()) or "").splitlines()) == [(0.0, 7200.0)]

    ledger.append({anchor_for_block(BLOCK): [line("use", at=9.0)]}, "after merge")
    assert fold((ledger.read(anchor_for_block(BLOCK)) or "").splitlines()).uses == 1
    tip = ledger.tip()
    assert tip is not None
    assert len(pygit2.Repository(str(tmp_path / "a"))[tip].peel(pygit2.Commit).parent_ids) == 1
    git(tmp_path / "a", "fsck", "--strict", "--no-dangling")


def test_merge_strategy_from_config_gives_the_same_fold(tmp_path: Path) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    for path in (mine, theirs):
        git(tmp_path, "init", "-q", str(path))
    anchor = anchor_for_block(BLOCK)
    NotesLedger(pygit2.Repository(str(mine))).append({anchor: [line("use", at=1.0)]}, "m")
    NotesLedger(pygit2.Repository(str(theirs))).append({anchor: [line("use", at=4.0)]}, "t")
    git(mine, "config", "notes.elfmem.mergeStrategy", "cat_sort_uniq")
    git(mine, "fetch", "-q", str(theirs), "refs/notes/elfmem:refs/notes/other")
    git(mine, "notes", "--ref=elfmem", "merge", "refs/notes/other")
    state = fold((NotesLedger(pygit2.Repository(str(mine))).read(anchor) or "").splitlines())
    assert (state.uses, state.last_use) == (2, 4.0)


def test_hostile_lines_never_crash_the_fold() -> None:
    state = fold(HOSTILE)
    assert (state.events, state.malformed) == (3, 2)  # an unknown kind is kept, not folded
    assert state.forgotten and state.outcomes == 1 and state.alpha == 1.5


def test_since_revision_counts_only_outcomes_after_each_live_revised_by_edge() -> None:
    newer = "c0ffee0000000001"
    before = [line("outcome", ts=T0, signal=1.0), line("outcome", ts=T0, signal=1.0)]
    edge = line("edge", ts=T1, target=newer, relation="revised_by", weight=1.0)
    after = [line("outcome", ts=T2, signal=0.0), line("outcome", ts=T2, signal=1.0, weight=2.0)]
    assert fold(before).since_revision == {}  # nothing claims to correct it
    state = fold([*after, edge, *before])
    assert state.since_revision == {newer: (2.0, 1.0)}
    assert state.alpha == 0.5 + 4.0  # the whole history still folds into the posterior
    removed = line("edge_remove", ts=T2, target=newer, relation="revised_by")
    assert fold([*before, edge, *after, removed]).since_revision == {}


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.permutations(range(6)))
def test_since_revision_is_the_same_in_any_line_order(order: list[int]) -> None:
    lines = [
        line("outcome", ts=T0, signal=1.0),
        line("edge", ts=T1, target="c0ffee0000000001", relation="revised_by", weight=1.0),
        line("edge", ts=T2, target="c0ffee0000000002", relation="revised_by", weight=1.0),
        line("outcome", ts=T1, signal=0.0),
        line("outcome", ts=T2, signal=0.25),
        line("outcome", ts=T0, signal=0.0),
    ]
    assert fold([lines[i] for i in order]).since_revision == {
        "c0ffee0000000001": (0.25, 1.75),
        "c0ffee0000000002": (0.25, 0.75),
    }
