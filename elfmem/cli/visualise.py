"""``visualise``: write the memory graph as one self-contained HTML page and print its path."""

from __future__ import annotations

from pathlib import Path

import click

from elfmem.cli.output import emit, json_option, run


@click.command()
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the page (default: <gitdir>/elfmem/graph.html).",
)
@click.option("--include-archived", is_flag=True, help="Also draw archived blocks, faded.")
@click.option(
    "--max-nodes",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Keep identity and the most connected blocks first.",
)
@json_option
@click.pass_context
def visualise(
    ctx: click.Context, out: Path | None, include_archived: bool, max_nodes: int, json_: bool
) -> None:
    """Draw blocks and their relations as an HTML page you can open offline."""
    result = run(ctx, json_, lambda s: s.visualise(out, include_archived, max_nodes))
    emit(result, json_)


COMMANDS = [visualise]
