"""The ``elfmem`` command (also installed as ``git-elfmem``, so ``git elfmem …`` works).

Each command is one call to ``MemorySystem`` and one render of its result.
"""

from __future__ import annotations

import os

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
    for name in WRITING:
        _add_wait(cli.commands[name])


WRITING = (
    *("remember", "edit", "forget", "dream", "curate", "connect", "disconnect", "undo"),
    *("outcome", "import", "import-upstream", "migrate", "migrate-embeddings", "init"),
    *("mind", "peer", "review", "sync", "mode", "agent-docs"),
)
"""Commands that commit: each takes ``--wait SECONDS`` (in a group, each of its commands)."""


def _set_wait(ctx: click.Context, param: click.Parameter, value: float | None) -> None:
    if value is not None:  # read by the store's write lock (elfmem/store/writelock.py)
        os.environ["ELFMEM_WAIT"] = repr(value)


def _add_wait(command: click.Command) -> None:
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _add_wait(sub)
        return
    command.params.append(
        click.Option(
            ["--wait"],
            type=click.FloatRange(min=0),
            default=None,
            metavar="SECONDS",
            expose_value=False,
            is_eager=True,
            callback=_set_wait,
            help="Wait at most this long for another elfmem writer (default 10; 0: fail at once).",
        )
    )


_register()


def main() -> None:
    cli(prog_name="elfmem")
