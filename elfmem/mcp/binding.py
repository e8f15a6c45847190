"""Binding a tool-table row to ``MemorySystem``: its schema, its annotations, its one call.

The tool function's signature is built from the row (names, types, descriptions) and the API
method's own defaults, so the JSON schema the SDK derives is the API's, and a row that no longer
fits its method is caught here instead of failing on a call.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import anyio
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from elfmem.api import MemorySystem
from elfmem.errors import ElfmemError, from_os_error
from elfmem.mcp import replies
from elfmem.mcp.spec import ToolSpec

logger = logging.getLogger("elfmem.mcp")


def mismatch(spec: ToolSpec) -> str | None:
    """Why this row cannot serve its API method (None when it can)."""
    attr = inspect.getattr_static(MemorySystem, spec.method, None)
    if attr is None:
        return f"MemorySystem has no {spec.method!r}"
    if isinstance(attr, property):
        return "a property takes no parameters" if spec.params else None
    api = dict(inspect.signature(attr).parameters)
    api.pop("self", None)
    unknown = [
        n for n in [p.name for p in spec.params] + [n for n, _ in spec.fixed] if n not in api
    ]
    if unknown:
        return f"MemorySystem.{spec.method} has no parameter {', '.join(unknown)}"
    names = {p.name for p in spec.params} | {n for n, _ in spec.fixed}
    missing = [n for n, p in api.items() if p.default is p.empty and n not in names]
    if missing:
        return f"MemorySystem.{spec.method} requires {', '.join(missing)}, which the row omits"
    return None


def parameters(spec: ToolSpec) -> list[inspect.Parameter]:
    """The tool's parameters: the row's names, types and words, with the API method's defaults."""
    attr = inspect.getattr_static(MemorySystem, spec.method)
    api = {} if isinstance(attr, property) else inspect.signature(attr).parameters
    return [
        inspect.Parameter(
            p.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=api[p.name].default if p.default is inspect.Parameter.empty else p.default,
            annotation=Annotated[p.type, Field(description=p.doc)],
        )
        for p in spec.params
    ]


def tool_annotations(spec: ToolSpec) -> ToolAnnotations:
    return ToolAnnotations(
        title=f"elfmem {spec.method.replace('_', ' ')}",
        read_only_hint=spec.kind == "read",
        destructive_hint=spec.kind == "destructive",
        idempotent_hint=spec.idempotent,
        open_world_hint=False,
    )


def tool_function(
    system: MemorySystem, spec: ToolSpec, gate: anyio.Lock
) -> Callable[..., Awaitable[CallToolResult]]:
    """An async function whose signature is the tool's schema and whose body is one API call.

    ``gate`` admits one call at a time: the core is a single writer, and shutdown waits on it.
    """

    async def call(**arguments: Any) -> CallToolResult:
        async with gate:
            try:
                value = getattr(system, spec.method)
                if callable(value):
                    value = await value(**arguments, **dict(spec.fixed))
            except ElfmemError as exc:
                return replies.refused(exc, system.take_warnings())
            except OSError as exc:
                locked = from_os_error(exc)
                if locked is None:
                    logger.exception("%s failed unexpectedly", spec.name)
                    return replies.crashed(exc)
                return replies.refused(locked)
            except (
                Exception
            ) as exc:  # the interface boundary: one line to the model, the rest to stderr
                logger.exception("%s failed unexpectedly", spec.name)
                return replies.crashed(exc)
            warnings = system.take_warnings()
        return replies.success(value, spec.result_key or spec.method, warnings)

    params = parameters(spec)
    call.__name__ = spec.name
    call.__doc__ = spec.description
    call.__annotations__ = {p.name: p.annotation for p in params} | {"return": CallToolResult}
    call.__dict__["__signature__"] = inspect.Signature(params, return_annotation=CallToolResult)
    return call
