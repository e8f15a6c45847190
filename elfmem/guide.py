"""The authoritative reference: one entry per public MemorySystem operation.

``elfmem guide``, ``MemorySystem.guide()``, the MCP ``elfmem_guide`` tool and ``.elfmem/AGENT.md``
are all rendered from this table, so they cannot drift apart. A test fails when a public
operation has no entry.
"""

from __future__ import annotations

import difflib

# name: (use when, don't use when, cost, returns, next)
GUIDES: dict[str, tuple[str, str, str, str, str]] = {
    "from_config": (
        "Opening a memory: path is any directory in its repository.",
        "You need a new memory: init.",
        "ms",
        "MemorySystem",
        "session(), frame('self')",
    ),
    "from_env": (
        "Containers/CI: config from ELFMEM_<SECTION>__<KEY> variables.",
        "A config file exists.",
        "ms",
        "MemorySystem",
        "session()",
    ),
    "managed": (
        "Scripts: open, session, close in one async with.",
        "Long-running agents: from_config once.",
        "ms",
        "MemorySystem (context)",
        "remember, frame",
    ),
    "init": (
        "First run, or refreshing; --seed adds the constitution.",
        "Every call: it is setup.",
        "one commit",
        "(MemorySystem, InitResult)",
        "remember",
    ),
    "setup": (
        "Refreshing the open memory as init does (MCP elfmem_setup): name, seed, template.",
        "A memory that is not open yet: use init.",
        "one commit when anything changed",
        "InitResult",
        "status",
    ),
    "templates": (
        "Choosing a profession template for init.",
        "-",
        "none",
        "name → description",
        "init(template=...)",
    ),
    "config": ("Reading the resolved configuration.", "-", "none", "ElfmemConfig", "-"),
    "root": ("Finding the folder .elfmem lives in.", "-", "none", "Path", "-"),
    "llm": ("Seeing or replacing the model dream uses.", "-", "none", "LLM or None", "dream"),
    "session": (
        "Wrapping work: decay only advances inside sessions.",
        "-",
        "ms",
        "context",
        "frame, remember",
    ),
    "begin_session": (
        "Starting the decay clock by hand.",
        "You can use session().",
        "ms",
        "session id",
        "end_session",
    ),
    "end_session": (
        "Stopping the clock; flushes the ledger spool.",
        "-",
        "one notes commit",
        "None",
        "close",
    ),
    "close": ("Shutting down: ends the session, flushes the spool.", "-", "ms", "None", "-"),
    "remember": (
        "Storing one idea. Always pass a cue. Correcting a block recall showed: supersedes=ID.",
        "Many at once: remember_many.",
        "one commit, ms, no LLM",
        "RememberResult (created or duplicate)",
        "dream when should_dream",
    ),
    "remember_many": (
        "Bulk capture in one commit.",
        "One item: remember.",
        "one commit",
        "BatchResult",
        "dream(max_blocks=N)",
    ),
    "edit": (
        "Correcting content, cue or tags; the id survives.",
        "The block is wrong: forget or outcome.",
        "one commit",
        "ChangeResult",
        "-",
    ),
    "forget": (
        "Archiving a block (kept, undoable). Idempotent.",
        "It was merely unused: curate decides.",
        "one commit",
        "ChangeResult",
        "undo to bring it back",
    ),
    "undo": (
        "Reverting the last (or a given) elfmem commit.",
        "Commits elfmem did not make: git revert.",
        "one commit",
        "UndoResult",
        "-",
    ),
    "ls": (
        "Deterministic listing by tag pattern, category, status.",
        "Ranking by relevance: frame.",
        "ms",
        "ListResult",
        "show",
    ),
    "inbox": ("Seeing what dream will consolidate.", "-", "ms", "ListResult", "dream"),
    "show": ("One block in full.", "-", "ms", "BlockInfo", "edit, block_history"),
    "block_history": (
        "The commits that touched a block.",
        "-",
        "walks history",
        "HistoryResult",
        "undo(commit)",
    ),
    "ledger": ("A block's git-note events.", "-", "ms", "LedgerResult", "-"),
    "history": ("Recent elfmem operations.", "-", "ms", "list of commits", "undo"),
    "frame": (
        "Retrieving with a frame: self, attention, task, simulate.",
        "Listing: ls.",
        "ms, no LLM",
        "FrameResult (.text, .blocks, .dropped)",
        "outcome(last_recall_block_ids, ...)",
    ),
    "recall": (
        "What bears on a query (attention by default).",
        "Who am I: frame('self').",
        "ms, no LLM",
        "FrameResult",
        "outcome",
    ),
    "dream": (
        "Consolidating the inbox; bounded by max_blocks. rescore=True (deep sleep) also re-judges "
        "aged active blocks when identity has moved or after no_llm runs.",
        "Every capture: wait for should_dream.",
        "seconds; one LLM call a block if configured (rescore: one more per aged block)",
        "DreamResult (inbox_remaining, edges_added, rescored)",
        "dream again while inbox_remaining",
    ),
    "should_dream": ("Deciding whether to consolidate now.", "-", "ms", "bool", "dream"),
    "last_recall_block_ids": (
        "The ids the last frame rendered, for outcome.",
        "-",
        "none",
        "list of ids",
        "outcome",
    ),
    "outcome": (
        "Ground truth arrived: signal 0..1 for the blocks used.",
        "Inbox blocks (dream first); signal=0.5 is not neutral.",
        "one notes commit",
        "OutcomeResult (updated, skipped)",
        "-",
    ),
    "record_use": (
        "Blocks were relevant, truth unknown.",
        "You know the result: outcome.",
        "spooled",
        "count",
        "-",
    ),
    "connect": (
        "Linking two blocks (six declared words or related).",
        "Only descriptions: connect_by_query.",
        "one commit (declared)",
        "ConnectResult",
        "-",
    ),
    "connects": ("Many links in one commit.", "-", "one commit", "ConnectResult", "-"),
    "disconnect": ("Removing a link.", "-", "one commit (declared)", "ConnectResult", "-"),
    "connect_by_query": (
        "Linking the best matches of two descriptions.",
        "You have ids: connect.",
        "two recalls",
        "ConnectResult",
        "-",
    ),
    "curate": (
        "At rest: archive decayed/refuted, prune edges, reinforce top-K.",
        "Mid-task.",
        "seconds; one commit",
        "CurateResult (review list)",
        "undo if too eager",
    ),
    "lookalikes": (
        "After dream links look-alikes: near twins kept apart, differences named.",
        "To find duplicates: dream already archived the true ones.",
        "ms to seconds (folds every active block's note)",
        "LookalikesResult (pairs: newer, older, differs, revision)",
        "resolve_lookalike on each pair",
    ),
    "resolve_lookalike": (
        "Settle one look-alike pair: keep both, supersede (first over second), or merge.",
        "Unsure which is right: keep both, or record outcomes and let them decide.",
        "ms; one commit",
        "ResolveResult",
        "undo if it was the wrong call",
    ),
    "status": (
        "Start of a session: health and a suggestion.",
        "-",
        "ms",
        "StatusResult",
        "its suggestion",
    ),
    "doctor": (
        "Something behaves oddly: checks with fixes.",
        "-",
        "ms (resolve: one LLM call)",
        "DoctorResult",
        "the fixes it prints",
    ),
    "doctor_secrets": (
        "Checking that no credential is already in the memory's history or notes.",
        "-",
        "one read of every memory blob in history",
        "SecretAudit",
        "the purge steps it prints (elfmem never rewrites history)",
    ),
    "doctor_frames": (
        "Seeing what every frame renders and drops.",
        "-",
        "one recall per frame",
        "list of FrameResult",
        "-",
    ),
    "index_check": (
        "After hand edits: do the files parse?",
        "-",
        "ms",
        "CheckResult (file:line)",
        "fix, then recall",
    ),
    "take_warnings": (
        "After a call: file problems it worked around (conflicts, an id in two files).",
        "-",
        "ms",
        "list[str] (file:line: what)",
        "fix the files, then index_check",
    ),
    "index_status": ("Is the index fresh, how big.", "-", "ms", "IndexStatus", "-"),
    "index_update": (
        "After a change of embedding model or a bulk import: embeds what recall leaves waiting.",
        "Nothing waits: index_status says how many blocks are not embedded.",
        "seconds per thousand blocks",
        "UpdateResult",
        "recall",
    ),
    "index_rebuild": (
        "A preview index elsewhere; zero LLM calls.",
        "Healing: just delete the index.",
        "seconds",
        "RebuildResult",
        "-",
    ),
    "index_parity": (
        "Checking the live index ranks like a rebuild.",
        "-",
        "seconds",
        "ParityResult",
        "delete the index if it fails",
    ),
    "migrate_embeddings": (
        "After switching to an endpoint embedding model (a local one re-embeds by itself).",
        "-",
        "embeds every text not cached",
        "summary",
        "-",
    ),
    "hooks_install": (
        "Protecting memory in your own git commands.",
        "-",
        "ms",
        "HooksReport",
        "hooks_status",
    ),
    "hooks_uninstall": ("Removing elfmem's hooks; restores yours.", "-", "ms", "HooksReport", "-"),
    "sync": (
        "Sharing memory with other clones through a git remote.",
        "Branch mode: your own git pull/push carry the files; sync carries the notes.",
        "one fetch + push",
        "SyncResult (in/out counts)",
        "status",
    ),
    "mode": (
        "Keeping memory off your code branches (ref mode), or bringing it back.",
        "-",
        "one or two commits",
        "ModeResult",
        "sync",
    ),
    "hook_pre_push": (
        "Before push: flush the ledger and note what the push sends.",
        "-",
        "ms",
        "PrePush",
        "-",
    ),
    "hook_after_push": (
        "After a push the remote took: push the notes along.",
        "-",
        "one fetch + push",
        "PrePush",
        "-",
    ),
    "hooks_status": ("Which hooks are installed.", "-", "ms", "HooksReport", "-"),
    "check_staged": (
        "Validating staged memory files (pre-commit).",
        "-",
        "ms",
        "StagedCheck",
        "fix file:line",
    ),
    "hook_reindex": (
        "After checkout/merge: bring the index along.",
        "-",
        "ms",
        "ReindexResult",
        "-",
    ),
    "reconcile": (
        "After a merge, rebase or cherry-pick: one block per id.",
        "the hooks and the next command run it",
        "parses every bucket",
        "ReconcileResult",
        "elfmem undo",
    ),
    "flush_ledger": (
        "Before push: write spooled events to notes.",
        "-",
        "one notes commit",
        "FlushResult",
        "git push origin refs/notes/elfmem",
    ),
    "visualise": (
        "Looking at the graph in a browser.",
        "-",
        "ms",
        "VisualiseResult (.path)",
        "open the file",
    ),
    "guide": ("Learning the API; never raises.", "-", "none", "text", "-"),
    "review_constitutional": (
        "Periodically: does what was learned contradict or leave bare a principle?",
        "Expecting it to change anything: it only proposes.",
        "one embedding per principle; one LLM call per drifted principle if configured",
        "ReviewResult (principles, proposals, self_md suggestions)",
        "accept_amendment(proposal=...)",
    ),
    "review_corpus": (
        "A hygiene pass: superseded, refuted, contested, contradicted, old or doubtful blocks.",
        "Mid-task.",
        "ms; apply=True is one commit",
        "CorpusReview (archive / recheck proposals)",
        "undo if the archive was too eager",
    ),
    "accept_amendment": (
        "You agree with a proposal: rewrite that constitutional block.",
        "Ordinary knowledge: edit.",
        "one commit (Elfmem-Op: amend)",
        "AmendResult",
        "list_amendments, revert_amendment",
    ),
    "list_amendments": (
        "Auditing how identity changed (amends, reverts, self.md edits).",
        "-",
        "ms (reads git log)",
        "AmendmentHistory, newest first",
        "revert_amendment",
    ),
    "revert_amendment": (
        "You no longer agree with the newest standing amendment.",
        "Other operations: undo.",
        "one commit",
        "UndoResult",
        "list_amendments",
    ),
    "mind_create": (
        "Modelling another agent, person or system (tag mind/<name>).",
        "Facts about them: remember.",
        "one commit",
        "MindResult",
        "mind_predict",
    ),
    "mind_predict": (
        "The model says what they will do: make it falsifiable.",
        "Vague expectations nobody can check.",
        "one commit",
        "MindResult (the prediction id)",
        "mind_outcome when you know",
    ),
    "mind_outcome": (
        "A prediction came true (hit) or did not (miss).",
        "An open question: leave the prediction open.",
        "one commit + one notes commit",
        "MindResult (the mind's new confidence)",
        "mind_list",
    ),
    "mind_list": ("Which minds are modelled, and how well.", "-", "ms", "MindList", "mind_show"),
    "mind_show": ("One mind with its predictions.", "-", "ms", "MindStats", "mind_outcome"),
    "backup": (
        "A whole memory (branch and ledger) as one file: before risky work, or to move it.",
        "Sharing with another clone: git push/pull.",
        "seconds; git bundle create",
        "BackupResult",
        "restore",
    ),
    "restore": (
        "Bringing a backup file back as a new repository, ledger included.",
        "Going back in an existing memory: undo, or recall --at.",
        "seconds; git clone",
        "RestoreResult",
        "status",
    ),
    "rescue": (
        "You moved or copied the repository and wonder if the index followed.",
        "-",
        "ms, then doctor",
        "RescueResult",
        "doctor",
    ),
    "migrate_status": (
        "After upgrading elfmem, or bringing upstream's files into the repository.",
        "-",
        "ms, reads only",
        "MigrateResult",
        "migrate_plan",
    ),
    "migrate_plan": (
        "Before applying: the files each step writes or deletes, with hashes.",
        "-",
        "ms, reads only",
        "MigrateResult",
        "migrate_apply",
    ),
    "migrate_apply": (
        "After reading the plan.",
        "Nothing is pending (migrate_status exits 0).",
        "one commit; undo reverts it",
        "MigrateResult",
        "undo",
    ),
    "import_upstream": (
        "Switching from upstream elfmem 0.20: its project folder or database comes across.",
        "Bundles from another elfmem of ours: import.",
        "one commit; undo reverts it",
        "UpstreamImportResult",
        "ls",
    ),
    "peer_init": (
        "Another memory should know this one: print (and record once) its did:key id.",
        "-",
        "one commit the first time",
        "PeerIdentity",
        "peer_add",
    ),
    "peer_add": (
        "Registering a peer by its did:key id and the remote it reads.",
        "-",
        "one commit",
        "PeerChange",
        "peer_send",
    ),
    "peer_remove": ("A peer is no longer one.", "-", "one commit", "PeerChange", "peer_list"),
    "peer_list": (
        "Whom this memory knows, and how far their knowledge has held up here.",
        "-",
        "ms",
        "PeerList (set and folded trust)",
        "peer_trust",
    ),
    "peer_trust": (
        "Setting how far to trust a peer before outcomes say more.",
        "Judging one block: outcome.",
        "one commit (set); ms (show)",
        "PeerChange or PeerInfo",
        "peer_list",
    ),
    "peer_send": (
        "Telling a peer something it should know.",
        "Credentials or private notes: they leave this memory.",
        "one commit + a push",
        "SendResult",
        "peer_inbox",
    ),
    "peer_inbox": (
        "Reading (and, with import, taking in) what peers sent.",
        "-",
        "a fetch; one commit with import",
        "InboxResult",
        "peer_list",
    ),
    "peer_inbox_status": (
        "Checking whether peers sent anything.",
        "-",
        "a fetch",
        "InboxStatus",
        "peer_inbox",
    ),
    "export": (
        "Giving blocks to a peer or to another copy of this memory, as one file.",
        "A full copy with history: git clone or a bundle of the repository.",
        "reads only (a commit the first time, recording the peer id)",
        "ExportResult",
        "import_bundle",
    ),
    "import_bundle": (
        "A bundle arrived from a peer (--from) or from this memory elsewhere (--self-merge).",
        "-",
        "one commit + one notes commit",
        "ImportResult",
        "peer_list",
    ),
}

