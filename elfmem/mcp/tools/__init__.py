"""The MCP tool table: one row per ``MemorySystem`` operation, and nothing else.

Adding an operation to the MCP server is adding a row to its area's module (see ``spec`` for what
a row holds). ``TOOLS`` is the order the server registers them in, and so the order of tools/list.
"""

from __future__ import annotations

from elfmem.mcp.spec import ToolSpec
from elfmem.mcp.tools.care import CARE
from elfmem.mcp.tools.core import CORE, SETUP
from elfmem.mcp.tools.identity import IDENTITY
from elfmem.mcp.tools.reads import READS
from elfmem.mcp.tools.sharing import EXCHANGE, SHARING

TOOLS: tuple[ToolSpec, ...] = CORE + SETUP + READS + CARE + IDENTITY + SHARING + EXCHANGE
