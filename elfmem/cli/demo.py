"""``demo``: the guided tour in elfmem/demo.py, printed step by step."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from elfmem.cli.output import guarded


@click.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
def demo(folder: Path | None) -> None:
    """Run a guided tour on a small memory: capture, dream, recall, a correction, an outcome,
    undo, time travel, the git log and notes. Offline; no API key.

    FOLDER (new or empty, outside any git repository) keeps the memory to look at afterwards;
    without it the tour runs in a temporary folder that is deleted at the end.
    """
    import asyncio

    from elfmem import demo as demo_mod  # the whole API: loaded only when the tour runs

    guarded(False, lambda: asyncio.run(demo_mod.run(folder, click.echo, program())))


def program() -> str:
    """How to run elfmem again: ``elfmem`` when that is what PATH finds, else the full path of
    the script that is running (``.venv/bin/elfmem`` from the README's first command)."""
    started = Path(sys.argv[0]).absolute()
    import shutil

    on_path = shutil.which("elfmem")
    if started.name != "elfmem" or (on_path and Path(on_path).absolute() == started):
        return "elfmem"
    return shlex.quote(str(started))


COMMANDS = [demo]
