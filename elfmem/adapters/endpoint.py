"""One JSON-over-HTTP client for every remote model: both LLM providers and the embedding API.

Each of them is a POST of a JSON body that answers JSON, so one standard-library client serves
them all and they share one retry policy: what is transient (429, 5xx, timeouts, dropped
connections) is retried with backoff, a refused connection or unknown host fails at once, and
everything else becomes an elfmem error whose recovery names the config field to fix.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from elfmem.errors import ConfigError, ElfmemError

RETRIES = 3
TRANSIENT = frozenset({408, 429, 500, 502, 503, 504, 529})  # 529: Anthropic "overloaded"
MAX_WAIT = 30.0
_CONFIG = ".elfmem/config.yaml"
_SUBJECTS = {"llm": "LLM", "embeddings": "embedding"}
"""How messages name the endpoint a config section configures."""


def require_key(env_name: str, section: str) -> str:
    """The API key in ``$env_name``, or a ConfigError saying where to put it.

    ``section`` is the config section (``llm``, ``embeddings``) whose endpoint needs the key.
    """
    key = os.environ.get(env_name, "").strip()
    if not key:
        subject = _SUBJECTS.get(section, section)
        raise ConfigError(
            f"The {subject} endpoint needs an API key in ${env_name}: it is unset.",
            f"export {env_name}=<your key> (or add `{env_name}=<your key>` to the project's "
            f".env); for a local server that needs none, set `{section}.base_url` and leave "
            f"`{section}.api_key_env` empty.",
        )
    return key


def retry_wait(attempt: int, retry_after: str, backoff: float) -> float:
    """Seconds before retry ``attempt`` (0-based): the server's Retry-After, else doubling."""
    try:
        asked = float(retry_after)
    except ValueError:
        asked = -1.0
    if asked >= 0:
        return min(asked, MAX_WAIT)
    return min(backoff * 2.0**attempt, MAX_WAIT)


class JsonEndpoint:
    """POSTs a JSON body to one URL and returns the decoded JSON answer, retrying transients.

    ``section`` is the config section (``llm``, ``embeddings``) the recoveries point to, and
    ``key_env`` the variable holding the key, if the endpoint needs one.
    """

    def __init__(
        self,
        section: str,
        url: str,
        headers: Mapping[str, str],
        *,
        timeout: float,
        retries: int = RETRIES,
        backoff: float = 1.0,
        key_env: str = "",
    ) -> None:
        self.url = url
        self.headers = {"Content-Type": "application/json", "Accept": "application/json", **headers}
        self.section = section
        self.subject = _SUBJECTS.get(section, section)
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self.key_env = key_env

    def post(self, body: Mapping[str, object]) -> Any:
        request = urllib.request.Request(
            self.url, json.dumps(body).encode("utf-8"), self.headers, method="POST"
        )
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return self._decode(response.read())
            except urllib.error.HTTPError as exc:
                with exc:
                    detail, retry_after = _server_message(exc), exc.headers.get("Retry-After", "")
                if exc.code not in TRANSIENT or last:
                    raise self._http_error(exc.code, detail) from exc
                time.sleep(retry_wait(attempt, str(retry_after), self.backoff))
            except (OSError, http.client.HTTPException) as exc:  # URLError, timeouts, resets
                if last or _unreachable(exc):
                    raise ElfmemError(
                        f"Cannot reach the {self.subject} endpoint {self.url}: {_reason(exc)}",
                        f"Start the server or fix {self._field('base_url')} in {_CONFIG}, then "
                        f"retry (the timeout of each attempt is {self.timeout:g}s).",
                    ) from exc
                time.sleep(retry_wait(attempt, "", self.backoff))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def shape_error(self, detail: str) -> ElfmemError:
        """The error for an answer that is JSON but not the shape the adapter expects."""
        return ElfmemError(
            f"The {self.subject} endpoint {self.url} answered with an unexpected shape: {detail}",
            f"Check {self._field('model')} and {self._field('base_url')} in {_CONFIG} "
            "(an OpenAI-compatible base_url ends in /v1).",
        )

    def _field(self, name: str) -> str:
        return f"`{self.section}.{name}`"

    def _decode(self, payload: bytes) -> Any:
        try:
            return json.loads(payload)
        except ValueError as exc:
            raise self.shape_error(f"not JSON ({payload[:120]!r})") from exc

    def _http_error(self, code: int, detail: str) -> ElfmemError:
        what = f"The {self.subject} endpoint {self.url} answered HTTP {code}: {detail}"
        if code in (401, 403):
            if self.key_env:
                return ConfigError(what, f"Check the API key in ${self.key_env}.")
            field = self._field("api_key_env")
            return ConfigError(what, f"Set {field} in {_CONFIG} to the variable holding your key.")
        if code in (400, 404, 422):
            return ElfmemError(
                what, f"Check {self._field('model')} and {self._field('base_url')} in {_CONFIG}."
            )
        return ElfmemError(what, "The server kept failing; retry later or use another endpoint.")


def _unreachable(exc: BaseException) -> bool:
    """Refused connections and unknown hosts will not heal within a backoff, so fail at once."""
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    return isinstance(reason, ConnectionRefusedError | socket.gaierror)


def _reason(exc: BaseException) -> str:
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, TimeoutError):
        return "timed out"
    return str(reason) or type(reason).__name__


def _server_message(exc: urllib.error.HTTPError) -> str:
    """The ``error.message`` the providers put in an error body, else the start of the body."""
    try:
        raw = exc.read().decode("utf-8", "replace")
    except OSError:
        return str(exc.reason)
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    if isinstance(message, str) and message:
        return message
    return raw[:300].strip() or str(exc.reason)
