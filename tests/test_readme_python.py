"""The README's Python example runs as written: on a fresh repository its outcome is recorded,
and in a folder with no repository the error it stops with says what to do."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.cli import cli
from tests.conftest import git

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


EXAMPLES = [b for b in _python_blocks() if "MemorySystem" in b]


def test_the_readme_has_a_python_example() -> None:
    assert EXAMPLES


@pytest.mark.parametrize("code", EXAMPLES)
def test_the_readme_python_example_runs_on_a_fresh_repository(
    code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(README), "exec"), {"__name__": "__main__"})  # noqa: S102
    printed = capsys.readouterr().out
    assert "100 req/min" in printed  # the frame it prints holds the block it just remembered
    assert "1 updated, 0 skipped" in printed  # the outcome it sends is recorded
    doctor = CliRunner().invoke(cli, ["-C", str(tmp_path), "doctor"])
    assert doctor.exit_code == 0, doctor.stdout  # the first write committed the config


@pytest.mark.parametrize("code", EXAMPLES)
def test_the_readme_python_example_in_an_empty_folder_says_what_to_do(
    code: str, tmp_path: Path
) -> None:
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert run.returncode != 0
    assert "No git repository contains" in run.stderr
    assert "Recovery: Run `elfmem init` here" in run.stderr
