"""``sync`` and ``mode``: memory that travels through git remotes, and where it lives."""

from __future__ import annotations

import click

from elfmem.cli.output import emit, json_option, run
from elfmem.cli.progress import progress_bar


@click.command()
@click.argument("remote", required=False)
@json_option
@click.pass_context
def sync(ctx: click.Context, remote: str | None, json_: bool) -> None:
    """Fetch, merge and push memory through REMOTE (default: origin, or the only remote).

    Ref mode: the memory ref and the ledger notes. Branch mode: the notes only; the memory files
    travel with your own git pull and git push. Never forced; retried while the remote moves.
    """
    with progress_bar(json_) as bar:
        result = run(ctx, json_, lambda s: s.sync(remote, progress=bar) if bar else s.sync(remote))
    emit(result, json_)


@click.command()
@click.argument("where", required=False, type=click.Choice(["ref", "branch"]))
@click.option("--ref", "ref", default=None, metavar="NAME", help="The ref for `ref` mode.")
@json_option
@click.pass_context
def mode(ctx: click.Context, where: str | None, ref: str | None, json_: bool) -> None:
    """Where memory lives; `mode ref` moves it onto its own ref, `mode branch` moves it back.

    Each move is commits that lose nothing (one on the ref and one on the branch, or one on
    the branch), and each direction undoes the other.
    """
    emit(run(ctx, json_, lambda s: s.mode(where, ref)), json_)


COMMANDS = [sync, mode]
