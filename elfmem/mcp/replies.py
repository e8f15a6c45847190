"""Tool results as the calling model reads them: a JSON object, or ``{"error", "recovery"}``.

Errors are translated here once. An elfmem error keeps its own message and recovery; a call the
SDK refuses (unknown tool, arguments that miss the schema) is reported as invalid input; anything
unexpected becomes one line naming the exception type, never a stack trace (that goes to stderr).
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, TextContent
from pydantic import ValidationError

from elfmem.errors import ElfmemError, InternalError, InvalidInput

CRASH_RECOVERY = (
    "This is a fault inside elfmem, not in your arguments. Retry once; if it repeats, stop "
    "using this tool for now, tell the user, and include this error. The server's stderr log "
    "has the traceback."
)
SCHEMA_RECOVERY = (
    "Call the tool with arguments that match its inputSchema (see tools/list); every tool's "
    "description ends with an example call."
)
UNKNOWN_RECOVERY = (
    "List the tools (tools/list): each is named elfmem_<operation>, e.g. elfmem_recall."
)


def plain(value: Any) -> Any:
    """A result as JSON-ready data, through each object's own ``to_dict()``."""
    if hasattr(value, "to_dict"):
        return plain(value.to_dict())
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def _reply(body: dict[str, Any], is_error: bool) -> CallToolResult:
    # A lone surrogate (echoed from a bad argument) cannot reach the wire; it becomes "?".
    text = json.dumps(body, ensure_ascii=False, default=str).encode("utf-8", "replace").decode()
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=json.loads(text),
        is_error=is_error,
    )


def success(value: Any, key: str, warnings: list[str] | None = None) -> CallToolResult:
    """The result's ``to_dict()``; a bare value or list is wrapped as ``{key: value}``.

    ``warnings``: problems in memory files the call worked around (file:line each), added as a
    ``warnings`` list when there are any.
    """
    data = plain(value)
    body = data if isinstance(data, dict) else {key: data}
    return _reply({**body, "warnings": warnings} if warnings else body, False)


def refused(exc: ElfmemError, warnings: list[str] | None = None) -> CallToolResult:
    body = exc.to_dict()
    return _reply({**body, "warnings": warnings} if warnings else body, True)


def crashed(exc: BaseException) -> CallToolResult:
    """An unexpected exception: the internal kind of the error table, one line, no traceback."""
    first = (str(exc).splitlines() or [""])[0]
    return refused(InternalError(f"{type(exc).__name__}: {first}", CRASH_RECOVERY))


def _field_errors(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in err['loc']) or 'arguments'}: {err['msg']}"
        for err in exc.errors()
    )


def rejected(tool: str, exc: ToolError) -> CallToolResult:
    """A call the SDK turned down before it reached the tool."""
    if isinstance(exc, UnexpectedToolError):
        return crashed(exc.__cause__ or exc)
    if isinstance(exc.__cause__, ValidationError):
        message = f"{tool}: invalid arguments: {_field_errors(exc.__cause__)}"
        return refused(InvalidInput(message, SCHEMA_RECOVERY))
    return refused(InvalidInput(f"{tool}: {exc}", UNKNOWN_RECOVERY))
