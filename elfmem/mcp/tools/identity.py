"""Identity changes only by deliberate review; minds are models kept honest by predictions."""

from __future__ import annotations

from elfmem.mcp.spec import Param, ToolSpec
from elfmem.mcp.tools.params import CUE

MIND = Param("mind", str, "The mind's name (its tag is mind/<name>) or its block id.")

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
