"""The README's shell walkthroughs, run as a newcomer would: its own lines, the installed command.

The short tour and both sides of the sharing walkthrough run in one bash script, line by line as
written, starting in a folder that holds the install's ``.venv`` (the README's first line
activates it; the test's own PATH does not carry the environment's ``bin``). git's global config
names no default branch, so ``git init --bare`` makes ``master`` while elfmem makes ``main``:
the clone checks out nothing and the walkthrough's ``git switch main`` is what brings the memory.
``<id>`` becomes the id ``remember`` printed: a six-character prefix for elfmem's commands (ids
work like git's), the full id where git computes the note's anchor from it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def sh_blocks(heading: str) -> list[list[str]]:
    """The ``sh`` blocks of one README section, each as its lines (continuations joined)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    blocks = [part.split("```", 1)[0] for part in section.split("```sh\n")[1:]]
    return [block.replace("\\\n", " ").splitlines() for block in blocks]


def tour_lines() -> list[str]:
    return sh_blocks("A short tour")[0]


def sharing_lines() -> list[str]:
    return [line for block in sh_blocks("Sharing memory") for line in block]


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
    assert tour_lines()[0].startswith("source .venv/bin/activate")
    for step in ("init", "remember", "dream", "recall", "edit", "forget", "undo", "outcome"):
        assert f"git elfmem {step}" in commands, step
    assert "git log" in commands and "git notes --ref=elfmem show" in commands
    sharing = " ".join(sharing_lines())
    for step in ("hooks install", "git push", "sync", "git clone", "git switch main", "status"):
        assert step in sharing, step


def _newcomer_env(tmp_path: Path) -> dict[str, str]:
    """PATH without the environment's bin, a HOME whose git names no default branch."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Pat Person\n\temail = pat@example.com\n")
    (tmp_path / "tmp").mkdir()
    path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if Path(p) != BIN
    )
    drop = ("VIRTUAL_ENV", "GIT_CONFIG_GLOBAL", "XDG_CONFIG_HOME")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return {**env, "PATH": path, "HOME": str(home), "TMPDIR": str(tmp_path / "tmp")}


@pytest.mark.slow
def test_the_readme_tour_and_sharing_walkthrough_run_as_written(tmp_path: Path) -> None:
    clone = tmp_path / "clone"  # where the install ran: it holds the .venv
    clone.mkdir()
    (clone / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    script = as_script(tour_lines()) + 'echo "TOUR=$PWD"\n' + as_script(sharing_lines())
    run = subprocess.run(
        ["bash", "-c", script],
        cwd=clone,
        env=_newcomer_env(tmp_path),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert run.returncode == 0, f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    tour, sharing = run.stdout.split("\nTOUR=", 1)
    assert '"frame": "attention"' in tour  # recall --json
    assert "You are Ada" in tour
    for op in ("init:", "remember:", "dream:", "edit:", "forget:", "Revert"):
        assert op in tour, op  # git log --oneline
    assert '"kind":"birth"' in tour and '"kind":"outcome"' in tour  # the note
    folder = Path(sharing.split("\n", 1)[0])
    assert (folder / ".elfmem" / "memory" / "self.md").exists()
    # The clone side: the remote's HEAD named master, so the clone checked out nothing ...
    assert "remote HEAD refers to nonexistent ref" in run.stderr
    # ... until `git switch main`; then the memory and its ledger are there.
    assert "Nothing remembered yet" not in sharing and "Health: empty" not in sharing
    assert "You are Ada" in sharing.split(">>> git elfmem recall", 1)[1], sharing
