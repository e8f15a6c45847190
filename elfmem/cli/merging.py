"""``merge-driver``: what git runs for a memory file both sides of a merge changed (hidden).

Registered by ``init`` and ``hooks install`` as ``merge.elfmem.driver``; git passes its
placeholders ``%O %A %B %P`` (base, ours, theirs, path) and reads the result back from ``%A``. It
opens no memory (git is mid-merge), and reports what it kept or split on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from elfmem.cli.output import emit, guarded, json_option


@click.command("merge-driver", hidden=True)
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("path")
@json_option
def merge_driver(base: Path, ours: Path, theirs: Path, path: str, json_: bool) -> None:
    """Merge memory file PATH by block id: BASE, OURS and THEIRS as git names them (%O %A %B);
    the result replaces OURS. Exit 0 when merged, 1 when conflict markers were left."""
    from elfmem.sharing.driver import run_driver  # pygit2: only when git runs the driver

    result = guarded(json_, lambda: run_driver(base, ours, theirs, path))
    if json_:
        emit(result, True)
    else:
        for event in result.events:
            click.echo(f"elfmem: {event}", err=True)
    sys.exit(result.status)


COMMANDS = [merge_driver]
