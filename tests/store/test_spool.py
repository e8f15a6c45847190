"""The fsynced spool: durable appends, one notes commit per flush, torn tails and replays."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

import elfmem
from elfmem.errors import InvalidInput
from elfmem.store.notes import NotesLedger, anchor_for_block
from elfmem.store.spool import Spool

CHILD_ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(
        [str(Path(elfmem.__file__).parents[1]), os.environ.get("PYTHONPATH", "")]
    ),
}
SIG = pygit2.Signature("elfmem test", "test@example.com", 1_700_000_000, 0)
A = anchor_for_block("a" * 16)
B = anchor_for_block("b" * 16)


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "repo"))


@pytest.fixture
def spool(repo: pygit2.Repository) -> Spool:
    return Spool.in_git_dir(repo.path)


def commits(repo: pygit2.Repository) -> int:
    ref = repo.references.get("refs/notes/elfmem")
    return 0 if ref is None else sum(1 for _ in repo.walk(ref.target))


def test_append_writes_one_fsynced_record_per_line(
    spool: Spool, repo: pygit2.Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    spool.append(A, '{"n":1}')
    spool.extend([(B, '{"n":2}'), (A, '{"n":3}')])
    assert spool.path == Path(repo.path) / "elfmem" / "spool.jsonl"
    records = [json.loads(raw) for raw in spool.path.read_text().splitlines()]
    assert records == [{"a": A, "l": '{"n":1}'}, {"a": B, "l": '{"n":2}'}, {"a": A, "l": '{"n":3}'}]
    assert spool.pending() == 3
    assert len(synced) >= 2  # every acknowledged append reached the disk


def test_bad_records_are_refused(spool: Spool) -> None:
    with pytest.raises(InvalidInput):
        spool.append("short", "x")
    with pytest.raises(InvalidInput):
        spool.append(A, "two\nlines")
    with pytest.raises(InvalidInput):
        spool.append(A, "   ")
    assert spool.pending() == 0


def test_flush_is_one_notes_commit_then_an_empty_spool(
    spool: Spool, repo: pygit2.Repository
) -> None:
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    for n in range(5):
        spool.append(A if n % 2 else B, f'{{"n":{n}}}')
    assert spool.flush(ledger, "elfmem: flush spool") == 5
    assert commits(repo) == 1
    assert ledger.read(A) == '{"n":1}\n{"n":3}\n'
    assert ledger.read(B) == '{"n":0}\n{"n":2}\n{"n":4}\n'
    assert spool.pending() == 0 and spool.path.stat().st_size == 0


def test_flushing_twice_changes_nothing(spool: Spool, repo: pygit2.Repository) -> None:
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    spool.append(A, "x")
    spool.flush(ledger, "first")
    tip = ledger.tip()
    assert spool.flush(ledger, "second") == 0
    assert ledger.tip() == tip and commits(repo) == 1


def test_a_torn_last_line_is_ignored_and_sealed(spool: Spool, repo: pygit2.Repository) -> None:
    spool.append(A, "kept")
    with spool.path.open("ab") as handle:
        handle.write(b'{"a":"' + A.encode() + b'","l":"to')  # killed mid-write
    assert spool.entries() == [(A, "kept")]
    spool.append(B, "after the tear")
    assert spool.entries() == [(A, "kept"), (B, "after the tear")]
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    assert spool.flush(ledger, "flush") == 2
    assert ledger.read_all() == {A: "kept\n", B: "after the tear\n"}


def test_a_crash_before_truncation_replays_harmlessly(
    spool: Spool, repo: pygit2.Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    spool.extend([(A, "one"), (B, "two")])

    def crash(_fd: int, _length: int) -> None:
        raise OSError("killed before truncation")

    monkeypatch.setattr(os, "ftruncate", crash)
    with pytest.raises(OSError):
        spool.flush(ledger, "first try")
    monkeypatch.undo()
    tip = ledger.tip()
    assert tip is not None and spool.pending() == 2
    assert spool.flush(ledger, "replay") == 2
    assert ledger.tip() == tip  # the union already held every line
    assert ledger.read_all() == {A: "one\n", B: "two\n"} and spool.pending() == 0


APPENDER = """
import sys
from pathlib import Path
from elfmem.store.spool import Spool
spool = Spool(Path(sys.argv[1]))
for i in range(40):
    spool.append(sys.argv[2], f"{sys.argv[3]}-{i}")
"""


def test_concurrent_processes_append_whole_records(spool: Spool, repo: pygit2.Repository) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(spool.path), anchor, name],
            env=CHILD_ENV,
        )
        for anchor, name in ((A, "p"), (B, "q"))
    ]
    assert [proc.wait(timeout=120) for proc in procs] == [0, 0]
    assert spool.pending() == 80
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    assert spool.flush(ledger, "flush") == 80
    assert sorted(ledger.read(A).split()) == sorted(f"p-{i}" for i in range(40))  # type: ignore[union-attr]
    assert len(ledger.read(B).split()) == 40  # type: ignore[union-attr]


def test_read_from_returns_only_what_was_appended_since(spool: Spool) -> None:
    spool.extend([(A, '{"n":1}'), (B, '{"n":2}')])
    first, offset = spool.read_from(0)
    assert first == [(A, '{"n":1}'), (B, '{"n":2}')]
    assert offset == spool.size()
    assert spool.read_from(offset) == ([], offset)
    with spool.path.open("ab") as fh:
        fh.write(b'{"a":"' + A.encode() + b'","l":"torn')  # a write still in progress
    spool.append(B, '{"n":3}')  # seals the torn record, which is skipped
    tail, end = spool.read_from(offset)
    assert tail == [(B, '{"n":3}')]
    assert end == spool.size()


def test_the_store_flushes_a_large_spool_into_one_notes_commit(tmp_path: Path) -> None:
    from elfmem.store import Store
    from elfmem.store.spool import FLUSH_BYTES

    pygit2.init_repository(str(tmp_path / "r"))
    store = Store.open(tmp_path / "r", "tester")
    line = json.dumps({"pad": "x" * 200})
    per_call = 100
    calls = 0
    while store.spool.size() + per_call * 260 <= FLUSH_BYTES:
        store.spool_events(
            [(A, line.replace("}", f',"i":{calls * per_call + i}}}')) for i in range(per_call)]
        )
        calls += 1
    assert commits(store.repo) == 0  # below the limit everything waits in the spool
    store.spool_events([(B, line.replace("}", f',"i":{i}}}')) for i in range(per_call)])
    assert commits(store.repo) == 1
    assert store.spool.size() == 0
    text = store.ledger.read(A)
    assert text is not None and len(text.splitlines()) == calls * per_call
