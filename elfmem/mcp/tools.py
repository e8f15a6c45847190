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
SOURCE = Param("source", str, "The block the link starts from.")
TARGET = Param("target", str, "The block it points to.")
IMPORT_PARAMS = (
    Param("path", str, "The bundle file."),
    Param("from_peer", str | None, "The peer (name or did:key) that exported it."),
    Param("self_merge", bool, "The bundle comes from this same memory."),
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

MIND = Param("mind", str, "The mind's name (its tag is mind/<name>) or its block id.")

# Identity changes only by deliberate review; minds are models kept honest by predictions.
IDENTITY: tuple[ToolSpec, ...] = (
    ToolSpec(
        "review_constitutional",
        "read",
        True,
        "Compare each constitutional principle with what you have learned (never task outcomes) "
        "and propose amendments; changes nothing. Without an LLM the proposals carry no text: "
        "write it yourself via host_analyses, then elfmem_accept_amendment. Example: {} or "
        '{"host_analyses": {"6d30b623c804705e": {"text": "I change course when evidence '
        'disagrees.", "reason": "three blocks contradict it"}}}',
        (
            Param("no_llm", bool, "The deterministic drift report only."),
            Param(
                "host_analyses",
                dict[str, dict[str, str]] | None,
                "Proposal text from you: {block_id: {text, reason}}.",
            ),
        ),
    ),
    ToolSpec(
        "review_corpus",
        "destructive",
        False,
        "Find stale active blocks (superseded, refuted, contested, contradicted, old, low "
        "confidence) and "
        "propose archive or re-check; apply archives the archive proposals in one commit that "
        'elfmem_undo reverts. Example: {} or {"apply": true}',
        (Param("apply", bool, "Archive the archive proposals now."),),
    ),
    ToolSpec(
        "accept_amendment",
        "write",
        False,
        "Rewrite one constitutional block as one commit naming the proposal (from "
        'elfmem_review_constitutional). Example: {"proposal": "6d30b623c804705e.1a2b3c4d", '
        '"content": "I change course when the evidence disagrees."}',
        (
            Param("content", str, "The amended principle."),
            Param("block_id", str | None, "The constitutional block (if no proposal)."),
            Param("proposal", str | None, "The proposal id from the review."),
            Param("reason", str, "Why, for the commit message."),
        ),
    ),
    ToolSpec(
        "list_amendments",
        "read",
        True,
        "How identity changed, newest first, from git: amendments, their reverts and people's "
        'edits of self.md. Example: {"limit": 10}',
        (Param("limit", int, "At most this many entries."),),
    ),
    ToolSpec(
        "revert_amendment",
        "destructive",
        False,
        "Undo the newest standing amendment with a new commit. Example: {}",
    ),
    ToolSpec(
        "mind_create",
        "write",
        False,
        "Model another agent, person or system as a mind block (tag mind/<name>); the simulate "
        'frame always includes it. Example: {"name": "alice", "content": "Alice reviews '
        'cautiously and blocks large PRs without tests."}',
        (
            Param("name", str, "A short name: letters, digits, _ . -"),
            Param("content", str, "The model: how they think, what they want."),
            Param("cue", str, "When to recall it (default: reasoning about the name)."),
        ),
    ),
    ToolSpec(
        "mind_predict",
        "write",
        False,
        "Attach a falsifiable prediction to a mind; close it later with elfmem_mind_outcome. "
        'Example: {"mind": "alice", "content": "Alice will reject PR 42 for lacking tests."}',
        (MIND, Param("content", str, "What they will do, checkably."), CUE),
    ),
    ToolSpec(
        "mind_outcome",
        "write",
        False,
        "Close a prediction as a hit or a miss; the mind's confidence becomes the Beta "
        "posterior (0.5 + hits) / (1 + hits + misses). "
        'Example: {"prediction_id": "9c3797223e6fd9ed", "hit": true}',
        (
            Param("prediction_id", str, "The prediction's block id."),
            Param("hit", bool, "True if it came true."),
            Param("note", str, "What happened."),
        ),
    ),
    ToolSpec(
        "mind_list",
        "read",
        True,
        "Every modelled mind with hits, misses, open predictions and confidence. Example: {}",
    ),
    ToolSpec(
        "mind_show",
        "read",
        True,
        'One mind with all its predictions. Example: {"mind": "alice"}',
        (MIND,),
    ),
)

PEER = Param("peer", str, "The peer's roster name (see elfmem_peer_list) or its did:key id.")

SHARING: tuple[ToolSpec, ...] = (
    ToolSpec(
        "sync",
        "write",
        False,
        "Share memory with other clones through a git remote: fetch, merge and push (never "
        "forced). Ref mode carries the memory ref and the ledger notes; branch mode carries "
        "the notes only (the memory files travel with the user's own git pull/push). Reports "
        'what came in and went out. Example: {} or {"remote": "origin"}',
        (Param("remote", str | None, "A remote name, URL or path (default: origin)."),),
    ),
    ToolSpec(
        "peer_list",
        "read",
        True,
        "This memory's peer id and the peers it knows, each with the trust set by hand and the "
        "trust folded from outcomes of blocks imported from it. Example: {}",
    ),
    ToolSpec(
        "peer_send",
        "write",
        False,
        "Send a short message to a peer through git: kept in this memory (one commit), signed "
        "and pushed to the peer's remote. Never put credentials in a message. "
        'Example: {"peer": "bob", "message": "Staging restarts at noon", "tags": ["ops/db"]}',
        (PEER, Param("message", str, "What to tell the peer: one self-contained statement."), TAGS),
    ),
    ToolSpec(
        "peer_inbox",
        "write",
        False,
        "Fetch and list messages peers sent to this memory, with each signature's state "
        "(verified, unsigned, bad); do_import takes the new ones from known peers in one commit, "
        "tagged peer/<name> and shown apart from your own principles. "
        'Example: {"do_import": true}',
        (Param("do_import", bool, "Import the new messages (one commit)."),),
    ),
    ToolSpec(
        "peer_inbox_status",
        "read",
        False,
        "Fetch, then count messages waiting: new, imported, refused, and new per peer. Example: {}",
    ),
)

EXCHANGE: tuple[ToolSpec, ...] = (
    ToolSpec(
        "export",
        "write",
        True,
        "Write a bundle file (JSON Lines) of shareable blocks with provenance and ledger state. "
        "share: public (blocks marked share/public), peer (public and unmarked), all (for "
        "moving this same memory). Private blocks never leave. The file goes to the exports "
        "folder (the reply's path says where); an existing file is replaced only with "
        'overwrite. Example: {"share": "peer", "output": "ada.jsonl"}',
        (
            Param("share", str, "public, peer or all."),
            Param("output", str, "A file name inside the exports folder, e.g. ada.jsonl."),
            Param("min_confidence", float, "Leave out blocks less confident than this."),
            Param("overwrite", bool, "Replace a file of that name.", default=False),
        ),
        fixed=(("confined", True),),
    ),
    ToolSpec(
        "import_bundle",
        "write",
        True,
        "Import a bundle in one commit (elfmem_undo takes it back; importing again adds "
        "nothing). From a peer (from_peer): tagged peer/<name>, shown apart from your own "
        "knowledge, its confidence scaled by the peer's trust. From this same memory "
        '(self_merge): as it was. Example: {"path": "/tmp/ada.jsonl", "from_peer": "ada"}',
        IMPORT_PARAMS,
        tool_name="elfmem_import",  # the seed's name for it
    ),
    ToolSpec(
        "import_bundle",
        "write",
        True,
        "The same as elfmem_import (this name is kept for callers that use it). "
        'Example: {"path": "/tmp/ada.jsonl", "from_peer": "ada"}',
        IMPORT_PARAMS,
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

TOOLS: tuple[ToolSpec, ...] = CORE + SETUP + READS + LATER + IDENTITY + SHARING + EXCHANGE
