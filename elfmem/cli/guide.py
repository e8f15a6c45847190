"""``guide`` and ``agent-docs`` from the table in elfmem/guide/; ``cli-docs`` from the commands.

The first two tell agents how to use the memory; ``cli-docs`` writes docs/cli.md for people.
"""

from __future__ import annotations

from pathlib import Path

import click

from elfmem.cli.output import emit, fail, json_option, repo_path
from elfmem.errors import InvalidInput


@click.command()
@click.argument("topic", nargs=-1)
@json_option
def guide(topic: tuple[str, ...], json_: bool) -> None:
    """Every command, or one in full (`history`, `index check`), with the API operation
    beside it; API names (`block_history`) work too. An unknown TOPIC lists them all."""
    from elfmem.cli import topics  # the guide's table: loaded for this command only

    name = " ".join(topic) or None
    text = topics.lookup(name)
    if text is None:
        fail(InvalidInput(topics.unknown(str(name)), "elfmem guide TOPIC"), json_)
    emit({"operation": name, "text": text}, json_, text)


@click.command(name="agent-docs")
@json_option
@click.pass_context
def agent_docs(ctx: click.Context, json_: bool) -> None:
    """Write .elfmem/AGENT.md from the guide table."""
    root = repo_path(ctx) or Path.cwd()
    path = root / ".elfmem" / "AGENT.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    from elfmem import guide as guide_mod

    path.write_text(guide_mod.agent_markdown(), encoding="utf-8")
    emit({"path": str(path)}, json_, f"Wrote {path}")


@click.command(name="cli-docs", hidden=True)
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write here (e.g. docs/cli.md) instead of stdout.",
)
@click.pass_context
def cli_docs(ctx: click.Context, out: Path | None) -> None:
    """Render docs/cli.md from the commands (a test fails when the checked-in copy differs)."""
    from elfmem.cli.reference import render_reference

    group = ctx.find_root().command
    assert isinstance(group, click.Group)
    text = render_reference(group)
    if out is None:
        click.echo(text, nl=False)
        return
    out.write_text(text, encoding="utf-8")
    click.echo(f"Wrote {out}", err=True)


COMMANDS = [guide, agent_docs, cli_docs]
