"""The stdio wire: every line is checked before the SDK sees it, and a malformed one is answered.

The SDK's stdio transport hands a line it cannot read to the session as an exception, which logs
and drops it: a client that wrote malformed JSON, a batch, a wrong ``jsonrpc`` or a lone surrogate
waited for an answer that never came. Here each line is read with a bound (``MAX_LINE``), parsed
and checked (one object, ``jsonrpc`` "2.0", a request, notification or response, nesting at most
``MAX_DEPTH``, text that is valid Unicode); a good one goes on to the SDK, any other is answered
at once: a parse error (-32700) for what is not JSON, an invalid request (-32600) for the rest,
with the message's id when one can be read. Serving goes on either way.

The process's own descriptors are taken over as the SDK's transport does: while serving, fd 0
reads the null device and fd 1 writes to stderr, so a child process or a stray print can neither
steal a request nor put anything but protocol on the wire.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, JSONRPCMessage
from mcp_types import jsonrpc_message_adapter as messages
from pydantic import ValidationError

MAX_LINE = 16 * 1024 * 1024
"""Bytes one message may take; a longer line is skipped to its end and answered, never held."""
MAX_DEPTH = 64
"""Nesting a message may have; MCP's own messages stay under 10."""

Checked = JSONRPCMessage | JSONRPCError


def refusal(code: int, message: str, message_id: str | int | None = None) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=message_id, error=ErrorData(code=code, message=message))


def check(line: bytes | None) -> Checked:
    """The message a line holds, or the error that answers it (``None``: a line too long)."""
    if line is None:
        return refusal(INVALID_REQUEST, f"message longer than {MAX_LINE} bytes; skipped")
    try:
        value = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        return refusal(PARSE_ERROR, "message is not UTF-8")
    except RecursionError:
        return refusal(INVALID_REQUEST, f"message nested deeper than {MAX_DEPTH} levels")
    except ValueError as exc:
        return refusal(PARSE_ERROR, f"message is not JSON ({exc})")
    if isinstance(value, list):
        return refusal(INVALID_REQUEST, "batches are not supported: one message per line")
    if not isinstance(value, dict):
        return refusal(INVALID_REQUEST, "a message is a JSON object")
    return _envelope(value)


def _envelope(value: dict[str, Any]) -> Checked:
    message_id = value.get("id")
    if isinstance(message_id, bool) or not isinstance(message_id, int | str):
        message_id = None
    elif isinstance(message_id, str) and not _text(message_id):
        message_id = None
    problem = _shape(value)
    if problem is not None:
        return refusal(INVALID_REQUEST, problem, message_id)
    if value.get("jsonrpc") != "2.0":
        return refusal(INVALID_REQUEST, 'jsonrpc must be "2.0"', message_id)
    if "id" in value and message_id is None:  # else it would pass as a notification, unanswered
        return refusal(INVALID_REQUEST, "id must be a string or an integer")
    try:
        return messages.validate_python(value, by_name=False)
    except ValidationError:
        return refusal(
            INVALID_REQUEST,
            "not a JSON-RPC request, notification or response (method, id, params?)",
            message_id,
        )


def _shape(value: object) -> str | None:
    """Why a parsed message cannot be served: too deep, or a string that is not Unicode."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"message nested deeper than {MAX_DEPTH} levels"
        if isinstance(item, str) and not _text(item):
            return "message holds a lone surrogate (text that is not valid Unicode)"
        if isinstance(item, dict):
            stack.extend((k, depth) for k in item)
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return None


def _text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_line(stream: BinaryIO) -> bytes | None | EOFError:
    """One line; ``None`` for a line past ``MAX_LINE`` (read to its end and dropped)."""
    line = stream.readline(MAX_LINE + 1)
    if not line:
        return EOFError()
    if len(line) <= MAX_LINE or line.endswith(b"\n"):
        return line
    while line and not line.endswith(b"\n"):
        line = stream.readline(1 << 20)
    return None


def _claim() -> tuple[BinaryIO, BinaryIO, Callable[[], None]]:
    """The wire's own copies of stdin and stdout; fd 0 → the null device, fd 1 → stderr."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)  # not inherited by children (PEP 446)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore() -> None:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)

    # closefd=False: an abandoned reader thread may still block on the descriptor at exit.
    return (
        os.fdopen(wire_in, "rb", closefd=False),
        os.fdopen(wire_out, "wb", closefd=False),
        restore,
    )


class _Wire:
    """Both directions of the wire; replies from the SDK and refusals share one writer."""

    def __init__(self, wire_in: BinaryIO, wire_out: BinaryIO) -> None:
        self.wire_in, self.wire_out = wire_in, wire_out
        self.lock = anyio.Lock()
        self.gone = False

    async def write(self, message: Checked) -> None:
        data = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
        async with self.lock:
            if not self.gone:
                try:
                    await anyio.to_thread.run_sync(self._send, data)
                except OSError:  # the client hung up; what is owed can no longer be delivered
                    self.gone = True

    def _send(self, data: bytes) -> None:
        self.wire_out.write(data)
        self.wire_out.flush()

    async def read(self, to_sdk: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        async with to_sdk:
            while True:
                line = await anyio.to_thread.run_sync(
                    read_line, self.wire_in, abandon_on_cancel=True
                )
                if isinstance(line, EOFError):
                    return
                checked = check(line)
                if isinstance(checked, JSONRPCError):
                    await self.write(checked)
                else:
                    await to_sdk.send(SessionMessage(checked))

    async def answer(self, from_sdk: MemoryObjectReceiveStream[SessionMessage]) -> None:
        async with from_sdk:
            async for item in from_sdk:
                await self.write(item.message)


@asynccontextmanager
async def guarded_stdio() -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]
]:
    """The read and write streams of the process's stdio, checked line by line."""
    wire_in, wire_out, restore = _claim()
    wire = _Wire(wire_in, wire_out)
    to_sdk, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_sdk = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(wire.read, to_sdk)
            answered = anyio.Event()

            async def answer() -> None:
                try:
                    await wire.answer(from_sdk)
                finally:
                    answered.set()

            tasks.start_soon(answer)
            try:
                yield read_stream, write_stream
            finally:
                await write_stream.aclose()
                with anyio.CancelScope(shield=True):
                    await answered.wait()
                tasks.cancel_scope.cancel()  # the reader may be blocked on a silent client
    finally:
        restore()
