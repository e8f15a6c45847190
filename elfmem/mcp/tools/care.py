"""Feedback, the graph and health: outcomes, links, curation, look-alikes, status, the guide."""

from __future__ import annotations

from elfmem.mcp.spec import Param, ToolSpec
from elfmem.mcp.tools.params import BLOCK_ID

SOURCE = Param("source", str, "The block the link starts from.")
TARGET = Param("target", str, "The block it points to.")

CARE: tuple[ToolSpec, ...] = (
    ToolSpec(
        "outcome",
        "write",
        False,
        "Fold an observed result (0.0 failed .. 1.0 worked) into the confidence of the blocks you "
        "used. Not for blocks still in the inbox (dream first); 0.5 is not neutral. Example: "
        '{"block_ids": ["6d30b623c804705e"], "signal": 0.9, "source": "test_suite"}',
        (
            Param("block_ids", list[str], "The blocks that informed the result, in rank order."),
            Param("signal", float, "0.0-1.0: how well it went."),
            Param("weight", float, "How many observations this counts as."),
            Param("source", str, "Where the signal came from, e.g. test_suite."),
        ),
    ),
    ToolSpec(
        "connect",
        "write",
        True,
        "Link two blocks with a typed relation (supports, supersedes, related, ...). Example: "
        '{"source": "6d30b623c804705e", "target": "9c3797223e6fd9ed", "relation": "supports"}',
        (SOURCE, TARGET, Param("relation", str, "supports, supersedes, related, ...")),
    ),
    ToolSpec(
        "connect_by_query",
        "write",
        True,
        "Link two blocks you can only describe: each description is matched, and the link is made "
        'only if both match closely enough. Example: {"query_a": "Redis caching strategy", '
        '"query_b": "Redis memory management", "relation": "related"}',
        (
            Param("query_a", str, "Describes the first block."),
            Param("query_b", str, "Describes the second block."),
            Param("relation", str, "supports, supersedes, related, ..."),
            Param("min_confidence", float, "How closely both must match (0..1)."),
        ),
    ),
    ToolSpec(
        "disconnect",
        "destructive",
        True,
        'Remove a link between two blocks. Example: {"source": "6d30b623c804705e", '
        '"target": "9c3797223e6fd9ed", "relation": "supports"}',
        (SOURCE, TARGET, Param("relation", str, "The relation to remove.")),
    ),
    ToolSpec(
        "curate",
        "destructive",
        False,
        "At rest: prune weak edges, archive decayed or refuted blocks (never pinned or "
        "constitutional ones) in one commit that elfmem_undo reverts, reinforce the best. "
        "Example: {}",
        (Param("top_k", int | None, "How many top blocks to reinforce (default: configured)."),),
    ),
    ToolSpec(
        "lookalikes",
        "read",
        True,
        "Near-twin blocks that dream kept apart (they differ in a name, number, negation, ...) "
        "and linked for review, with the differences named; resolve each with "
        "elfmem_resolve_lookalike. Example: {}",
    ),
    ToolSpec(
        "resolve_lookalike",
        "destructive",
        False,
        "Settle one look-alike pair in one commit (elfmem_undo reverts it): keep both, "
        "block_id supersedes other, or merge other into block_id (other archived). Example: "
        '{"block_id": "6d30b623c804705e", "other": "9c3797223e6fd9ed", "action": "supersede"}',
        (
            BLOCK_ID,
            Param("other", str, "The other block of the pair."),
            Param("action", str, "keep, supersede or merge."),
        ),
    ),
    ToolSpec(
        "status",
        "read",
        True,
        "Memory health and a suggested next action; call at the start of a session. Example: {}",
    ),
    ToolSpec(
        "guide",
        "read",
        True,
        "How to use an operation, authoritative and current; never fails. Example: "
        '{"operation": "recall"} or {}',
        (Param("operation", str | None, "An operation name (default: the overview)."),),
    ),
)
