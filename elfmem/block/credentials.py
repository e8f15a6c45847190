"""The shapes of credentials, one rule per kind, so a finding can name what it saw.

Known formats are matched by their fixed prefix and length. Values without a prefix are refused
only with evidence around them. The main one is general, not a list of examples: a secret-like
name (``password``, ``client_secret``, ``*_token``, ``api_key``), then whatever markup closes it
(``**``, backticks, quotes), an optional qualifier ("for prod"), a separator (``=``, ``:``,
``::``, ``->``, ``|``, "is"), whatever markup opens the value, and a value that is one: 8 or more
characters mixing three of lower case, upper case, digits and symbols, or 16 random-looking ones.
A Markdown table whose header names a secret is read by column. Connection strings with a
password (any scheme, any case, ``/`` in the password) and a 40-character AWS secret next to an
AWS key id or a word like ``secret`` complete it. A git-native memory is full of things that look
random and are not secret (commit ids, sha256 digests, UUIDs, base64 of ordinary text, code,
paths, ``${VAR}`` and other placeholders); the evidence rules keep those out.
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

_CONNECTION = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,30}://[^\s:/@?#]*:(?P<value>[^\s@]+)@[^\s/@]+")
_PORT_AND_PATH = re.compile(r"^\d{1,5}(?:[/?#].*)?$")
"""``host:8080/path@x`` is a port and a path, not a password."""
_PLACEHOLDER = re.compile(
    r"^(?:\$.*|\{.*|<.*|%.*|\*+|x+|\.\.\.|…|redacted|\[redacted\]|none|null|unset|"
    r"changeme|secret|password|os\.environ.*|env\(.*|getenv.*|settings\..*|"
    r".*(?:redacted|removed|the-value|your[_ -]?(?:password|secret|token|key|api)).*)$",
    re.I,
)
"""Values that say where a secret is or that one is missing, never the secret."""

_NAME = (
    r"(?:passw(?:or)?d|passphrase|pwd|secret(?:[_-]?(?:access[_-]?)?key)?|token|credentials?|"
    r"api[_-]?key|apikey|access[_-]?key(?:[_-]?id)?|private[_-]?key|signing[_-]?key|"
    r"encryption[_-]?key|auth[_-]?key|bearer)s?(?![A-Za-z0-9]|_[A-Za-z0-9])"
)
"""Found anywhere in a word's end, so ``DB_PASSWORD``, ``client_secret`` and ``X_AUTH_TOKEN``
count; a longer identifier (``password_hash``, ``tokenizer``) does not."""
_KEY = re.compile(r"(?i)" + _NAME)
_KEY_LOWER = re.compile(_NAME)
_CLOSE = r"[*_`'\"\])>]*"
"""Markup closing around the name: ``**api_key**``, ``` `password` ```, ``"secret"``."""
_QUALIFIER = r"\s+(?:for|on|of|in|at|to)\s+(?:[^\s:=|>]+\s+){0,3}?[^\s:=|>]+"
"""``Password for prod``, ``token for the staging db``: words between the name and its value."""
_SEPARATOR = r"\s*(?::=|::|=>|->|==|[:=|→])\s*"
_OPEN = r"[\s*_`'\"(\[|]*"
_VALUE = r"(?P<value>[^\s|]+)"
_TAILS: tuple[tuple[re.Pattern[str], bool], ...] = (
    # (what may follow a secret-like name, whether the value stands after an explicit separator)
    (re.compile(_CLOSE + _SEPARATOR + _OPEN + _VALUE), True),
    (re.compile(_CLOSE + _QUALIFIER + _SEPARATOR + _OPEN + _VALUE), True),
    (re.compile(_CLOSE + r"(?:" + _QUALIFIER + r")?\s+(?:is|was)\s+" + _OPEN + _VALUE), True),
    (re.compile(_CLOSE + r"\s+" + _OPEN + _VALUE), False),
)
_TRAILING = ".,;:"
_CLOSERS = "`*_'\")]}>|"
_JOINERS = set("-_./:@~'")
"""Punctuation that joins the words of a name or a path; other symbols count as a class."""
_PATH = re.compile(r"^(?:~|\.{1,2})?/|^[A-Za-z]:\\|://")
_CODE = re.compile(r"^[A-Za-z_][\w.]*[(\[]|[)\]]\.\w")
"""``cast(list[_Token], …)``, ``config["secret"]``: code that computes a value, not one."""
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}")
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
        if not _PLACEHOLDER.match(m["value"]) and not _PORT_AND_PATH.match(m["value"]):
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


def _trimmed(raw: str, start: int) -> tuple[str, int, int]:
    """The value without the markup or punctuation that closes it, and where it sits."""
    value = raw.rstrip(_TRAILING).rstrip(_CLOSERS).rstrip(_TRAILING)
    return value, start, start + len(value)


def _classes(value: str) -> int:
    kinds = (str.islower, str.isupper, str.isdigit)
    found = sum(any(test(c) for c in value) for test in kinds)
    return found + any(not c.isalnum() and c not in _JOINERS for c in value)


def credential_like(value: str, explicit: bool = True) -> bool:
    """Whether a value given to a secret-like name is one.

    After an explicit separator (``=``, ``:``, ``::``, ``->``, ``|``, ``is``) a value of 8 or
    more characters mixing three of lower case, upper case, digits and symbols is one, as is a
    random-looking value of 16 or more. A name followed only by a space (prose) needs the latter.
    Placeholders, environment variables and paths are never one.
    """
    if _PLACEHOLDER.match(value) or _PATH.search(value) or _CODE.search(value):
        return False
    if _is_text_base64(value):
        return False
    if len(value) >= 16 and looks_random(value):
        return True
    return explicit and len(value) >= 8 and _classes(value) >= 3


def _names(text: str) -> Iterator[re.Match[str]]:
    """Each secret-like name. Matched in lower case when that keeps every offset: ten times
    faster than a case-blind pattern over a long text (a bucket, a batch of ledger lines)."""
    lower = text.lower()
    if len(lower) == len(text):
        return _KEY_LOWER.finditer(lower)
    return _KEY.finditer(text)


def _assigned(text: str) -> Iterator[Hit]:
    for key in _names(text):
        for tail, explicit in _TAILS:
            m = tail.match(text, key.end())
            if m is None:
                continue
            value, start, end = _trimmed(m["value"], m.start("value"))
            if credential_like(value, explicit):
                yield Hit(_HIGH_ENTROPY, start, end)
                break


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _plain(cell: str) -> str:
    return cell.strip("*_`'\" ")


def _names_a_secret(header: str) -> bool:
    """A column label (a few words at most) with a secret-like name in it: ``DB password``."""
    return len(header.split()) <= 4 and _KEY.search(_plain(header)) is not None


def _tables(text: str) -> Iterator[Hit]:
    """A Markdown table whose header names a secret: each value in that column."""
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    for n in range(len(lines) - 2):
        if not (lines[n].lstrip().startswith("|") and _TABLE_SEPARATOR.match(lines[n + 1].strip())):
            continue
        columns = [i for i, c in enumerate(_cells(lines[n])) if _names_a_secret(c)]
        row = n + 2
        while columns and row < len(lines) and lines[row].lstrip().startswith("|"):
            yield from _column_hits(lines[row], offsets[row], columns)
            row += 1


def _column_hits(line: str, offset: int, columns: list[int]) -> Iterator[Hit]:
    """The cells of one row under a secret's header; each found where it stands in the row."""
    body = line.strip()
    start = line.index(body) + (1 if body.startswith("|") else 0)
    for i, cell in enumerate(body.strip("|").split("|")):
        value = _plain(cell)
        if i in columns and value and credential_like(value):
            at = offset + start + cell.index(value)
            yield Hit(_HIGH_ENTROPY, at, at + len(value))
        start += len(cell) + 1


RULES: dict[str, Callable[[str], Iterator[Hit]]] = {
    "prefixed": _prefixed,
    "connection": _connections,
    "aws-secret": _aws_secrets,
    "high-entropy": _assigned,
    "table": _tables,
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


def redact(text: str) -> str:
    """``text`` with each credential replaced by its kind, ``[GitHub token]``: what a subject,
    an error or a log line may say about a value it must never repeat."""
    for hit in reversed(hits(text)):
        text = f"{text[: hit.start]}[{hit.kind}]{text[hit.end :]}"
    return text
