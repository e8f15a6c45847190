"""The one secret check: every text bound for a blob, a note, a ref name or a commit message.

Git history is forever and revert does not purge, so a credential is refused before anything is
written. A refusal names the kind and where it was seen (``tag 2``, ``cue``, ``self.md line 3``)
and never repeats the value, not even a prefix: the error text lands in terminals, logs and agent
transcripts. A deliberate override is recorded in the commit as ``Elfmem-Allow-Secret: <kind>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from elfmem.block import credentials
from elfmem.block.credentials import hits
from elfmem.block.model import Block
from elfmem.errors import SecretRefused

ALLOW_TRAILER = "Elfmem-Allow-Secret"
OVERRIDABLE_OPS = frozenset({"remember", "edit"})
"""The writes whose commands take ``--allow-secret`` (``allow_secret`` through the API and MCP)."""
OVERRIDE = (
    "If it is a false positive, pass --allow-secret (allow_secret=true through the API or MCP); "
    f"the commit records it as `{ALLOW_TRAILER}: <kind>`."
)


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """What kind of credential was seen and where; deliberately without the value."""

    kind: str
    where: str


def scan(text: str, where: str) -> list[SecretFinding]:
    """Findings in one field; a multi-line text names the line (``content line 3``)."""
    multiline = "\n" in text.rstrip("\n")
    out = []
    for hit in hits(text):
        line = text.count("\n", 0, hit.start) + 1
        out.append(SecretFinding(hit.kind, f"{where} line {line}" if multiline else where))
    return out


def find_secret(text: str, where: str = "text") -> SecretFinding | None:
    """The first credential in ``text``, or None."""
    found = scan(text, where)
    return found[0] if found else None


def scan_fields(fields: Iterable[tuple[str, str]]) -> list[SecretFinding]:
    return [f for where, text in fields for f in scan(text, where)]


def block_fields(block: Block, prefix: str = "") -> list[tuple[str, str]]:
    """Every text of a block that reaches git: content, cue, each tag, the keys a person added
    by hand, relations, the timestamp, the category (a folder name)."""
    fields = [(f"{prefix}content", block.content), (f"{prefix}cue", block.cue)]
    fields += [(f"{prefix}tag {n}", tag) for n, tag in enumerate(block.tags, 1)]
    fields += [(f"{prefix}{key}", value) for key, value in (*block.fields, *block.extra)]
    fields += [
        (f"{prefix}relation {n}", f"{r.kind} {r.target}") for n, r in enumerate(block.relations, 1)
    ]
    return [*fields, (f"{prefix}created", block.created), (f"{prefix}category", block.cls)]


def capture_fields(
    content: str, cue: str = "", tags: Sequence[str] = (), category: str = ""
) -> list[tuple[str, str]]:
    """The fields of a capture before it is a block, named as the user typed them."""
    fields = [("content", content), ("cue", cue)]
    fields += [(f"tag {n}", tag) for n, tag in enumerate(tags, 1)]
    return [*fields, ("category", category)]


def refusal(
    findings: Sequence[SecretFinding], recovery: str = "", overridable: bool = False
) -> SecretRefused:
    """The error for ``findings``: kinds and places, never the values.

    Only a command that takes ``--allow-secret`` (``overridable``) suggests it: a recovery must be
    one the command that failed can follow.
    """
    what = "; ".join(f"{f.kind} in {f.where}" for f in findings)
    base = recovery or (
        "Remove the credential and say where it lives instead (e.g. 'the key is in "
        "$OPENAI_API_KEY'), then run the command again."
    )
    return SecretRefused(
        f"Refused: what looks like a credential: {what} (the value is not shown). Git history "
        "is permanent and revert does not purge it; nothing was written.",
        f"{base} {OVERRIDE}" if overridable else base,
    )


def check(
    fields: Iterable[tuple[str, str]], allow: bool = False, *, overridable: bool = False
) -> tuple[str, ...]:
    """Refuse any credential in ``fields``; with ``allow``, return the kinds let through.
    ``overridable``: the caller takes ``--allow-secret``, so the refusal may suggest it."""
    findings = scan_fields(fields)
    if findings and not allow:
        raise refusal(findings, overridable=overridable)
    return tuple(dict.fromkeys(f.kind for f in findings))


def redact(text: str) -> str:
    """``text`` with each credential replaced by its kind: a commit subject built from content
    stored with the override still never carries the value."""
    return credentials.redact(text)


NOTE_RECOVERY = (
    "Nothing was recorded. Remove the credential from the text the command was given (a host "
    "analysis, a source, a bundle) and run it again; say where a secret lives instead of "
    "quoting it. Notes have no override: nothing in refs/notes/elfmem ever needs a key."
)


_STRUCTURAL = re.compile(r"[0-9a-f]{16,40}|\d{4}-\d\d-\d\dT[\d:.]+(?:[+-]\d\d:\d\d|Z)?")
"""Block ids, object ids and timestamps: the bulk of a ledger's text, and never a credential."""
_STAMPS = frozenset({"ts", "eid"})
"""An event's time and unique id, made by elfmem from the clock and the agent's name."""


def _note_texts(lines: Iterable[str]) -> list[str]:
    """The distinct texts of ledger lines worth reading: every string value of each JSON event
    but its stamps, ids and timestamps (an event that is not a JSON object is read whole)."""
    seen: set[str] = set()
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        if not isinstance(event, dict):
            seen.add(line)
            continue
        for key, value in event.items():
            if key in _STAMPS:
                continue
            if isinstance(value, str):
                seen.add(value)
            elif value is not None and not isinstance(value, int | float | bool):
                seen.add(json.dumps(value, ensure_ascii=False))
    return [text for text in seen if not _STRUCTURAL.fullmatch(text)]


def check_note_lines(lines: Iterable[str], where: str) -> None:
    """Refuse ledger lines that hold a credential: the notes ref is pushed and kept like any
    history, and nothing a note records (an event, a judgement, a source) ever needs a key."""
    findings = [SecretFinding(h.kind, where) for h in hits("\n".join(_note_texts(lines)))]
    if findings:
        raise refusal(findings, NOTE_RECOVERY)


def allow_trailers(kinds: Iterable[str]) -> list[tuple[str, str]]:
    """The trailers that record a deliberate override, one per kind let through."""
    return [(ALLOW_TRAILER, kind) for kind in dict.fromkeys(kinds)]
