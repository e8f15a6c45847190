"""The everyday loop: remember, recall and frame, dream, correct and undo; then setup."""

from __future__ import annotations

from elfmem.mcp.spec import MemoryItem, Param, ToolSpec
from elfmem.mcp.tools.params import BLOCK_ID, CUE, TAGS

CONTENT = Param("content", str, "The knowledge itself: one self-contained statement.")
TOP_K = Param(
    "top_k", int | None, "How many blocks to return, 1 or more (default: the frame's own)."
)
AT = Param("at", str | None, "Answer from memory as it was at this commit (e.g. HEAD~20).")
SECRET = Param("allow_secret", bool, "Store text that looks like a credential anyway.")
SUPERSEDES = Param(
    "supersedes",
    list[str],
    "Ids of the blocks this one corrects (when you know you are correcting something recall "
    "showed). Recorded in the same commit; recall then ranks the new block above them until "
    "outcomes refute it.",
)

CORE: tuple[ToolSpec, ...] = (
    ToolSpec(
        "remember",
        "write",
        True,
        "Store one piece of knowledge in long-term memory (its inbox): milliseconds, no LLM, one "
        "git commit. Always pass a cue: without one the block is found only by its own wording. "
        "Storing the same text again is a graceful duplicate that returns the existing block_id. "
        "When the new text corrects a block recall showed, pass its id in supersedes. "
        'Example: {"content": "The API rate-limits at 1000 req/min per key", '
        '"cue": "hitting 429s or planning request throughput", "tags": ["api/limits"], '
        '"supersedes": ["6d30b623c804705e"]}',
        (
            CONTENT,
            CUE,
            TAGS,
            Param("category", str, "knowledge, observation (fades fast), goal (lasts), ..."),
            Param("pinned", bool, "Never archive this block automatically."),
            SECRET,
            Param(
                "when",
                str,
                "When it was said or learned (2023-05-08, 8 May 2023, yesterday, or a period: "
                "8 May 2023 to 9 June 2023); recall uses it for questions that ask when or name "
                "a time.",
            ),
            SUPERSEDES,
        ),
    ),
    ToolSpec(
        "remember_many",
        "write",
        True,
        "Store several blocks in ONE commit (use instead of many elfmem_remember calls). Each "
        "item has content and, ideally, a cue; supersedes lists the ids an item corrects. "
        'Example: {"items": [{"content": "Deploys '
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
            Param(
                "max_blocks",
                int | None,
                "Blocks to process this call (default: all without an LLM, 5 with one).",
            ),
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

SETUP: tuple[ToolSpec, ...] = (
    ToolSpec(
        "setup",
        "write",
        True,
        "State-aware setup of this memory, as `elfmem init` does: idempotent, so on an "
        "established memory it only refreshes. Sets the agent's name, and adds the ten "
        "constitutional blocks (seed) or a profession template's blocks for roles not yet "
        'filled; one commit when anything changed. Example: {"name": "Ada", "seed": true}',
        (
            Param("name", str | None, "The agent's invocation name (default: unchanged)."),
            Param("seed", bool, "Add the ten constitutional blocks."),
            Param("template", str | None, "A profession template (see `elfmem templates`)."),
        ),
    ),
)
