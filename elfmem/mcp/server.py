"""The MCP server: every row of the tool table becomes one ``elfmem_*`` tool over one open memory.

A tool is a single ``MemorySystem`` call and one reply; no behaviour lives here. The process holds
ONE ``MemorySystem`` for its lifetime, inside one session, and closes it (ending the session and
flushing the ledger spool) when the client hangs up or a signal asks it to stop.
"""

from __future__ import annotations

import inspect
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult

from elfmem import __version__
from elfmem.api import ConfigLike, MemorySystem
from elfmem.errors import LockedError
from elfmem.mcp import replies
from elfmem.mcp.binding import mismatch, tool_annotations, tool_function
from elfmem.mcp.drain import AnsweringWriter, Drain, DrainingReader
from elfmem.mcp.tools import TOOLS
from elfmem.mcp.wire import guarded_stdio

logger = logging.getLogger("elfmem.mcp")

INSTRUCTIONS = (
    "elfmem is your long-term memory, kept in git. Call elfmem_frame with name 'self' once to know "
    "who you are; call elfmem_recall before reasoning about a topic; store what is worth keeping "
    "with elfmem_remember, always with a cue; when elfmem_should_dream says true, call "
    "elfmem_dream at a natural pause. Every error carries a 'recovery': do what it says."
)


class MemoryServer(MCPServer[None]):
    """``MCPServer`` over one memory; SDK refusals (unknown tool, bad arguments) are envelopes."""

    def __init__(self, system: MemorySystem) -> None:
        self.memory = system
        self.gate = anyio.Lock()
        super().__init__(
            "elfmem",
            version=__version__,
            instructions=INSTRUCTIONS,
            lifespan=self._session,
            log_level="WARNING",
        )
        for spec in TOOLS:
            reason = mismatch(spec)
            if reason is None:
                self.add_tool(
                    tool_function(system, spec, self.gate),
                    name=spec.name,
                    description=spec.description,
                    annotations=tool_annotations(spec),
                    structured_output=False,
                )
            elif inspect.getattr_static(MemorySystem, spec.method, None) is not None:
                logger.warning("tool %s not served: %s", spec.name, reason)

    @asynccontextmanager
    async def _session(self, _: MCPServer[None]) -> AsyncIterator[None]:
        try:
            await self.memory.begin_session()
        except LockedError as exc:  # a read-only repository: serve reads, record no session
            logger.warning("serving without a session: %s", exc.message)
        try:
            yield None
        finally:
            with anyio.CancelScope(shield=True):
                await self.shutdown()

    async def shutdown(self) -> None:
        """End the session and close the memory, after the call in flight (if any) finishes."""
        async with self.gate:
            await self.memory.close()

    async def run_stdio_async(self) -> None:
        """Serve stdio; the end of stdin waits until every request read has been answered, and a
        malformed line is answered with a JSON-RPC error (``wire``)."""
        drain = Drain()
        async with guarded_stdio() as (read_stream, write_stream):
            await self._lowlevel_server.run(
                DrainingReader(read_stream, drain),
                AnsweringWriter(write_stream, drain),
                self._lowlevel_server.create_initialization_options(),
            )

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[None, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            return replies.rejected(name, exc)


def build_server(system: MemorySystem) -> MemoryServer:
    """A server over ``system``; running it opens a session, and its end closes the memory."""
    return MemoryServer(system)


async def _exit_on_signal(server: MemoryServer) -> None:
    # Cancelling would wait forever on the SDK's stdin reader thread, so close, then leave.
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async for _ in signals:
            await server.shutdown()
            os._exit(0)


async def serve_stdio(path: str | Path | None = None, config: ConfigLike = None) -> None:
    """Open the memory at ``path`` and serve it over stdin/stdout until the client hangs up."""
    import numpy  # noqa: F401  (loaded once, before any request: see elfmem/lazyload.py)

    server = build_server(await MemorySystem.from_config(path, config))
    async with anyio.create_task_group() as tasks:
        if sys.platform != "win32":  # no signal receiver there; the client closes stdin instead
            tasks.start_soon(_exit_on_signal, server)
        await server.run_stdio_async()
        tasks.cancel_scope.cancel()


def run_stdio(path: str | Path | None = None, config: ConfigLike = None) -> None:
    """Blocking entry point for ``elfmem serve``."""
    anyio.run(serve_stdio, path, config)
