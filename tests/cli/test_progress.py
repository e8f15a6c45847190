"""Progress: the API reports (stage, done, total); the CLI draws it on stderr, never on stdout."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.cli import progress as bar_mod
from elfmem.cli.progress import StderrBar, wanted
from elfmem.progress import Progress
from tests.conftest import arun

Calls = list[tuple[str, int, int]]


def recorder(calls: Calls) -> Progress:
    def record(stage: str, done: int, total: int) -> None:
        calls.append((stage, done, total))

    return record


def assert_counts_up(calls: Calls, stage: str) -> int:
    """Calls for ``stage`` rise strictly, share one total, and end at it; returns the total."""
    mine = [(d, t) for s, d, t in calls if s == stage]
    assert mine, f"no {stage!r} progress in {calls}"
    dones = [d for d, _ in mine]
    totals = {t for _, t in mine}
    assert len(totals) == 1 and dones == sorted(set(dones)) and dones[-1] == totals.pop()
    return dones[-1]


def items(n: int) -> list[dict[str, object]]:
    return [
        {"content": f"Service {i} listens on port {8000 + i}", "tags": ["ops"]} for i in range(n)
    ]


def test_remember_many_reports_each_item_up_to_the_total(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    calls: Calls = []
    result = arun(system.remember_many(items(60), progress=recorder(calls)))
    assert len(result.created) == 60
    assert assert_counts_up(calls, "check") == 60 and calls[0] == ("check", 0, 60)
    assert {s for s, _, _ in calls} == {"check"}
    arun(system.close())


def test_index_rebuild_reports_files_parsed_and_texts_embedded(repo: Path, tmp_path: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember_many(items(60)))
    calls: Calls = []
    result = arun(system.index_rebuild(tmp_path / "copy.db", progress=recorder(calls)))
    assert assert_counts_up(calls, "parse") == result.files_parsed
    assert assert_counts_up(calls, "embed") == result.embedded == 60
    arun(system.close())


def test_dream_passes_progress_through(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember_many(items(6)))
    calls: Calls = []
    result = arun(system.dream(max_blocks=6, no_llm=True, progress=recorder(calls)))
    assert result.processed == 6 and assert_counts_up(calls, "dream") == 6
    arun(system.close())


def test_small_work_draws_no_bar_and_a_restarted_stage_redraws() -> None:
    stream = io.StringIO()
    bar = StderrBar(stream, min_total=50)
    for done in range(11):
        bar("check", done, 10)
    assert stream.getvalue() == ""
    for done in (0, 30, 60, 0, 60):
        bar("parse", done, 60)
    bar.close()
    assert stream.getvalue().count("Parsing files") == 2


def test_a_bar_is_wanted_only_at_a_terminal_without_json() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert wanted(False, Terminal()) and not wanted(True, Terminal())
    assert not wanted(False, io.StringIO())


@pytest.fixture
def batch_file(tmp_path: Path) -> Path:
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join(json.dumps(i) for i in items(60)), encoding="utf-8")
    return path


def test_batch_bar_goes_to_stderr_and_json_stdout_stays_pure(
    repo: Path, batch_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # CliRunner's stderr is no terminal; pretend it is, so only --json can turn the bar off.
    monkeypatch.setattr(bar_mod, "wanted", lambda json_, stream: not json_)
    runner = CliRunner()
    assert runner.invoke(cli, ["-C", str(repo), "init"]).exit_code == 0
    shown = runner.invoke(cli, ["-C", str(repo), "remember", "--batch", str(batch_file)])
    assert shown.exit_code == 0 and "Checking" in shown.stderr and "Checking" not in shown.stdout
    other = batch_file.with_name("other.jsonl")
    other.write_text(batch_file.read_text().replace("Service", "Daemon"), encoding="utf-8")
    quiet = runner.invoke(cli, ["-C", str(repo), "remember", "--batch", str(other), "--json"])
    assert quiet.exit_code == 0 and "Checking" not in quiet.stderr
    assert len(json.loads(quiet.stdout)["created"]) == 60
