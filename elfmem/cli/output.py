"""One renderer for every command: data on stdout (text or ``--json``), words on stderr.

Errors are translated once, here: ``Error:`` and ``Recovery:`` on stderr and the exit code of the
error's kind (the table in ``elfmem.errors`` and docs/errors.md); with ``--json`` the object
``{"error", "recovery", "type"}`` goes to stdout as well, so a script reads one JSON document
from stdout whether the command worked or not. Problems in memory files that
a command worked around (a conflicted bucket, a block id in two files) are ``Warning:`` lines on
stderr, and a ``warnings`` list in a ``--json`` object.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import IO, Any, NoReturn, TypeVar, cast

import click

from elfmem.errors import ElfmemError, InvalidInput

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


def json_option(f: F) -> F:
    """``--json`` on a command: the stable JSON shape instead of text."""
    return click.option("--json", "json_", is_flag=True, help="Print JSON on stdout.")(f)


def to_jsonable(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, list):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    return value


_WARNINGS: list[str] = []
"""Warnings the last ``run`` printed on stderr; ``emit`` adds them to a JSON object too."""


def emit(value: Any, json_: bool, text: str | None = None) -> None:
    if json_:
        data = to_jsonable(value)
        if _WARNINGS and isinstance(data, dict) and "warnings" not in data:
            data = {**data, "warnings": list(_WARNINGS)}
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        shown = text if text is not None else str(value)
        click.echo(for_terminal(shown) if sys.stdout.isatty() else shown)


def for_terminal(text: str) -> str:
    """``text`` with control characters other than tab and newline written as ``\\xNN``: stored
    text may hold them (a vertical tab, a Windows-1252 quote read as U+0093), and a terminal
    would act on them or hide them. A pipe or a file gets the text as stored."""
    from elfmem.block.model import TERMINAL_RE

    return TERMINAL_RE.sub(lambda m: f"\\x{ord(m[0]):02x}", text)


def printable(text: str) -> str:
    """``text`` with anything UTF-8 cannot encode (lone surrogates from bad argv bytes) escaped."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def fail(exc: ElfmemError, json_: bool) -> NoReturn:
    if json_:
        data = {**exc.to_dict(), "warnings": list(_WARNINGS)} if _WARNINGS else exc.to_dict()
        click.echo(json.dumps(data, ensure_ascii=True))
    click.echo(f"Error: {printable(exc.message)}", err=True)
    if exc.recovery:
        click.echo(f"Recovery: {printable(exc.recovery)}", err=True)
    sys.exit(exc.exit_code)


def read_stdin() -> str:
    """All of stdin as text, strictly UTF-8: bad bytes are refused, never guessed at."""
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"stdin is not valid UTF-8 (byte {exc.start}: {exc.reason}).",
            "Pipe UTF-8 text (convert with `iconv -t UTF-8`); nothing was written.",
        ) from exc


def repo_path(ctx: click.Context) -> Path | None:
    obj = ctx.find_root().obj or {}
    value = obj.get("path")
    return Path(value) if value else None


def finish(coro: Coroutine[Any, Any, T]) -> T:
    """Run an API coroutine to its end without an event loop, and return its result.

    The API is async for the MCP server, over a synchronous core: its coroutines await only
    each other, never a timer, a socket or a thread, so one step of the coroutine runs it
    through. Importing asyncio to do that would cost every command about 20 ms (with ssl and
    sockets, docs/startup.md). A coroutine that did wait on an event loop is a bug, said as one.
    """
    try:
        coro.send(None)
    except StopIteration as done:
        return cast(T, done.value)
    coro.close()
    raise RuntimeError("an elfmem API call waited on an event loop, which the CLI does not run")


def run(ctx: click.Context, json_: bool, action: Callable[[Any], Awaitable[T]]) -> T:
    """Open the memory, run one API call, close it; translate elfmem errors."""
    from elfmem.api import MemorySystem

    async def go() -> T:
        system = await MemorySystem.from_config(repo_path(ctx))
        try:
            return await action(system)
        finally:
            _warn(system.take_warnings())
            await system.close()

    try:
        return finish(go())
    except ElfmemError as exc:
        fail(exc, json_)
        raise  # unreachable: fail exits


def _warn(warnings: list[str]) -> None:
    """File problems the command met, once each, on stderr (stdout stays data)."""
    _WARNINGS[:] = warnings
    for line in warnings:
        click.echo(f"Warning: {line}", err=True)


def guarded(json_: bool, fn: Callable[[], T]) -> T:
    try:
        return fn()
    except ElfmemError as exc:
        fail(exc, json_)
        raise


def host_analyses(source: IO[str] | None, shape: str, json_: bool) -> dict[str, Any] | None:
    """The ``--host-analyses`` file as a JSON object keyed by block id, or a usage error."""
    if source is None:
        return None
    try:
        data = json.load(source)
    except json.JSONDecodeError as exc:
        fail(
            InvalidInput(
                f"--host-analyses: not JSON ({exc.msg}, line {exc.lineno}).", f"Give {shape}."
            ),
            json_,
        )
    if not isinstance(data, dict):
        fail(
            InvalidInput(
                "--host-analyses: expected a JSON object keyed by block id.", f"Give {shape}."
            ),
            json_,
        )
    return {str(k): v for k, v in data.items()}
