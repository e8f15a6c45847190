"""``hooks install | uninstall | status`` and the hidden ``hook NAME`` the installed programs call.

``hook pre-commit`` reads git's index and nothing else, so it skips opening the memory: importing
the whole API costs far more than the check. The other hooks open the memory, make one call and
never fail the git command that ran them: an elfmem error is printed as every command prints one
(``Error:``/``Recovery:``), followed by a line saying the hook was skipped.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from elfmem.cli.output import emit, guarded, json_option, repo_path, run

if TYPE_CHECKING:
    from elfmem.api import MemorySystem
    from elfmem.care import hooks as logic
    from elfmem.rhythms.results import Result

HOOK_NAMES = (
    "pre-commit",
    "post-merge",
    "post-checkout",
    "post-rewrite",
    "pre-push",
    "reference-transaction",
)
"""``elfmem.care.hooks.HOOK_NAMES``, spelt here so ``--help`` need not load the hooks' logic
(a test keeps the two equal)."""


async def _install(system: MemorySystem) -> logic.HooksReport:
    return await system.hooks_install()


async def _uninstall(system: MemorySystem) -> logic.HooksReport:
    return await system.hooks_uninstall()


async def _status(system: MemorySystem) -> logic.HooksReport:
    return await system.hooks_status()


async def _reindex(system: MemorySystem) -> logic.ReindexResult:
    return await system.hook_reindex()


async def _flush(system: MemorySystem) -> logic.FlushResult:
    return await system.flush_ledger()


@click.group()
def hooks() -> None:
    """Git hooks for your own git commands: check memory on commit, reindex on checkout/merge."""


@hooks.command()
@json_option
@click.pass_context
def install(ctx: click.Context, json_: bool) -> None:
    """Install where git looks (core.hooksPath or .git/hooks), chaining hooks already there."""
    emit(run(ctx, json_, _install), json_)


@hooks.command()
@json_option
@click.pass_context
def uninstall(ctx: click.Context, json_: bool) -> None:
    """Remove elfmem's hooks and put back the hooks they chained, exactly as they were."""
    emit(run(ctx, json_, _uninstall), json_)


@hooks.command()
@json_option
@click.pass_context
def status(ctx: click.Context, json_: bool) -> None:
    """Each hook: ours, chained (ours, running an earlier hook first), foreign or missing."""
    emit(run(ctx, json_, _status), json_)


@click.command(hidden=True, context_settings={"ignore_unknown_options": True})
@click.argument("name", type=click.Choice(HOOK_NAMES))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@json_option
@click.pass_context
def hook(ctx: click.Context, name: str, args: tuple[str, ...], json_: bool) -> None:
    """Run elfmem's part of git hook NAME with git's arguments (the hook programs call it)."""
    from elfmem.care import hooks as logic

    if name == "pre-commit":
        root = repo_path(ctx) or Path.cwd()
        result = guarded(json_, lambda: logic.check_staged(root, args))
        if json_:
            emit(result, True)
        if not result.ok:
            click.echo(result.summary, err=True)
            sys.exit(1)
    elif name == "pre-push":
        remote, lines = args[0] if args else None, _input_lines()
        _never_failing(
            ctx, name, json_, (lambda s: s.hook_pre_push(remote, lines)) if remote else _flush
        )
    elif name == "reference-transaction":
        if args[:1] == ("committed",):
            lines = _input_lines()
            _never_failing(ctx, name, json_, lambda s: s.hook_after_push(lines))
    elif logic.wants_reindex(name, args):
        _never_failing(ctx, name, json_, _reindex)


def _input_lines() -> list[str]:
    """What git wrote on the hook's standard input (nothing when it is a terminal)."""
    if sys.stdin is None or sys.stdin.isatty():
        return []
    return [line.strip() for line in sys.stdin.read().splitlines() if line.strip()]


def _never_failing(
    ctx: click.Context, name: str, json_: bool, action: Callable[[MemorySystem], Awaitable[Result]]
) -> None:
    """Run one call through ``run``, but never fail the git command that ran the hook."""
    from elfmem.care import hooks as logic

    try:
        result = run(ctx, json_, action)
    except SystemExit:  # run() has printed the elfmem error and its recovery, then exited
        click.echo(f"elfmem: {name} hook skipped (the error above); git carries on", err=True)
        return
    except Exception as exc:  # a hook must never break the user's git command
        first = (str(exc).splitlines() or [""])[0]
        click.echo(f"elfmem: {name} hook skipped ({type(exc).__name__}: {first})", err=True)
        return
    if json_:
        emit(result, True)
    if isinstance(result, logic.ReindexResult) and result.errors:
        click.echo(f"elfmem: {result.summary}", err=True)
    elif isinstance(result, logic.FlushResult) and result.events:
        click.echo(f"elfmem: {result.summary}", err=True)
    elif name == "reference-transaction":
        said = str(getattr(result, "message", ""))
        if getattr(result, "notes_pushed", False):
            click.echo(f"elfmem: notes pushed {said}.", err=True)
        elif said:
            click.echo(f"elfmem: notes not pushed ({said}).", err=True)


COMMANDS = [hooks, hook]
