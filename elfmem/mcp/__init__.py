"""The MCP interface: ``elfmem serve`` offers each ``MemorySystem`` operation as an elfmem_* tool.

``tools`` is the table (one row per operation, shaped by ``spec``; one module per area),
``replies`` the JSON results and error envelopes, ``server`` the official SDK's ``MCPServer`` over
one open memory, on stdio.
"""

from __future__ import annotations

from elfmem.mcp.server import build_server, run_stdio, serve_stdio

__all__ = ["build_server", "run_stdio", "serve_stdio"]
