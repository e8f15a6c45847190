"""Embeddings from any OpenAI-compatible ``/embeddings`` endpoint, with only the standard library.

The same request shape serves OpenAI, LM Studio, Ollama and most hosted providers, so one small
client covers them all without an SDK dependency. Transient failures (429, 5xx, a dropped
connection) are retried with backoff; anything else fails at once with what the server said.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from email.message import Message

import numpy as np

from elfmem.adapters.embedding import Matrix, normalise_rows, text_list
from elfmem.errors import ConfigError, ElfmemError

MAX_BATCH = 256
_TRANSIENT = frozenset({408, 429, 500, 502, 503, 504})
_MAX_WAIT = 30.0


class OpenAICompatEmbedder:
    """POSTs batches of texts to ``{base_url}/embeddings`` and returns normalised float32 rows."""

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key_env: str,
        dimensions: int,
        timeout: float = 30.0,
        retries: int = 3,
        *,
        batch_size: int = MAX_BATCH,
        backoff: float = 1.0,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.retries = max(0, retries)
        self.batch_size = max(1, min(batch_size, MAX_BATCH))
        self.backoff = backoff
        self._dimensions = dimensions

    @property
    def identity(self) -> str:
        return f"openai:{self.model}:{self._dimensions}@{self.base_url}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> Matrix:
        batch = text_list(texts)
        headers = self._headers()
        out = np.zeros((len(batch), self._dimensions), dtype=np.float32)
        # Empty texts are refused by OpenAI; they carry no meaning, so they get a zero row.
        todo = [i for i, text in enumerate(batch) if text.strip()]
        for start in range(0, len(todo), self.batch_size):
            rows = todo[start : start + self.batch_size]
            out[rows] = self._request([batch[i] for i in rows], headers)
        return normalise_rows(out)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env, "").strip()
            if not key:
                raise ConfigError(
                    f"The embedding endpoint needs an API key in ${self.api_key_env}: it is unset.",
                    f"export {self.api_key_env}=<your key> (or put it in the project's .env); "
                    "for a local server that needs none, set `embeddings.api_key_env: ''`.",
                )
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _request(self, texts: list[str], headers: dict[str, str]) -> Matrix:
        body: dict[str, object] = {"model": self.model, "input": texts}
        if self.model.startswith("text-embedding-3"):
            body["dimensions"] = self._dimensions  # only these models accept shortening
        request = urllib.request.Request(
            f"{self.base_url}/embeddings", json.dumps(body).encode("utf-8"), headers, method="POST"
        )
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return self._parse(response.read(), len(texts))
            except urllib.error.HTTPError as exc:
                detail = _server_message(exc)
                if exc.code not in _TRANSIENT or last:
                    raise self._http_error(exc.code, detail) from exc
                time.sleep(self._wait(attempt, exc.headers))
            except (OSError, http.client.HTTPException) as exc:  # URLError, timeouts, resets
                if last:
                    raise ElfmemError(
                        f"Cannot reach the embedding endpoint {self.base_url}: {exc}",
                        "Start the server or fix `embeddings.base_url`, then retry.",
                    ) from exc
                time.sleep(self._wait(attempt, None))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _wait(self, attempt: int, headers: Message | None) -> float:
        retry_after = str(headers.get("Retry-After", "")) if headers is not None else ""
        if retry_after.strip().isdigit():
            return min(float(retry_after), _MAX_WAIT)
        return min(self.backoff * 2.0**attempt, _MAX_WAIT)

    def _parse(self, payload: bytes, expected: int) -> Matrix:
        try:
            data = json.loads(payload)["data"]
            items = sorted(data, key=lambda item: int(item.get("index", 0)))
            rows = np.array([item["embedding"] for item in items], dtype=np.float32)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ElfmemError(
                f"The embedding endpoint {self.base_url} answered with an unexpected shape: {exc}",
                "Check that `embeddings.base_url` is an OpenAI-compatible API (ending in /v1).",
            ) from exc
        if rows.shape != (expected, self._dimensions):
            raise ConfigError(
                f"The endpoint returned vectors of shape {rows.shape}, expected "
                f"({expected}, {self._dimensions}) for model {self.model!r}.",
                "Set `embeddings.dimensions` to the model's real size, then run "
                "`elfmem migrate-embeddings`.",
            )
        return rows

    def _http_error(self, code: int, detail: str) -> ElfmemError:
        what = f"The embedding endpoint {self.base_url} answered HTTP {code}: {detail}"
        if code in (401, 403):
            if self.api_key_env:
                return ConfigError(what, f"Check the key in ${self.api_key_env}.")
            return ConfigError(
                what, "Set `embeddings.api_key_env` to the variable that holds your key."
            )
        if code in (400, 404, 422):
            return ElfmemError(
                what, "Check `embeddings.model` and `embeddings.base_url` in .elfmem/config.yaml."
            )
        return ElfmemError(what, "The server kept failing; retry later or use another endpoint.")


def _server_message(exc: urllib.error.HTTPError) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the start of the raw body."""
    try:
        raw = exc.read().decode("utf-8", "replace")
    except OSError:
        return exc.reason if isinstance(exc.reason, str) else ""
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    if isinstance(message, str) and message:
        return message
    return raw[:300].strip() or str(exc.reason)
