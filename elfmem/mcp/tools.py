"""The MCP tool table: one row per ``MemorySystem`` operation, and nothing else.

Adding an operation to the MCP server is adding a row here (see ``spec`` for what a row holds).
"""

from __future__ import annotations

from elfmem.mcp.spec import MemoryItem, Param, ToolSpec

CONTENT = Param("content", str, "The knowledge itself: one self-contained statement.")
CUE = Param("cue", str, "When a future agent should recall this: the situation, in one line.")
TAGS = Param("tags", list[str], 'Hierarchical tags such as "db/postgres".')
BLOCK_ID = Param(
    "block_id", str, "A block id from remember, recall or ls, or a unique prefix of 4+ characters."
)
TOP_K = Param("top_k", int | None, "How many blocks to return (default: the frame's own).")
AT = Param("at", str | None, "Answer from memory as it was at this commit (e.g. HEAD~20).")
SECRET = Param("allow_secret", bool, "Store text that looks like a credential anyway.")
SOURCE = Param("source", str, "The block the link starts from.")
TARGET = Param("target", str, "The block it points to.")

CORE: tuple[ToolSpec, ...] = (
    ToolSpec(
        "remember",
        "write",
        True,
        "Store one piece of knowledge in long-term memory (its inbox): milliseconds, no LLM, one "
        "git commit. Always pass a cue: without one the block is found only by its own wording. "
        "Storing the same text again is a graceful duplicate that returns the existing block_id. "
        'Example: {"content": "The API rate-limits at 100 req/min per key", '
        '"cue": "hitting 429s or planning request throughput", "tags": ["api/limits"]}',
        (
            CONTENT,
            CUE,
            TAGS,
            Param("category", str, "knowledge, observation (fades fast), goal (lasts), ..."),
            Param("pinned", bool, "Never archive this block automatically."),
            SECRET,
        ),
    ),
    ToolSpec(
        "remember_many",
        "write",
        True,
        "Store several blocks in ONE commit (use instead of many elfmem_remember calls). Each "
        'item has content and, ideally, a cue. Example: {"items": [{"content": "Deploys '
        'freeze on Fridays", "cue": "planning a release"}, {"content": "Staging mirrors '
        'prod nightly", "cue": "testing against realistic data"}]}',
        (
            Param("items", list[MemoryItem], "The blocks: objects with content, cue, tags, ..."),
            SECRET,
        ),
    ),
    ToolSpec(
        "recall",
        "read",
        False,
        "Retrieve what memory knows that bears on a query, ranked and rendered as prompt-ready "
        "`text` (plus the scored `blocks`). Call it before reasoning about anything. Returned "
        'blocks count as used (their decay clock resets). Example: {"query": "rate limiting '
        'strategy", "frame": "attention", "top_k": 8}',
        (
            Param("query", str, "What you are about to reason about."),
            Param("frame", str, "attention (default), task, simulate, or a configured frame."),
            TOP_K,
            AT,
        ),
    ),
    ToolSpec(
        "frame",
        "read",
        False,
        'Render one frame. "self" (no query) is who you are: inject its text into your system '
        'prompt. "attention" and "task" take a query. Example: {"name": "self"} or '
        '{"name": "task", "query": "this sprint"}',
        (
            Param("name", str, "self, attention, task, simulate, or a configured frame."),
            Param("query", str | None, "The query (leave out for self)."),
            TOP_K,
            AT,
        ),
    ),
    ToolSpec(
        "should_dream",
        "read",
        True,
        "Whether enough has gathered in the inbox to consolidate now; if true, call "
        "elfmem_dream at the next pause. Example: {}",
        result_key="should_dream",
    ),
    ToolSpec(
        "dream",
        "write",
        False,
        "Consolidate the inbox: embed, drop true duplicates, link look-alikes and related blocks, "
        "promote to active; one commit. Processes a bounded batch: check inbox_remaining and "
        "call again to drain. no_llm runs the deterministic path; rescore (deep sleep) also "
        "re-judges aged active blocks against the current identity. "
        'Example: {"max_blocks": 20, "no_llm": true}',
        (
            Param("max_blocks", int | None, "Blocks to process this call (default 5)."),
            Param("no_llm", bool, "Consolidate without LLM scoring."),
            Param("rescore", bool, "Also re-evaluate aged active blocks (deep sleep)."),
        ),
    ),
    ToolSpec(
        "edit",
        "write",
        True,
        "Correct a block's content, cue or tags; its id survives. Leave out what stays the same. "
        'Example: {"block_id": "6d30b623c804705e", "content": "The API rate-limits at '
        '1000 req/min per key"}',
        (
            BLOCK_ID,
            Param("content", str | None, "The corrected text."),
            Param("cue", str | None, "A new cue."),
            Param("tags", list[str] | None, "Replacement tags (all of them)."),
            SECRET,
        ),
    ),
    ToolSpec(
        "forget",
        "destructive",
        True,
        "Archive a block that is wrong or no longer wanted (kept in history; elfmem_undo brings "
        'it back). Idempotent. Example: {"block_id": "6d30b623c804705e"}',
        (BLOCK_ID,),
    ),
    ToolSpec(
        "undo",
        "destructive",
        False,
        "Revert the last elfmem write (or the named commit) with a new commit. Use it right after "
        'a mistaken remember, edit, forget or dream. Example: {} or {"commit": "3f2a9c1"}',
        (Param("commit", str | None, "The commit to revert (default: the last elfmem one)."),),
    ),
)

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

# Feedback, the graph and health. A row whose method has not landed yet is skipped (see module doc).
LATER: tuple[ToolSpec, ...] = (
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

TOOLS: tuple[ToolSpec, ...] = CORE + READS + LATER
