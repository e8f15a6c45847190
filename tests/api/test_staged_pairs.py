"""``status`` counts staged co-retrieval pairs from index rows moved along by notes diff
(index/pairstate.py, rhythms/staging.py): the count always equals one folded afresh from every
active block's note, whatever wrote the notes in between."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elfmem.api import MemorySystem
from elfmem.index import ledgerstate, open_memory_index, pairstate, queries
from elfmem.rhythms import staging
from elfmem.rhythms.adaptive import LedgerView, retrieval_numbers
from elfmem.store.ledger import encode, fold, make_event
from elfmem.store.notes import NotesLedger, anchor_for_block
from elfmem.store.notesmerge import merge_notes
from elfmem.store.objects import finish_fanout, objects_dir
from tests.conftest import arun, git
from tests.sharing.clones import bare, clone, project

QUERY = "connection pooling"
TEXTS = (
    "Use pgbouncer in transaction mode for connection pooling",
    "Connection pooling needs a pool size below max_connections",
    "Pooling connections per tenant keeps noisy tenants apart",
    "Connection pooling in the app server hides database restarts",
)


def _recounted(system: MemorySystem) -> int:
    """The count as status made it before the rows: every active block's note (and spooled
    events) folded by a fresh view, which keeps nothing and reads no index rows."""
    core = system._core
    active = queries.ids_with_status(core.db(), "active")
    folds = LedgerView(core.store).folded_many(active)
    return sum(staging.staged_in(f) for f in folds.values()) // 2


def _checked(system: MemorySystem) -> int:
    staged = arun(system.status()).staged_pairs
    assert staged == _recounted(system)
    return staged


def _rows_current(repo: Path) -> None:
    """Both copies of the ledger folds sit at the notes tip and match a fold of each note."""
    system = arun(MemorySystem.from_config(repo))
    core = system._core
    db, notes = core.db(), core.store.ledger
    tip = notes.tip()
    assert tip is not None
    assert pairstate.stored_tip(db) == tip and ledgerstate.stored_tip(db) == tip
    every = notes.read_all(tip)
    expected = {a: staging.note_pairs(t) for a, t in every.items()}
    assert pairstate.read(db)[1] == {a: n for a, n in expected.items() if n > 0}
    rows = ledgerstate.read(db, tip, every)
    assert rows is not None and rows
    for anchor, row in rows.items():
        assert row == retrieval_numbers(fold(every[anchor].splitlines()))
    arun(system.close())


def _recall(system: MemorySystem, sessions: int = 1) -> None:
    async def go() -> None:
        for _ in range(sessions):
            async with system.session():
                await system.recall(QUERY, top_k=3)

    arun(go())


def _no_full_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on a status may fold only the notes that changed."""

    def refused(*_: object, **__: object) -> dict[str, str]:
        raise AssertionError("status counted every note again")

    monkeypatch.setattr(NotesLedger, "read_all", refused)


def _memory(repo: Path) -> tuple[MemorySystem, list[str]]:
    system, _ = arun(MemorySystem.init(repo))
    ids = arun(system.remember_many([{"content": t, "cue": QUERY} for t in TEXTS])).created
    arun(system.dream(no_llm=True))
    return system, ids


