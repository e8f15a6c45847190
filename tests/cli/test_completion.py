"""Shell completion, as README and the manual page document it, from the installed command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ELFMEM = Path(sys.executable).parent / "elfmem"
ROOT = Path(__file__).resolve().parents[2]

SCRIPTS = {
    "bash_source": "complete -o nosort -F _elfmem_completion elfmem",
    "zsh_source": "#compdef elfmem",
    "fish_source": "complete --no-files --command elfmem",
}


def completion(**env: str) -> str:
    done = subprocess.run(
        [str(ELFMEM)], env={**os.environ, **env}, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.mark.parametrize("shell", sorted(SCRIPTS))
def test_each_shell_gets_a_completion_script(shell: str) -> None:
    script = completion(_ELFMEM_COMPLETE=shell)
    assert SCRIPTS[shell] in script
    assert "_ELFMEM_COMPLETE=" in script  # the script calls back into elfmem for each word


def test_the_script_completes_command_names() -> None:
    words = completion(_ELFMEM_COMPLETE="bash_complete", COMP_WORDS="elfmem rec", COMP_CWORD="1")
    assert "plain,recall" in words.splitlines()


def test_readme_documents_completion_for_each_shell() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for shell in SCRIPTS:
        assert f"_ELFMEM_COMPLETE={shell}" in readme
