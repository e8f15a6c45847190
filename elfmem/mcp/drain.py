"""Answer every request before hanging up: the end of stdin waits for the replies still owed.

A client may write its requests and close stdin at once (a script piping JSON-RPC in). The SDK
ends the session on the end of input and cancels what is still running, so a ``remember``
could commit with no answer sent. ``Drain`` sits on both streams: it counts each request read
and each reply written, and holds the end of input back until every request read so far has
its reply (bounded by ``WAIT`` seconds, so a call that never returns cannot keep the process).
"""

from __future__ import annotations

import contextvars
from types import TracebackType
from typing import Any

import anyio
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCRequest, JSONRPCResponse

WAIT = 600.0  # seconds the end of input waits for the replies still owed

Item = SessionMessage | Exception


class Drain:
    """The ids of requests read and not yet answered; ``settled`` once none are left."""

    def __init__(self) -> None:
        self.owed: set[str | int] = set()
        self.settled = anyio.Event()
        self.settled.set()

    def read(self, item: Item) -> None:
        if isinstance(item, SessionMessage) and isinstance(item.message, JSONRPCRequest):
            self.owed.add(item.message.id)
            if not self.settled.is_set():
                return
            self.settled = anyio.Event()

    def answered(self, item: SessionMessage) -> None:
        if isinstance(item.message, (JSONRPCResponse, JSONRPCError)):
            self.owed.discard(item.message.id)
            if not self.owed:
                self.settled.set()

    async def wait(self) -> None:
        with anyio.move_on_after(WAIT):
            while self.owed:
                await self.settled.wait()


class DrainingReader:
    """The read stream, whose end arrives only after every request read has been answered."""

    def __init__(self, inner: ReadStream[Item], drain: Drain) -> None:
        self.inner = inner
        self.drain = drain

    @property
    def last_context(self) -> contextvars.Context | None:
        context: contextvars.Context | None = getattr(self.inner, "last_context", None)
        return context

    async def receive(self) -> Item:
        try:
            item = await self.inner.receive()
        except anyio.EndOfStream:
            await self.drain.wait()
            raise
        self.drain.read(item)
        return item

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __aiter__(self) -> DrainingReader:
        return self

    async def __anext__(self) -> Item:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> DrainingReader:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class AnsweringWriter:
    """The write stream, marking each reply it sends as answered."""

    def __init__(self, inner: WriteStream[SessionMessage], drain: Drain) -> None:
        self.inner = inner
        self.drain = drain

    async def send(self, item: SessionMessage, /) -> None:
        try:
            await self.inner.send(item)
        finally:  # a reply that cannot be written (client gone) is owed no longer
            self.drain.answered(item)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> AnsweringWriter:
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        await self.aclose()
        return None
