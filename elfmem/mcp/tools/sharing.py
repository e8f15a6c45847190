"""Sharing with other memories: sync through a remote, peers and their messages, bundles."""

from __future__ import annotations

from elfmem.mcp.spec import Param, ToolSpec
from elfmem.mcp.tools.params import TAGS

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

IMPORT_PARAMS = (
    Param("path", str, "The bundle file."),
    Param("from_peer", str | None, "The peer (name or did:key) that exported it."),
    Param("self_merge", bool, "The bundle comes from this same memory."),
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
