"""The pre-commit check finds conflict regions the way the reader does: by their three markers.

A region or a leftover ``<<<<<<<`` line is an error at its line; a body line that merely looks
like a marker (``=======`` under a title, ``>>>>>>>`` quoting) is content and commits.
"""

from __future__ import annotations

from pathlib import Path

from elfmem.care.staged import check_staged
from tests.conftest import git

BUCKET = ".elfmem/memory/notes/knowledge/2026-04.md"


def _block(n: int, body: str) -> str:
    return f"## {body.splitlines()[0]}\n<!-- id: {n:016x}  cls: knowledge  tags: [] -->\n\n{body}\n"


def _stage(repo: Path, text: str) -> None:
    path = repo / BUCKET
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git(repo, "add", BUCKET)


def test_a_staged_conflict_region_is_an_error_at_its_opener(repo: Path) -> None:
    text = (
        _block(1, "base")
        + "\n<<<<<<< HEAD\n"
        + _block(2, "ours")
        + "=======\n"
        + _block(3, "theirs")
        + ">>>>>>> other\n"
    )
    _stage(repo, text)
    check = check_staged(repo)
    assert not check.ok
    [problem] = [p for p in check.problems if "conflict" in p["message"]]
    assert (problem["path"], problem["line"]) == (BUCKET, 6)
    assert "lines 6-16" in problem["message"] and "git checkout --theirs" in problem["recovery"]


def test_a_leftover_opener_is_an_error(repo: Path) -> None:
    _stage(repo, _block(1, "base") + "<<<<<<< HEAD\n\n" + _block(2, "next"))
    check = check_staged(repo)
    assert [p["line"] for p in check.problems if "leftover" in p["message"]] == [5]


def test_marker_look_alikes_in_bodies_commit(repo: Path) -> None:
    body = "Title\n=======\n\n>>>>>>> quoted\n||||||| piped"
    _stage(repo, _block(1, "first") + "\n" + _block(2, body))
    check = check_staged(repo)
    assert check.ok, check.summary
