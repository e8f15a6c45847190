"""The shapes of credentials, one rule per kind, so a finding can name what it saw.

Known formats are matched by their fixed prefix and length. Values without a prefix are refused
only with evidence around them: a name like ``password`` or ``client_secret`` assigned a long,
random-looking value, or a 40-character AWS secret next to an AWS key id or a word like ``secret``.
A git-native memory is full of things that look random and are not secret (commit ids, sha256
digests, UUIDs, base64 of ordinary text); the evidence rules keep those out.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Hit:
    """A credential's kind and where it sits in the text; the value itself is never kept."""

    kind: str
    start: int
    end: int


_PREFIXED: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    # (kind, a literal every match contains: a cheap test before the regex runs, pattern)
    ("Anthropic API key", "sk-ant-", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    (
        "OpenAI API key",
        "sk-",
        re.compile(r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ),
    ("AWS access key id", "A", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("GitHub token", "gh", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}")),
    ("GitHub token", "github_pat_", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}")),
    ("GitLab token", "glpat-", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("Slack token", "xox", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("Stripe key", "k_", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}")),
    ("Twilio API key", "SK", re.compile(r"\bSK[0-9a-fA-F]{32}\b")),
    ("Google API key", "AIza", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("JWT", "eyJ", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}")),
    ("PGP private key block", "-----BEGIN", re.compile(r"-----BEGIN PGP PRIVATE KEY BLOCK-----")),
    ("OpenSSH private key", "-----BEGIN", re.compile(r"-----BEGIN OPENSSH PRIVATE KEY-----")),
    ("PEM private key", "-----BEGIN", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")),
    ("PuTTY private key", "PuTTY", re.compile(r"PuTTY-User-Key-File-\d")),
)
_RANDOM_BODY = {"OpenAI API key"}
"""Kinds whose prefix is also ordinary words (``sk-learn-...``): the body must look random too."""

_CONNECTION = re.compile(r"\b[a-z][a-z0-9+.-]{1,30}://[^\s:/@?#]*:(?P<value>[^\s@/]+)@[^\s/@]+")
_PLACEHOLDER = re.compile(r"^(?:\$.*|\{.*|<.*|%.*|\*+|x+|\.\.\.|…)$", re.I)

_NAME = (
    r"(?:api[_-]?key|apikey|secret(?:[_-]?key)?|client[_-]?secret|token|"
    r"passw(?:or)?d|pwd|credentials?|access[_-]?key(?:[_-]?id)?|private[_-]?key|"
    r"signing[_-]?key|encryption[_-]?key|auth[_-]?key|bearer)"
)
_ASSIGNED = re.compile(
    r"(?i)"
    + _NAME
    + r"[\"']?(?:\s*(?:[:=]|=>)\s*|\s+is\s+|\s+)[\"']?(?P<value>[A-Za-z0-9+/=_.~-]{16,})"
)
_AWS_SECRET_LABELLED = re.compile(
    r"(?i)aws_?secret(?:_?access)?_?key[\"']?\s*[:=]\s*[\"']?(?P<value>[A-Za-z0-9/+=]{40})\b"
)
_BARE_40 = re.compile(r"(?<![A-Za-z0-9/+=])(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
_SECRET_WORD = re.compile(r"(?i)secret|passw|token|credential|\bkey\b|AKIA|ASIA")
_HIGH_ENTROPY = "high-entropy value assigned to a secret-like name"
_CONTEXT = 80
"""Characters either side of a bare 40-character value in which evidence must stand."""


def entropy(value: str) -> float:
    """Shannon entropy in bits per character: random keys score high, words and hex lower."""
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _is_text_base64(value: str) -> bool:
    """Base64 that decodes to readable text is someone's sentence, not a key."""
    padded = value + "=" * (-len(value) % 4)
    try:
        raw = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return bool(text) and sum(c.isprintable() or c.isspace() for c in text) / len(text) > 0.95


def looks_random(value: str) -> bool:
    """Letters and digits mixed with enough entropy, and not base64 of ordinary text."""
    return (
        any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and entropy(value) >= 3.3
        and not _is_text_base64(value)
    )


def _random_run(token: str) -> bool:
    """A 16+ character run without hyphens that looks random: a key, not ``sk-learn-…`` words."""
    return any(looks_random(run) for run in re.findall(r"[A-Za-z0-9_]{16,}", token))


def _prefixed(text: str) -> Iterator[Hit]:
    for kind, literal, pattern in _PREFIXED:
        if literal not in text:
            continue
        for m in pattern.finditer(text):
            if kind in _RANDOM_BODY and not _random_run(m.group(0)):
                continue
            yield Hit(kind, m.start(), m.end())


def _connections(text: str) -> Iterator[Hit]:
    for m in _CONNECTION.finditer(text):
        if not _PLACEHOLDER.match(m["value"]):
            yield Hit("connection string with a password", m.start("value"), m.end("value"))


def _aws_secrets(text: str) -> Iterator[Hit]:
    for m in _AWS_SECRET_LABELLED.finditer(text):
        yield Hit("AWS secret access key", m.start("value"), m.end("value"))
    for m in _BARE_40.finditer(text):
        value = m["value"]
        if value.lower() == value or value.upper() == value or not looks_random(value):
            continue  # hex ids are one case; real secrets mix both
        near = text[max(0, m.start() - _CONTEXT) : m.end() + _CONTEXT]
        if _SECRET_WORD.search(near):
            yield Hit("AWS secret access key", m.start(), m.end())


def _assigned(text: str) -> Iterator[Hit]:
    for m in _ASSIGNED.finditer(text):
        value = m["value"].rstrip(".")
        if len(value) >= 16 and looks_random(value):
            yield Hit(_HIGH_ENTROPY, m.start("value"), m.end())


RULES: dict[str, Callable[[str], Iterator[Hit]]] = {
    "prefixed": _prefixed,
    "connection": _connections,
    "aws-secret": _aws_secrets,
    "high-entropy": _assigned,
}
"""Each rule by name, so a test can prove it matters by switching one off."""


def hits(text: str) -> list[Hit]:
    """Every credential in ``text``, in order, one per place (overlaps keep the first rule's)."""
    found: list[Hit] = []
    for rule in RULES.values():
        for hit in rule(text):
            if not any(h.start < hit.end and hit.start < h.end for h in found):
                found.append(hit)
    return sorted(found, key=lambda h: h.start)
