"""The README's Python example runs as written on a fresh repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import git

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_the_readme_has_a_python_example() -> None:
    assert any("MemorySystem" in block for block in _python_blocks())


@pytest.mark.parametrize("code", [b for b in _python_blocks() if "MemorySystem" in b])
def test_the_readme_python_example_runs_on_a_fresh_repository(
    code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(README), "exec"), {"__name__": "__main__"})  # noqa: S102
    printed = capsys.readouterr().out
    assert "100 req/min" in printed  # the frame it prints holds the block it just remembered
