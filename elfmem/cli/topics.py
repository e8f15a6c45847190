"""``elfmem guide`` in the CLI's words: each command with the API operation it calls beside it.

The entries themselves are the API's (elfmem/guide/), so the two cannot disagree; this table
only says which operation each command runs, and a test checks it names every visible command.
People at a shell type ``history`` and mean the commits that touched a block, which the API
calls ``block_history``; the API's ``history`` is the CLI's ``log``.
"""

from __future__ import annotations

import difflib
import re

from elfmem import guide as guide_mod

COMMANDS: dict[str, tuple[str, ...]] = {
    "init": ("init",),
    "templates": ("templates",),
    "remember": ("remember", "remember_many"),
    "edit": ("edit",),
    "forget": ("forget",),
    "undo": ("undo",),
    "ls": ("ls",),
    "inbox": ("inbox",),
    "show": ("show",),
    "history": ("block_history",),
    "ledger": ("ledger",),
    "log": ("history",),
    "recall": ("recall",),
    "frame": ("frame",),
    "dream": ("dream",),
    "outcome": ("outcome",),
    "connect": ("connect", "connects"),
    "disconnect": ("disconnect",),
    "curate": ("curate",),
    "status": ("status",),
    "migrate-embeddings": ("migrate_embeddings",),
    "index check": ("index_check",),
    "index status": ("index_status",),
    "index rebuild": ("index_rebuild",),
    "index update": ("index_update",),
    "index parity": ("index_parity",),
    "doctor": ("doctor", "doctor_frames"),
    "visualise": ("visualise",),
    "hooks install": ("hooks_install",),
    "hooks uninstall": ("hooks_uninstall",),
    "hooks status": ("hooks_status",),
    "sync": ("sync",),
    "mode": ("mode",),
    "guide": ("guide",),
    "agent-docs": (),
    "serve": (),
    "demo": (),
    "review": ("review_constitutional",),
    "review accept": ("accept_amendment",),
    "review list": ("list_amendments",),
    "review revert": ("revert_amendment",),
    "review corpus": ("review_corpus",),
    "review lookalikes": ("lookalikes",),
    "review resolve": ("resolve_lookalike",),
    "mind create": ("mind_create",),
    "mind predict": ("mind_predict",),
    "mind list": ("mind_list",),
    "mind show": ("mind_show",),
    "mind outcome": ("mind_outcome",),
    "backup": ("backup",),
    "restore": ("restore",),
    "rescue": ("rescue",),
    "migrate status": ("migrate_status",),
    "migrate plan": ("migrate_plan",),
    "migrate apply": ("migrate_apply",),
    "import-upstream": ("import_upstream",),
    "peer init": ("peer_init",),
    "peer add": ("peer_add",),
    "peer remove": ("peer_remove",),
    "peer list": ("peer_list",),
    "peer trust": ("peer_trust",),
    "peer send": ("peer_send",),
    "peer inbox": ("peer_inbox", "peer_inbox_status"),
    "export": ("export",),
    "import": ("import_bundle",),
}
"""Every visible command (subcommands by their full path, and groups that run on their own)
→ the API operations it calls. ``tests/guide/test_cli_guide.py`` fails when one is missing."""

CLI_ONLY: dict[str, tuple[str, str, str, str, str]] = {
    "agent-docs": (
        "Giving an agent the guide as a file it can @-reference.",
        "-",
        "ms",
        ".elfmem/AGENT.md",
        "-",
    ),
    "serve": (
        "An MCP client (Claude, an IDE) should use this memory; the client runs it.",
        "Scripts: call the commands, or the Python API.",
        "a process",
        "MCP over stdio",
        "guide",
    ),
    "demo": (
        "Seeing the main job once, step by step; give a folder to keep it.",
        "A real memory: init.",
        "seconds, offline",
        "a labelled tour, then commands to try",
        "init",
    ),
}
"""Commands that call no single API operation, in the guide's five fields."""

_FIELDS = ("USE WHEN", "DON'T USE WHEN", "COST", "RETURNS", "NEXT")


_NAMED = (1, 4)
"""The fields that name operations (DON'T USE WHEN, NEXT); the others are prose ("walks
history"), left as written."""


def _cli_words() -> dict[str, str]:
    """API name → command, where they differ (``block_history`` → ``history``)."""
    words = {ops[0]: cmd for cmd, ops in COMMANDS.items() if ops and ops[0] != cmd}
    return {**words, "remember_many": "remember --batch", "doctor_frames": "doctor --frames"}


def to_cli_words(text: str) -> str:
    """``text`` with each API operation name that has a command of another name replaced by it."""
    words = _cli_words()
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(words, key=len)[::-1])) + r")\b")
    return pattern.sub(lambda m: words[m[1]], text)


def entry(command: str) -> str:
    """One command in full: its name, the API beside it, then the five fields."""
    ops = COMMANDS[command]
    fields = CLI_ONLY[command] if not ops else guide_mod.GUIDES[ops[0]]
    beside = f"  (API: {', '.join(ops)})" if ops else "  (CLI only)"
    texts = [to_cli_words(v) if i in _NAMED else v for i, v in enumerate(fields)]
    rows = zip(_FIELDS, texts, strict=True)
    return "\n".join([command + beside, *(f"  {k:<15} {v}" for k, v in rows)])


def api_only() -> list[str]:
    """API operations no command runs: the Python-only part of the guide."""
    called = {op for ops in COMMANDS.values() for op in ops}
    return sorted(set(guide_mod.GUIDES) - called)


def topics() -> str:
    """What ``elfmem guide`` accepts: every command, then the API-only operations."""
    return (
        "Commands: "
        + ", ".join(COMMANDS)
        + ".\nPython API only (elfmem guide NAME works for these too): "
        + ", ".join(api_only())
        + "."
    )


def lookup(topic: str | None) -> str | None:
    """The guide text for ``topic`` (a command, or an API name), the whole guide for none, and
    None for a topic nobody has."""
    if not topic:
        return "\n\n".join([*(entry(c) for c in COMMANDS), topics()])
    key = " ".join(topic.split())
    # A group (``index``) shows each of its subcommands, after its own entry if it runs alone.
    found = [c for c in COMMANDS if c == key or c.startswith(key + " ")]
    if found:
        return "\n\n".join(entry(c) for c in found)
    api = key.replace("-", "_")
    if api in guide_mod.GUIDES:
        commands = [c for c, ops in COMMANDS.items() if api in ops]
        where = f"the command: {', '.join(commands)}" if commands else "no command; Python API only"
        return f"{guide_mod.entry(api)}\n  {'CLI':<15} {where}"
    return None


def unknown(topic: str) -> str:
    """What to say about a topic nobody has: the closest names, then every topic."""
    names = [*COMMANDS, *api_only()]
    close = difflib.get_close_matches(topic, names, n=3, cutoff=0.5)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    return f"No guide topic {topic!r}.{hint}\n{topics()}"
