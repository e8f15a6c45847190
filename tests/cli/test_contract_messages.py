"""Messages tell the truth: Ctrl-C in dream, disconnect's count, undo's race and its advice,
parity after an edit, index check's paths, the line a broken id line is blamed on."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.errors import UndoError
from elfmem.progress import Stop
from elfmem.rhythms import dream as dream_mod
from elfmem.store import Store
from tests.conftest import arun, git


@pytest.fixture
def memory(repo: Path) -> Path:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    return repo


def invoke(repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args])
    return result.exit_code, result.stdout, result.stderr


def remember(repo: Path, *texts: str) -> list[str]:
    ids = []
    for text in texts:
        code, out, err = invoke(repo, "remember", text, "--cue", text[:20])
        assert code == 0, err
        ids.append(out.strip())
    return ids


def bucket_of(repo: Path, block: str) -> Path:
    return next(p for p in (repo / ".elfmem" / "memory").rglob("*.md") if block in p.read_text())


def inbox(repo: Path) -> list[str]:
    return [b["id"] for b in json.loads(invoke(repo, "inbox", "--json")[1])["blocks"]]


FACTS = [f"Distinct fact number {n}: subject {n * 7919 % 101} in area {n * 31}" for n in range(6)]


def test_a_progress_stop_ends_dream_between_blocks_and_commits_what_was_done(
    memory: Path,
) -> None:
    remember(memory, *FACTS)

    def stop_after_two(stage: str, done: int, total: int) -> None:
        if stage == "dream" and done == 2:
            raise Stop(stage)

    async def scenario() -> Any:
        system = await MemorySystem.from_config(memory)
        try:
            return await system.dream(progress=stop_after_two)
        finally:
            await system.close()

    result = arun(scenario())
    assert result.interrupted and result.processed == 2 and len(result.promoted) == 2
    assert result.commit_id and result.inbox_remaining == len(FACTS) - 2
    assert "Stopped by Ctrl-C after 2 block(s)" in result.summary
    assert len(inbox(memory)) == len(FACTS) - 2
    assert git(memory, "log", "-1", "--format=%s").startswith("dream")


def test_ctrl_c_in_the_dream_command_stops_cleanly_and_says_so(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember(memory, *FACTS)
    real = dream_mod._consider
    seen: list[str] = []

    def consider_then_ctrl_c(*args: Any, **kwargs: Any) -> None:
        real(*args, **kwargs)
        seen.append("block")
        if len(seen) == 3:
            signal.raise_signal(signal.SIGINT)  # the user presses Ctrl-C during block 3

    monkeypatch.setattr(dream_mod, "_consider", consider_then_ctrl_c)
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN when pytest itself was started with nohup
    code, out, err = invoke(memory, "dream")
    assert code == 130, err
    assert "Aborted" not in err and "stopping after the current block" in err
    assert "Stopped by Ctrl-C after 3 block(s); those were committed" in out
    assert len(inbox(memory)) == len(FACTS) - 3
    assert signal.getsignal(signal.SIGINT) is before


def test_disconnect_reports_only_edges_that_were_there(memory: Path) -> None:
    a, b = remember(memory, "alpha fact about deploys", "beta fact about databases")
    code, out, _ = invoke(memory, "disconnect", a, b, "--json")
    assert code == 0 and json.loads(out)["edges"] == []
    assert invoke(memory, "disconnect", a, b)[1].startswith("disconnect: 0 edge(s) removed")
    assert invoke(memory, "connect", a, b)[1].startswith("connect: 1 edge(s) added")
    assert invoke(memory, "disconnect", a, b)[1].startswith("disconnect: 1 edge(s) removed")
    assert "0 edge(s) removed; 1 already absent" in invoke(memory, "disconnect", a, b)[1]


def test_the_loser_of_two_undos_says_already_undone(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (block,) = remember(memory, "a fact to undo twice")
    target = git(memory, "rev-parse", "HEAD").strip()
    stale: dict[str, Any] = {}
    real = Store.undo_target

    def as_seen_before_the_winner(self: Store, commit: str | None) -> Any:
        if "info" not in stale:
            stale["info"] = real(self, commit)[0]
        return stale["info"], None  # the loser read the target before the winner committed

    assert invoke(memory, "undo")[0] == 0  # the winner
    winner = git(memory, "rev-parse", "HEAD").strip()
    monkeypatch.setattr(Store, "undo_target", as_seen_before_the_winner)
    stale["info"] = real(Store.open(memory, "elf"), target)[0]
    code, out, err = invoke(memory, "undo", "--json")
    assert code == 0, err
    body = json.loads(out)
    assert body["already_undone_by"] == winner and body["commit_id"] is None
    assert "has changed since" not in err and block in body["block_ids"]


def test_undo_after_a_committed_hand_edit_gives_advice_that_works(memory: Path) -> None:
    (block,) = remember(memory, "alpha fact about deploys")
    bucket = next(
        p for p in (memory / ".elfmem" / "memory").rglob("*.md") if block in p.read_text()
    )
    bucket.write_text(bucket.read_text().replace("about deploys", "about deploys, by hand"))
    git(memory, "commit", "-qam", "hand edit")
    hand = git(memory, "rev-parse", "HEAD").strip()
    code, _, err = invoke(memory, "undo")
    assert code == 4
    assert f"git revert {hand[:12]}" in err and "made outside elfmem" in err
    git(memory, "revert", "--no-edit", hand)  # follow the advice
    code, out, err = invoke(memory, "undo")
    assert code == 0, err
    assert block not in json.dumps(json.loads(invoke(memory, "ls", "--json")[1]))


def test_parity_right_after_an_edit_compares_with_vectors_computed(memory: Path) -> None:
    a, _ = remember(memory, "The deploy pipeline runs a canary first", "Postgres vacuums nightly")
    assert invoke(memory, "dream")[0] == 0
    assert invoke(memory, "recall", "deploys")[0] == 0
    assert invoke(memory, "edit", a, "The deploy pipeline runs a canary for twenty minutes")[0] == 0
    code, out, err = invoke(memory, "index", "parity")
    assert code == 0 and "Parity OK" in out, out + err


def test_index_check_names_each_path_once_and_blames_the_id_line(memory: Path) -> None:
    (block,) = remember(memory, "alpha fact about deploys")
    bucket = next(
        p for p in (memory / ".elfmem" / "memory").rglob("*.md") if block in p.read_text()
    )
    lines = bucket.read_text().splitlines(keepends=True)
    assert lines[0].startswith("## ") and lines[1].startswith("<!-- id: ")
    lines[1] = lines[1].replace("<!-- id:", "<!-- idd:")
    bucket.write_text("".join(lines))
    code, out, _ = invoke(memory, "index", "check")
    relpath = bucket.relative_to(memory).as_posix()
    assert code == 1
    assert out.count(relpath) == 1 and f"{relpath}:2: " in out, out
    assert "text before the first block" not in out
    code, out, _ = invoke(memory, "index", "check", "--json")
    (error,) = json.loads(out)["errors"]
    assert error["line"] == 2 and relpath not in error["message"]


def test_the_pre_commit_hook_blames_line_two(memory: Path) -> None:
    (block,) = remember(memory, "alpha fact about deploys")
    assert invoke(memory, "hooks", "install")[0] == 0
    bucket = next(
        p for p in (memory / ".elfmem" / "memory").rglob("*.md") if block in p.read_text()
    )
    lines = bucket.read_text().splitlines(keepends=True)
    lines[1] = "x" + lines[1]
    bucket.write_text("".join(lines))
    git(memory, "add", str(bucket))
    done = subprocess.run(
        ["git", "commit", "-qm", "broken"], cwd=memory, capture_output=True, text=True
    )
    assert done.returncode != 0
    assert f"{bucket.relative_to(memory).as_posix()}:2: " in done.stderr, done.stderr


def test_undo_error_is_a_conflict() -> None:
    assert UndoError("x", "y").exit_code == 4
