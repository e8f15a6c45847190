"""The error contract at the command line's edge: whatever goes wrong, ``Error:`` + ``Recovery:``.

Click reports its own usage errors in its own words and lets any other exception out as a
traceback. ``ElfmemGroup.main`` runs click without its standalone handling and translates every
way out once, by the table in ``elfmem.errors``: a usage error is invalid input (exit 2) whose
recovery names the option and gives an example; text that is not UTF-8 is invalid input; Ctrl-C
exits 130 saying so; anything unexpected is an internal error (exit 70) that says how to see the
traceback (``--debug`` or ``ELFMEM_DEBUG=1``) instead of printing one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from elfmem.cli.output import fail
from elfmem.errors import (
    EXIT_INTERRUPTED,
    ElfmemError,
    InternalError,
    InvalidInput,
    from_os_error,
)

REPORT = "https://github.com/elfmem/elfmem/issues"
UTF8_RECOVERY = (
    "Pass text as UTF-8 (check the terminal's or file's encoding, e.g. `iconv -t UTF-8`), "
    "then run the command again; nothing was written."
)


def _debugging(args: Sequence[str]) -> bool:
    return "--debug" in args or os.environ.get("ELFMEM_DEBUG", "") not in ("", "0")


def _path(ctx: click.Context) -> str:
    """The command as a user types it (``elfmem`` whatever the program was called)."""
    return " ".join(["elfmem", *ctx.command_path.split()[1:]])


def _example(ctx: click.Context | None) -> str:
    """A runnable-looking line for the command: its path and every required parameter."""
    if ctx is None:
        return "elfmem --help"
    parts = [_path(ctx)]
    for param in ctx.command.params:
        if isinstance(param, click.Argument) and param.required:
            parts.append(param.make_metavar(ctx))
        elif isinstance(param, click.Option) and param.required:
            parts.append(f"{param.opts[-1]} {param.make_metavar(ctx)}")
    return " ".join(parts)


def _help_of(ctx: click.Context | None) -> str:
    return f"`{_path(ctx)} --help`" if ctx is not None else "`elfmem --help`"


def _hidden(ctx: click.Context, name: str) -> bool:
    group = ctx.command
    command = group.get_command(ctx, name) if isinstance(group, click.Group) else None
    return command is None or command.hidden


def _first_command(ctx: click.Context) -> str:
    group = ctx.command
    names = group.list_commands(ctx) if isinstance(group, click.Group) else []
    first = [n for n in ("status", "check") if n in names] or names[:1]
    return " ".join([_path(ctx), *first[:1]])


def usage_error(exc: click.ClickException) -> InvalidInput:
    """Click's refusal as invalid input, with a recovery that names what to pass and shows how."""
    ctx = getattr(exc, "ctx", None)
    param = getattr(exc, "param", None)
    no_command = isinstance(exc, click.exceptions.NoArgsIsHelpError) or (
        exc.format_message() == "Missing command."
    )
    if no_command and ctx is not None and isinstance(ctx.command, click.Group):
        names = [n for n in ctx.command.list_commands(ctx) if not _hidden(ctx, n)]
        return InvalidInput(
            f"`{_path(ctx)}` needs a command.",
            f"Pick one of: {', '.join(names)} (e.g. `{_first_command(ctx)}`); see {_help_of(ctx)}.",
        )
    if isinstance(exc, click.MissingParameter) and param is not None:
        name = param.opts[-1] if isinstance(param, click.Option) else param.human_readable_name
        what = getattr(param, "help", None) or f"the {param.human_readable_name} argument"
        recovery = (
            f"{name} is required: {what} For example: `{_example(ctx)}`; see {_help_of(ctx)}."
        )
    elif isinstance(exc, click.NoSuchOption):
        maybe = f" Did you mean {', '.join(exc.possibilities)}?" if exc.possibilities else ""
        recovery = f"Drop or correct {exc.option_name}.{maybe} The options are in {_help_of(ctx)}."
    elif isinstance(exc, click.BadParameter):
        recovery = f"Give a valid value (the accepted values are in {_help_of(ctx)})."
    else:
        recovery = f"Run {_help_of(ctx)} for the usage and an example."
    return InvalidInput(exc.format_message(), recovery)


def internal_error(exc: BaseException, debug: bool) -> InternalError:
    """An unexpected exception as one line; the traceback only when asked for."""
    if debug:
        import traceback  # loaded on the way out only: every command starts through here

        traceback.print_exception(exc, file=sys.stderr)
    first = (str(exc).splitlines() or [""])[0]
    return InternalError(
        f"internal error ({type(exc).__name__}: {first}); this is a bug in elfmem, not your input.",
        "Run the command again with `elfmem --debug …` (or ELFMEM_DEBUG=1) to see the traceback, "
        f"and report it with that output at {REPORT}.",
    )


class ElfmemGroup(click.Group):
    """The ``elfmem`` group: click's parsing, with every error routed through ``fail``."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        json_ = "--json" in argv
        try:
            code = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as exc:
            fail(usage_error(exc), json_)
        except click.Abort:
            click.echo("Error: interrupted (Ctrl-C).", err=True)
            click.echo("Recovery: Run `elfmem status` to see what was committed.", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except ElfmemError as exc:  # raised outside run(), e.g. by an option callback
            fail(exc, json_)
        except UnicodeError as exc:  # invalid UTF-8 on stdin, or in a file argument
            reason = getattr(exc, "reason", str(exc))
            fail(InvalidInput(f"The input is not valid UTF-8 ({reason}).", UTF8_RECOVERY), json_)
        except OSError as exc:  # a write the filesystem refused is "locked"; the rest, a bug
            fail(from_os_error(exc) or internal_error(exc, _debugging(argv)), json_)
        except Exception as exc:  # the interface boundary: one line, never a traceback
            fail(internal_error(exc, _debugging(argv)), json_)
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else 0)
