"""The ``elfmem`` command (also installed as ``git-elfmem``, so ``git elfmem …`` works).

Each command is one call to ``MemorySystem`` and one render of its result.
"""

from __future__ import annotations

import importlib
import os

import click

from elfmem import __version__
from elfmem.cli.contract import ElfmemGroup


class LazyGroup(ElfmemGroup):
    """The root group: knows every command's name, imports a command's module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMAND_MODULES})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            self._load(COMMAND_MODULES[cmd_name])
        return super().get_command(ctx, cmd_name)

    def load_all(self) -> None:
        """Every command, in the table's order, for what walks ``commands`` (the reference)."""
        for module_name in dict.fromkeys(COMMAND_MODULES.values()):
            if any(n not in self.commands for n, m in COMMAND_MODULES.items() if m == module_name):
                self._load(module_name)
        order = {name: i for i, name in enumerate(COMMAND_MODULES)}
        self.commands = dict(sorted(self.commands.items(), key=lambda kv: order[kv[0]]))

    def _load(self, module_name: str) -> None:
        """Import one command module and add its commands (``--wait`` on those that commit)."""
        module = importlib.import_module(f"elfmem.cli.{module_name}")
        for command in module.COMMANDS:
            if command.name in WRITING:
                _add_wait(command)
            self.add_command(command)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
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


COMMAND_MODULES: dict[str, str] = {
    **dict.fromkeys(("init", "templates"), "setup"),
    **dict.fromkeys(("remember", "edit", "forget", "undo"), "capture"),
    **dict.fromkeys(("ls", "inbox", "show", "history", "ledger", "log"), "inspect"),
    **dict.fromkeys(("recall", "frame", "dream"), "recall"),
    **dict.fromkeys(
        ("outcome", "connect", "disconnect", "curate", "status", "migrate-embeddings"), "adaptive"
    ),
    **dict.fromkeys(("index", "doctor"), "index"),
    "visualise": "visualise",
    "serve": "serve",
    **dict.fromkeys(("hooks", "hook"), "hooks"),
    **dict.fromkeys(("sync", "mode"), "sharing"),
    **dict.fromkeys(("guide", "agent-docs", "cli-docs"), "guide"),
    "review": "review",
    "mind": "mind",
    "peer": "peer",
    **dict.fromkeys(("export", "import"), "exchange"),
    "demo": "demo",
    "merge-driver": "merging",
    **dict.fromkeys(("backup", "restore", "rescue", "migrate", "import-upstream"), "archive"),
}
"""The module under ``elfmem/cli/`` that defines each command. A command's module is imported
when the command is looked up, so ``elfmem remember`` loads the capture commands and not the
other seventeen modules (``--help`` looks every command up, and loads them all)."""


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


def main() -> None:
    cli(prog_name="elfmem")
