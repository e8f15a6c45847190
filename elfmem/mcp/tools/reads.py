"""Reading without ranking: listings, one block, its history and ledger, the index's state."""

from __future__ import annotations

from elfmem.mcp.spec import Param, ToolSpec
from elfmem.mcp.tools.params import BLOCK_ID

READS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "ls",
        "read",
        True,
        "List blocks deterministically (unscored): what is there, not what ranks. tag takes a "
        'pattern with % as wildcard. Example: {"tag": "self/%", "limit": 20}',
        (
            Param("tag", str | None, 'A tag or pattern such as "db/%".'),
            Param("category", str | None, "Only this category."),
            Param("status", str | None, "inbox, active or archived."),
            Param("limit", int | None, "At most this many."),
        ),
    ),
    ToolSpec(
        "inbox",
        "read",
        True,
        "Blocks captured but not yet consolidated, oldest first. Example: {}",
    ),
    ToolSpec(
        "show",
        "read",
        True,
        "One block in full: content, cue, tags, status, relations, file path. "
        'Example: {"block_id": "6d30b623c804705e"}',
        (BLOCK_ID,),
    ),
    ToolSpec(
        "block_history",
        "read",
        True,
        "The commits that touched one block, newest first. "
        'Example: {"block_id": "6d30b623c804705e"}',
        (BLOCK_ID,),
    ),
    ToolSpec(
        "ledger",
        "read",
        True,
        "A block's ledger: birth, edits, reinforcement and outcome events (its git note). "
        'Example: {"block_id": "6d30b623c804705e"}',
        (BLOCK_ID,),
    ),
    ToolSpec(
        "history",
        "read",
        True,
        "The most recent elfmem operations (commits), newest first; find a commit to undo here. "
        'Example: {"limit": 10}',
        (Param("limit", int, "How many operations."),),
        result_key="commits",
    ),
    ToolSpec(
        "index_check",
        "read",
        True,
        "Parse every memory file and report format errors with file:line, after hand edits. "
        "Touches nothing. Example: {}",
    ),
    ToolSpec(
        "index_status",
        "read",
        True,
        "Where the derived search index stands: block counts, freshness, size. Example: {}",
    ),
)