def test_the_count_kept_in_the_index_follows_every_operation(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system, ids = _memory(repo)
    assert _checked(system) == 0  # the first status counts every note
    _no_full_count(monkeypatch)

    _recall(system)
    first = _checked(system)
    assert first > 0
    arun(system.recall(QUERY, top_k=3))  # spooled events count before they reach the notes
    assert system._core.store.spool.size() > 0
    _checked(system)
    arun(system.outcome(ids[:2], 1.0))
    _checked(system)
    _recall(system, sessions=3)  # pairs seen in three sessions become edges: fewer staged
    assert _checked(system) < first + 3
    arun(system.dream(no_llm=True))
    _checked(system)
    arun(system.forget(ids[0]))  # its pairs leave the count with it
    _checked(system)
    arun(system.undo())
    _checked(system)
    arun(system.close())

    reopened = arun(MemorySystem.from_config(repo))
    _checked(reopened)
    arun(reopened.close())


def test_a_process_that_wrote_the_index_leaves_the_folds_at_the_notes_tip(repo: Path) -> None:
    system, _ = _memory(repo)
    arun(system.status())  # the first status counts every note and keys the rows
    _recall(system)
    arun(system.close())
    _rows_current(repo)

    system = arun(MemorySystem.from_config(repo))
    arun(system.recall(QUERY, top_k=3))  # its events reach the notes as it closes
    arun(system.remember("Connection pooling limits are set per database"))
    arun(system.close())
    _rows_current(repo)


def test_a_status_saves_no_rows_for_a_few_changed_notes(repo: Path) -> None:
    system, ids = _memory(repo)
    db = system._core.db()
    arun(system.status())
    keyed = pairstate.stored_tip(db)
    _recall(system)
    arun(system.outcome(ids[:1], 1.0))
    assert _checked(system) > 0
    assert pairstate.stored_tip(db) == keyed != system._core.store.ledger.tip()
    arun(system.close())


def test_the_count_follows_a_merge_of_another_clones_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = bare(tmp_path)
    a = project(tmp_path, remote, "a")
    system, _ = arun(MemorySystem.init(a))
    arun(system.remember_many([{"content": t, "cue": QUERY} for t in TEXTS]))
    arun(system.dream(no_llm=True))
    arun(system.sync())
    arun(system.close())
    git(a, "push", "-q", "origin", "main")
    b = clone(remote, tmp_path / "b")

    theirs = arun(MemorySystem.from_config(b))
    _recall(theirs, sessions=2)
    arun(theirs.sync())
    arun(theirs.close())

    ours = arun(MemorySystem.from_config(a))
    _recall(ours)
    assert _checked(ours) > 0
    _no_full_count(monkeypatch)
    merged = arun(ours.sync())
    assert merged.notes_in == "merge"
    _checked(ours)
    arun(ours.close())


def test_rows_counted_at_a_commit_the_repository_lacks_are_counted_again(repo: Path) -> None:
    system, _ = _memory(repo)
    _recall(system)
    expected = _checked(system)
    db = system._core.db()
    with db.write() as conn:
        conn.execute("UPDATE staged_pairs SET pairs = 99")
        conn.execute("UPDATE meta SET value = ? WHERE key = ?", ("ab" * 20, pairstate.TIP_KEY))
    assert _checked(system) == expected
    arun(system.close())


# ---- the fold by notes diff cannot miss an event ------------------------------------------------

SIG = pygit2.Signature("elfmem test", "test@example.com", 1_700_000_000, 0)
BLOCKS = tuple(f"{n:016x}" for n in range(5))
EVENT = st.one_of(
    st.tuples(
        st.just("cooccur"),
        st.sampled_from(BLOCKS),
        st.sampled_from(BLOCKS),
        st.sampled_from(("s1", "s2", "s3")),
        st.sampled_from(("", "c1", "c2")),  # the commit that wrote it, which an undo cancels
    ),
    st.tuples(st.just("undo"), st.sampled_from(BLOCKS), st.sampled_from(("c1", "c2"))),
)
STEP = st.one_of(
    st.tuples(st.just("ours"), st.lists(EVENT, min_size=1, max_size=3)),
    st.tuples(st.just("theirs"), st.lists(EVENT, min_size=1, max_size=3)),
    st.tuples(st.just("flat"), EVENT),  # ``git notes add -f``: one flat note, replacing
    st.tuples(st.just("merge")),
    st.tuples(st.just("reset")),  # the ref moved back a commit, as ``git update-ref`` can
    st.tuples(st.just("forget")),  # the rows' commit is gone from the repository
    st.tuples(st.just("keep_up")),  # a process that wrote the index closes
    st.tuples(st.just("count")),
)


def _line(event: tuple[str, ...]) -> tuple[str, str]:
    if event[0] == "undo":
        return event[1], encode(make_event("undo", agent="t", block=event[1], of=event[2]))
    _, block, other, session, commit = event
    data = {"commit": commit} if commit else {}
    line = encode(
        make_event("cooccur", agent="t", block=block, other=other, session=session, **data)
    )
    return block, line


def _append(ledger: NotesLedger, events: list[tuple[str, ...]]) -> None:
    lines: dict[str, list[str]] = {}
    for event in events:
        block, line = _line(event)
        lines.setdefault(anchor_for_block(block), []).append(line)
    ledger.append(lines, "events")


def _step(
    repo: pygit2.Repository, ours: NotesLedger, theirs: NotesLedger, step: tuple[Any, ...]
) -> None:
    kind = step[0]
    if kind in ("ours", "theirs"):
        _append(ours if kind == "ours" else theirs, step[1])
    elif kind == "flat":
        block, line = _line(step[1])
        oid = pygit2.Oid(hex=anchor_for_block(block))
        repo.create_note(line + "\n", SIG, SIG, str(oid), ours.ref, True)
    elif kind == "merge" and theirs.tip() is not None:
        merge_notes(ours, str(theirs.tip()))
    elif kind == "reset" and ours.tip() is not None:
        parents = repo[str(ours.tip())].peel(pygit2.Commit).parents
        if parents:
            repo.references[ours.ref].set_target(parents[0].id)


@pytest.fixture(scope="module")
def shared_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pygit2.Repository]:
    """One repository for every example, each on refs of its own: making and removing a
    repository's 256 object folders per example would cost more than the example."""
    repo = pygit2.init_repository(str(tmp_path_factory.mktemp("notes") / "repo"))
    yield repo
    finish_fanout(objects_dir(repo))


def test_the_rows_equal_a_count_of_every_note_after_any_history(
    shared_repo: pygit2.Repository,
) -> None:
    examples = itertools.count()

    @settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(STEP, max_size=12))
    def check(steps: list[tuple[Any, ...]]) -> None:
        n = next(examples)
        ours = NotesLedger(shared_repo, f"refs/notes/ours{n}", author=SIG, committer=SIG)
        theirs = NotesLedger(shared_repo, f"refs/notes/theirs{n}", author=SIG, committer=SIG)
        db = open_memory_index()
        ledgerstate.advance(db, None, "", {})  # retrieval's rows keyed before the first note
        try:
            for step in [*steps, ("count",)]:
                if step[0] == "forget":
                    with db.write() as conn:
                        conn.execute(
                            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                            (pairstate.TIP_KEY, "ab" * 20),
                        )
                elif step[0] == "keep_up":
                    staging.keep_up(ours, db)
                elif step[0] == "count":
                    tip = ours.tip() or ""
                    every = ours.read_all(tip) if tip else {}
                    expected = {a: staging.note_pairs(t) for a, t in every.items()}
                    assert staging.by_note(ours, db, tip) == {
                        a: n for a, n in expected.items() if n > 0
                    }
                    rows = ledgerstate.read(db, tip, every) or {}
                    for anchor, row in rows.items():  # what keep_up folded for retrieval
                        assert row == retrieval_numbers(fold(every[anchor].splitlines()))
                else:
                    _step(shared_repo, ours, theirs, step)
        finally:
            db.close()

    check()
