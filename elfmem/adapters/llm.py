"""The LLM contract dream reasons through, the factory that picks a provider, and their transport.

Both providers speak JSON over HTTPS, so one small standard-library client serves them: it retries
what is transient (429, 5xx, timeouts, dropped connections) with backoff and turns everything else
into an elfmem error that names the config field to fix. Keys come only from the environment (a
project-root ``.env`` is loaded first); the config names the variable, never the key.
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
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from elfmem.adapters.dotenv import load_dotenv
from elfmem.config import LLMConfig
from elfmem.errors import ConfigError, ElfmemError

RETRIES = 3
_TRANSIENT = frozenset({408, 429, 500, 502, 503, 504, 529})  # 529: Anthropic "overloaded"
_MAX_WAIT = 30.0
_FIX = "in the `llm:` section of .elfmem/config.yaml"


class LLM(Protocol):
    """One chat turn: a system text and a user prompt in, the model's text out."""

    @property
    def identity(self) -> str:
        """Provider, model and endpoint, e.g. ``anthropic:claude-haiku-4-5-20251001``."""
        ...

    def complete(self, system: str, prompt: str, *, max_tokens: int, temperature: float) -> str: ...


def make_llm(config: LLMConfig, root: Path | None = None) -> LLM | None:
    """The configured model, or None when ``llm.model`` is empty (dream then runs without one).

    ``claude-*`` models go to Anthropic's Messages API; everything else to an OpenAI-compatible
    ``/chat/completions`` endpoint (``llm.base_url``; a local server needs no key).
    """
    if root is not None:
        load_dotenv(root / ".env")
    model = config.model.strip()
    if not model:
        return None
    if config.timeout <= 0:
        raise ConfigError(
            f"llm.timeout = {config.timeout} is not a positive number of seconds.",
            f"Set `timeout: 60` {_FIX}.",
        )
    base_url = config.base_url.strip()
    key_env = config.api_key_env.strip()
    if model.lower().startswith("claude-"):
        from elfmem.adapters.anthropic_llm import ANTHROPIC_URL, AnthropicLLM

        return AnthropicLLM(
            model, key_env or "ANTHROPIC_API_KEY", base_url or ANTHROPIC_URL, timeout=config.timeout
        )
    from elfmem.adapters.openai_llm import OPENAI_URL, OpenAILLM

    base_url = base_url or OPENAI_URL
    if not key_env and urlsplit(base_url).hostname == "api.openai.com":
        key_env = "OPENAI_API_KEY"  # the official endpoint always needs a key; local ones rarely do
    return OpenAILLM(model, base_url, key_env, timeout=config.timeout)


def resolve_check(llm: LLM) -> str:
    """Make one tiny real call, so ``doctor --resolve`` proves the key, endpoint and model work."""
    reply = llm.complete(
        "You are a connectivity check. Answer briefly.",
        "Reply with the single word: ok",
        max_tokens=32,
        temperature=0.0,
    ).strip()
    if not reply:
        raise ElfmemError(
            f"The model {llm.identity} answered with empty text.",
            "Check `llm.model`; a reasoning model may spend its whole `llm.max_tokens` thinking, "
            "so raise it or pick a non-reasoning model.",
        )
    return reply


def require_key(env_name: str) -> str:
    """The API key in ``$env_name``, or a ConfigError saying exactly where to put it."""
    key = os.environ.get(env_name, "").strip()
    if not key:
        raise ConfigError(
            f"The LLM needs an API key in ${env_name}: it is unset.",
            f"export {env_name}=<your key> (or add `{env_name}=<your key>` to the project's "
            f".env); for a local server that needs none, set `llm.base_url` and leave "
            "`llm.api_key_env` empty.",
        )
    return key


def retry_wait(attempt: int, retry_after: str, backoff: float) -> float:
    """Seconds before retry ``attempt`` (0-based): the server's Retry-After, else doubling."""
    try:
        asked = float(retry_after)
    except ValueError:
        asked = -1.0
    if asked >= 0:
        return min(asked, _MAX_WAIT)
    return min(backoff * 2.0**attempt, _MAX_WAIT)


class JsonEndpoint:
    """POSTs a JSON body to one URL and returns the decoded JSON answer, retrying transients."""

    def __init__(
        self,
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
                if exc.code not in _TRANSIENT or last:
                    raise self._http_error(exc.code, detail) from exc
                time.sleep(retry_wait(attempt, str(retry_after), self.backoff))
            except (OSError, http.client.HTTPException) as exc:  # URLError, timeouts, resets
                if last or _unreachable(exc):
                    raise ElfmemError(
                        f"Cannot reach the LLM endpoint {self.url}: {_reason(exc)}",
                        f"Start the server or fix `base_url` {_FIX}, then retry "
                        f"(each attempt waits up to `timeout` = {self.timeout:g}s).",
                    ) from exc
                time.sleep(retry_wait(attempt, "", self.backoff))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def shape_error(self, detail: str) -> ElfmemError:
        return ElfmemError(
            f"The LLM endpoint {self.url} answered with an unexpected shape: {detail}",
            f"Check `model` and `base_url` {_FIX} (an OpenAI-compatible base_url ends in /v1).",
        )

    def _decode(self, payload: bytes) -> Any:
        try:
            return json.loads(payload)
        except ValueError as exc:
            raise self.shape_error(f"not JSON ({payload[:120]!r})") from exc

    def _http_error(self, code: int, detail: str) -> ElfmemError:
        what = f"The LLM endpoint {self.url} answered HTTP {code}: {detail}"
        if code in (401, 403):
            if self.key_env:
                return ConfigError(what, f"Check the API key in ${self.key_env}.")
            return ConfigError(what, f"Set `api_key_env` {_FIX} to the variable holding your key.")
        if code in (400, 404, 422):
            return ElfmemError(what, f"Check `model` and `base_url` {_FIX}.")
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
    """The ``error.message`` both providers put in an error body, else the start of the body."""
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