_FIELDS = ("USE WHEN", "DON'T USE WHEN", "COST", "RETURNS", "NEXT")


def entry(name: str) -> str:
    use, dont, cost, returns, nxt = GUIDES[name]
    rows = zip(_FIELDS, (use, dont, cost, returns, nxt), strict=True)
    return "\n".join([name, *(f"  {k:<15} {v}" for k, v in rows)])


def guide(name: str | None = None) -> str:
    """The whole table, or one entry; an unknown name gets the closest matches, never an error."""
    if not name:
        return "\n\n".join(entry(n) for n in sorted(GUIDES))
    key = str(name).strip().replace("-", "_")
    if key in GUIDES:
        return entry(key)
    close = difflib.get_close_matches(key, list(GUIDES), n=3, cutoff=0.4)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    return f"No operation named {name!r}.{hint}\nOperations: {', '.join(sorted(GUIDES))}."


def agent_markdown() -> str:
    """``.elfmem/AGENT.md``: the same table, for an agent to @-reference."""
    lines = [
        "# elfmem — operations",
        "",
        "Generated by `elfmem agent-docs` from the guide table.",
        "",
    ]
    for name in sorted(GUIDES):
        use, dont, cost, returns, nxt = GUIDES[name]
        lines += [
            f"## {name}",
            f"- **Use when:** {use}",
            f"- **Don't use when:** {dont}",
            f"- **Cost:** {cost}",
            f"- **Returns:** {returns}",
            f"- **Next:** {nxt}",
            "",
        ]
    return "\n".join(lines)
