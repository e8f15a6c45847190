"""Load a project-root ``.env`` into the environment, never overriding what is already set.

Keys must never enter the committed config, yet exporting them in every shell is a chore; a
git-ignored ``.env`` beside the memory is the usual compromise. Variables already in the
environment win, so a CI secret or a one-off ``export`` always beats the file.
"""

from __future__ import annotations

import os
import re
from collections.abc import MutableMapping
from pathlib import Path

from elfmem.errors import ConfigError

_ASSIGNMENT = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def load_dotenv(path: Path, environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Set each variable of ``path`` the environment lacks; return the names that were set.

    A missing file is not an error: most projects have none.
    """
    env = os.environ if environ is None else environ
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"Cannot read {path}: {exc}", f"Fix or remove {path} (UTF-8 `NAME=value` lines)."
        ) from exc
    loaded = []
    for name, value in parse_dotenv(text).items():
        if name not in env:
            env[name] = value
            loaded.append(name)
    return loaded


def parse_dotenv(text: str) -> dict[str, str]:
    """``NAME=value`` pairs: ``export`` prefixes, quotes and ``#`` comments as shells treat them.

    Lines that are not assignments are skipped, as other dotenv readers do; a later line wins.
    """
    pairs: dict[str, str] = {}
    for line in text.splitlines():
        match = _ASSIGNMENT.match(line.strip())
        if match is not None:
            pairs[match.group(1)] = _value(match.group(2))
    return pairs


def _value(raw: str) -> str:
    if raw[:1] in ("'", '"'):
        quote = raw[0]
        end = _closing_quote(raw, quote)
        if end > 0:
            inner = raw[1:end]
            return _unescape(inner) if quote == '"' else inner
    # Unquoted: a `#` after whitespace starts a comment, as in a shell.
    return re.split(r"\s+#", raw, maxsplit=1)[0].strip()


def _closing_quote(raw: str, quote: str) -> int:
    index = 1
    while index < len(raw):
        if raw[index] == "\\" and quote == '"':
            index += 2
            continue
        if raw[index] == quote:
            return index
        index += 1
    return -1


def _unescape(inner: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), inner)
