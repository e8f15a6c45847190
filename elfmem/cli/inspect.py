"""``ls``, ``inbox``, ``show``, ``history``, ``ledger``, ``log``: reading, never writing."""

from __future__ import annotations

import click

from elfmem.cli.output import emit, json_option, run


@click.command()
@click.option("--tag", default=None, help="Tag pattern, e.g. 'self/%' or db/postgres.")
@click.option("--category", default=None, help="Only this category.")
@click.option(
    "--status",
    type=click.Choice(["inbox", "active", "archived", "all"]),
    default=None,
    help="Default: inbox and active.",
)
@click.option("--limit", type=int, default=None, help="At most this many blocks.")
@json_option
@click.pass_context
def ls(
    ctx: click.Context,
    tag: str | None,
    category: str | None,
    status: str | None,
    limit: int | None,
    json_: bool,
) -> None:
    """List blocks: deterministic, unscored."""
    emit(run(ctx, json_, lambda s: s.ls(tag, category, status, limit)), json_)


@click.command()
@json_option
@click.pass_context
def inbox(ctx: click.Context, json_: bool) -> None:
    """Blocks waiting for `dream`, oldest first."""
    emit(run(ctx, json_, lambda s: s.inbox()), json_)


@click.command()
@click.argument("block_id")
@json_option
@click.pass_context
def show(ctx: click.Context, block_id: str, json_: bool) -> None:
    """One block in full."""
    info = run(ctx, json_, lambda s: s.show(block_id))
    tags = ", ".join(info.tags)
    text = f"{info.summary}\ncue: {info.cue}\ntags: {tags}\nfile: {info.path}\n\n{info.content}"
    emit(info, json_, text)


@click.command()
@click.argument("block_id")
@json_option
@click.pass_context
def history(ctx: click.Context, block_id: str, json_: bool) -> None:
    """The commits that touched a block, newest first."""
    emit(run(ctx, json_, lambda s: s.block_history(block_id)), json_)


@click.command()
@click.argument("block_id")
@json_option
@click.pass_context
def ledger(ctx: click.Context, block_id: str, json_: bool) -> None:
    """A block's ledger events (its git note under refs/notes/elfmem)."""
    emit(run(ctx, json_, lambda s: s.ledger(block_id)), json_)


@click.command(name="log")
@click.option(
    "-n", "limit", type=int, default=20, show_default=True, help="How many operations to list."
)
@json_option
@click.pass_context
def log_(ctx: click.Context, limit: int, json_: bool) -> None:
    """The most recent elfmem operations."""
    items = run(ctx, json_, lambda s: s.history(limit))
    text = "\n".join(f"{c['commit_id'][:12]}  {c['op']:<9} {c['subject']}" for c in items)
    emit(items, json_, text or "(no elfmem commits)")


COMMANDS = [ls, inbox, show, history, ledger, log_]
