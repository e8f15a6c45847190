"""The manual page is rendered from the commands' own help and installed for ``man``."""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import click
import pytest

from elfmem.cli import cli
from elfmem.cli.manpage import PAGES, REGENERATE, escape, render_manpage, runs_alone
from elfmem.cli.reference import commands

ROOT = Path(__file__).resolve().parents[2]
MAN = ROOT / "man" / "man1"


@pytest.mark.parametrize("name", PAGES)
def test_the_checked_in_page_is_what_the_commands_render(name: str) -> None:
    assert (MAN / f"{name}.1").read_text(encoding="utf-8") == render_manpage(name=name), (
        f"man/man1/{name}.1 is out of date with the commands; regenerate with `{REGENERATE}`"
    )


def test_every_command_and_option_is_in_the_page() -> None:
    page = render_manpage()
    for path, command in commands(cli):
        if not runs_alone(command):
            continue
        assert f".SS {escape(path)}\n" in page, path
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert escape(param.opts[-1]) in page, f"{path} {param.opts}"
    assert ".SS demo\n" in page and ".SS guide\n" in page


def test_the_page_is_valid_roff_with_each_shell_completion() -> None:
    page = render_manpage(name="git-elfmem")
    assert page.startswith(".TH GIT\\-ELFMEM 1 ")
    assert "\\fBgit elfmem\\fR" in page
    assert not any(line.startswith(".") and line[1:2] in " -" for line in page.splitlines())
    for shell in ("bash_source", "zsh_source", "fish_source"):
        assert f"_ELFMEM_COMPLETE={shell}" in page


def test_text_that_looks_like_a_roff_request_is_printed_literally() -> None:
    assert escape(".SH hostile\n'quoted") == "\\&.SH hostile\n\\&'quoted"
    assert escape("a\\b -x") == "a\\eb \\-x"


def test_the_package_installs_both_pages_where_man_looks() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    files = config["tool"]["setuptools"]["data-files"]["share/man/man1"]
    assert sorted(files) == sorted(f"man/man1/{name}.1" for name in PAGES)


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed")
def test_man_finds_and_renders_the_page_from_a_manpath() -> None:
    env = {**os.environ, "MANPATH": str(ROOT / "man") + ":", "MANPAGER": "cat", "MANWIDTH": "80"}
    shown = subprocess.run(["man", "git-elfmem"], env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "git-elfmem - Git-native adaptive memory" in shown.stdout
    assert "remember" in shown.stdout and "_ELFMEM_COMPLETE=zsh_source" in shown.stdout
