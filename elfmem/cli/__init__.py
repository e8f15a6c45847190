"""The ``elfmem`` command (also installed as ``git-elfmem``, so ``git elfmem …`` works).

Each command is one call to ``MemorySystem`` and one render of its result.
"""

from __future__ import annotations

import click

from elfmem import __version__
from elfmem.cli.contract import ElfmemGroup


@click.group(cls=ElfmemGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="elfmem")
@click.option(
    "-C",
    "--path",
    type=click.Path(file_okay=False),
    default=None,
    help="Run as if started in this directory (like git -C).",
)
@click.option(
    "--debug",
    is_flag=True,
    help="Show the traceback of an internal error (also ELFMEM_DEBUG=1).",
)
@click.pass_context
def cli(ctx: click.Context, path: str | None, debug: bool) -> None:
    """Git-native adaptive memory for LLM agents."""
    ctx.ensure_object(dict)
    ctx.obj["path"] = path


def _register() -> None:
    from elfmem.cli import (
        adaptive,
        archive,
        capture,
        demo,
        exchange,
        guide,
        hooks,
        index,
        inspect,
        merging,
        mind,
        peer,
        recall,
        review,
        serve,
        setup,
        sharing,
        visualise,
    )

    for module in (
        setup,
        capture,
        inspect,
        recall,
        adaptive,
        index,
        visualise,
        serve,
        hooks,
        sharing,
        guide,
        review,
        mind,
        peer,
        exchange,
        demo,
        merging,
        archive,
    ):
        for command in module.COMMANDS:
            cli.add_command(command)


_register()


def main() -> None:
    cli(prog_name="elfmem")
