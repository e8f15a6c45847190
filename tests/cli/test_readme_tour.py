"""The README's short tour, run as a newcomer would: its own shell lines, the installed command.

Each line of the tour block runs in bash in a fresh folder with the environment's ``bin`` first
on PATH, so ``git elfmem`` reaches the installed ``git-elfmem``. ``<id>`` becomes the id
``remember`` printed: a six-character prefix for elfmem's commands (ids work like git's), the
full id where git computes the note's anchor from it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def tour_lines() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## A short tour", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return block.replace("\\\n", " ").splitlines()


def as_script(lines: list[str]) -> str:
    out = ["set -euo pipefail"]
    for line in lines:
        if line.startswith("git elfmem remember"):
            line = f"ID=$({line.split('  #', 1)[0]})"
        elif line.startswith("git notes"):
            line = line.replace("<id>", '"$ID"')
        else:
            line = line.replace("<id>", '"${ID:0:6}"')
        out += [f"echo '>>> {line.split('  #', 1)[0].strip()}'", line]
    return "\n".join(out) + "\n"


def test_the_tour_covers_what_the_readme_promises() -> None:
    commands = " ".join(tour_lines())
    for step in ("init", "remember", "dream", "recall", "edit", "forget", "undo", "outcome"):
        assert f"git elfmem {step}" in commands, step
    assert "git log" in commands and "git notes --ref=elfmem show" in commands


@pytest.mark.slow
def test_the_readme_tour_runs_in_a_fresh_folder(tmp_path: Path) -> None:
    folder = tmp_path / "fresh"
    folder.mkdir()
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = subprocess.run(
        ["bash", "-c", as_script(tour_lines())],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert run.returncode == 0, f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    assert '"frame": "attention"' in run.stdout  # recall --json
    assert "You are Ada" in run.stdout
    log = subprocess.run(
        ["git", "log", "--format=%s"], cwd=folder, capture_output=True, text=True, check=True
    ).stdout
    for op in ("init:", "remember:", "dream:", "edit:", "forget:", "Revert"):
        assert op in log, op
    assert '"kind":"birth"' in run.stdout and '"kind":"outcome"' in run.stdout  # the note
    assert (folder / ".elfmem" / "memory" / "self.md").exists()
