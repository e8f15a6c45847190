"""``review lookalikes`` and ``review resolve``: the near-twin pairs dream kept apart.

Both are subcommands of the ``review`` group (``elfmem/cli/review.py``), beside the seed's
``review`` and ``review corpus``.
"""

from __future__ import annotations

import click

from elfmem.cli.output import emit, json_option, run

ACTIONS = ("keep", "supersede", "merge")
"""``elfmem.rhythms.lookalikes.ACTIONS``, spelled here so ``--help`` loads no index (a test
compares the two)."""


@click.command()
@json_option
@click.pass_context
def lookalikes(ctx: click.Context, json_: bool) -> None:
    """Look-alike pairs dream kept and linked, not yet resolved, with their differences."""
    emit(run(ctx, json_, lambda s: s.lookalikes()), json_)


@click.command()
@click.argument("block_id")
@click.argument("other")
@click.argument("action", type=click.Choice(ACTIONS))
@json_option
@click.pass_context
def resolve(ctx: click.Context, block_id: str, other: str, action: str, json_: bool) -> None:
    """Settle a look-alike pair in one commit (`elfmem undo` reverts it): `keep` both,
    BLOCK_ID `supersede`s OTHER, or `merge` OTHER into BLOCK_ID (OTHER is archived)."""
    emit(run(ctx, json_, lambda s: s.resolve_lookalike(block_id, other, action)), json_)


SUBCOMMANDS = [lookalikes, resolve]
