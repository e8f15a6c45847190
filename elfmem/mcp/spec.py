"""One row of the MCP tool table: the API method, its exposed parameters, its annotations.

Each row names the ``MemorySystem`` method, the parameters the tool exposes (by the API's own
names), how the tool is annotated and what the calling model is told. Defaults come from the API
signature, so a row cannot drift from the method it serves; a row whose method does not exist yet
is skipped, so operations can be listed before they land.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Literal, Required

from pydantic import ConfigDict, with_config

# typing_extensions, not typing: pydantic builds the schema and refuses typing's before 3.12.
from typing_extensions import TypedDict

Kind = Literal["read", "write", "destructive"]


@with_config(ConfigDict(strict=True))  # "pinned": "false" is refused, never read as true
class MemoryItem(TypedDict, total=False):
    """One block to remember: content (required), cue, tags, category, pinned, when, and
    supersedes (ids of the blocks it corrects)."""

    content: Required[str]
    cue: str
    tags: list[str]
    category: str
    pinned: bool
    when: str
    supersedes: list[str]


@dataclass(frozen=True)
class Param:
    """One tool parameter: the API's name for it, its JSON type, and a line for the model."""

    name: str
    type: Any
    doc: str
    default: Any = inspect.Parameter.empty
    """The tool's own default, when a client must get a safer one than the API's (empty: the
    API's)."""


@dataclass(frozen=True)
class ToolSpec:
    """One tool: ``elfmem_<method>`` calling ``MemorySystem.<method>``."""

    method: str
    """The ``MemorySystem`` attribute this tool calls (a method, or a property read)."""
    kind: Kind
    """read: readOnlyHint; destructive: destructiveHint; write: neither."""
    idempotent: bool
    description: str
    """Written for the model that calls the tool, ending with one example call."""
    params: tuple[Param, ...] = ()
    result_key: str = ""
    """The key that wraps a result that is not already a JSON object (default: the method)."""
    fixed: tuple[tuple[str, Any], ...] = ()
    """API arguments the tool always passes and never shows the client (e.g. ``confined``)."""
    tool_name: str = ""
    """The tool's name when the seed names it otherwise (``elfmem_import`` for
    ``import_bundle``); empty: ``elfmem_`` plus the method."""

    @property
    def name(self) -> str:
        return self.tool_name or f"elfmem_{self.method}"
