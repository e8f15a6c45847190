"""Credentials are refused before they reach a blob: git history is forever and revert does not
purge.

Known key formats are matched exactly; a long, high-entropy value standing next to a word like
``key`` or ``password`` is refused too. A false positive is written with an explicit override,
which the commit records in its trailers.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

_KNOWN: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}")),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("GitHub token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}")),
    ("GitHub token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{30,}")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("private key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
)
_ASSIGNED = re.compile(
    r"(?i)\b(?:api[_-]?key|secret|token|password|passwd|pwd|access[_-]?key|auth)\b"
    r"[\"']?\s*(?:[:=]|\bis\b)\s*[\"']?(?P<value>[A-Za-z0-9+/=_\-.]{16,})"
)


@dataclass(frozen=True, slots=True)
class SecretFinding:
    kind: str
    excerpt: str


def _entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _mask(value: str) -> str:
    return value[:4] + "…" + f"({len(value)} chars)"


def find_secret(text: str) -> SecretFinding | None:
    """The first thing in ``text`` that looks like a credential, or None."""
    for kind, pattern in _KNOWN:
        m = pattern.search(text)
        if m:
            return SecretFinding(kind, _mask(m.group(0)))
    for m in _ASSIGNED.finditer(text):
        value = m["value"]
        has_digit = any(c.isdigit() for c in value)
        if _entropy(value) >= 3.5 and has_digit:
            return SecretFinding("high-entropy value next to a credential word", _mask(value))
    return None
