"""``backup``, ``restore``, ``rescue``, ``migrate status|plan|apply`` and ``import-upstream``.

Each is one ``MemorySystem`` call and one render. ``restore`` opens no memory (it makes one), so
it calls the API's static method directly.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from elfmem.cli.output import emit, finish, guarded, json_option, run
from elfmem.cli.progress import progress_bar


@click.command()
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Path(dir_okay=False),
    required=True,
    help="The bundle file to write.",
)
@json_option
@click.pass_context
def backup(ctx: click.Context, output: str, json_: bool) -> None:
    """Write the memory's branch and its ledger to one git bundle file.

    Restore with `elfmem restore FILE DIR`, or `git clone FILE DIR` (the first elfmem command
    there brings the ledger in).
    """
    emit(run(ctx, json_, lambda s: s.backup(Path(output))), json_)


@click.command()
@click.argument("source", type=click.Path(dir_okay=False))
@click.argument("target", type=click.Path(file_okay=False), required=False)
@json_option
def restore(source: str, target: str | None, json_: bool) -> None:
    """Clone a backup bundle into TARGET (default: the bundle's name), ledger included."""
    from elfmem.api import MemorySystem

    result = guarded(
        json_, lambda: finish(MemorySystem.restore(Path(source), target and Path(target)))
    )
    emit(result, json_)


@click.command()
@json_option
@click.pass_context
def rescue(ctx: click.Context, json_: bool) -> None:
    """Explain why the index needs no rescue (it moves with the git dir and heals itself) and
    run doctor; exits 1 when doctor finds a problem."""
    result = run(ctx, json_, lambda s: s.rescue())
    emit(result, json_)
    if not result.ok:
        sys.exit(1)


@click.group()
def migrate() -> None:
    """Format migrations: status and plan read, apply writes one undoable commit."""


@migrate.command(name="status")
@json_option
@click.pass_context
def migrate_status(ctx: click.Context, json_: bool) -> None:
    """The memory's format and the steps pending; exits 1 when something is pending."""
    result = run(ctx, json_, lambda s: s.migrate_status())
    emit(result, json_)
    if result.pending:
        sys.exit(1)


@migrate.command(name="plan")
@json_option
@click.pass_context
def migrate_plan(ctx: click.Context, json_: bool) -> None:
    """Every pending step with the files it writes or deletes and their hashes. Read-only."""
    emit(run(ctx, json_, lambda s: s.migrate_plan()), json_)


@migrate.command(name="apply")
@json_option
@click.pass_context
def migrate_apply(ctx: click.Context, json_: bool) -> None:
    """Apply every pending step as one commit (`elfmem undo` reverts it)."""
    emit(run(ctx, json_, lambda s: s.migrate_apply()), json_)


@click.command(name="import-upstream")
@click.argument("path", type=click.Path(exists=True))
@json_option
@click.pass_context
def import_upstream(ctx: click.Context, path: str, json_: bool) -> None:
    """Import a memory made by upstream elfmem 0.20 (its project folder or its .db file): ids,
    cues, tags, links, edges and confidence, in one undoable commit. Safe to run again."""
    with progress_bar(json_) as bar:
        result = run(ctx, json_, lambda s: s.import_upstream(Path(path), progress=bar))
    emit(result, json_)


COMMANDS = [backup, restore, rescue, migrate, import_upstream]
