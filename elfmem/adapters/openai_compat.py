"""Embeddings from any OpenAI-compatible ``/embeddings`` endpoint, with only the standard library.

The same request shape serves OpenAI, LM Studio, Ollama and most hosted providers, so one small
client covers them all without an SDK dependency. The transport, with its retries and errors, is
the one the LLM adapters use (``elfmem.adapters.endpoint``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from elfmem.adapters.embedding import Matrix, normalise_rows, text_list
from elfmem.adapters.endpoint import RETRIES, JsonEndpoint, require_key
from elfmem.errors import ConfigError

MAX_BATCH = 256


class OpenAICompatEmbedder:
    """POSTs batches of texts to ``{base_url}/embeddings`` and returns normalised float32 rows."""

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key_env: str,
        dimensions: int,
        timeout: float = 30.0,
        retries: int = RETRIES,
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
        endpoint = self._endpoint()
        out = np.zeros((len(batch), self._dimensions), dtype=np.float32)
        # Empty texts are refused by OpenAI; they carry no meaning, so they get a zero row.
        todo = [i for i, text in enumerate(batch) if text.strip()]
        for start in range(0, len(todo), self.batch_size):
            rows = todo[start : start + self.batch_size]
            out[rows] = self._request(endpoint, [batch[i] for i in rows])
        return normalise_rows(out)

    def _endpoint(self) -> JsonEndpoint:
        """Read the key now, not at construction: a config can name it before it is exported."""
        headers: dict[str, str] = {}
        if self.api_key_env:
            key = require_key(self.api_key_env, "embeddings")
            headers["Authorization"] = f"Bearer {key}"
        return JsonEndpoint(
            "embeddings",
            f"{self.base_url}/embeddings",
            headers,
            timeout=self.timeout,
            retries=self.retries,
            backoff=self.backoff,
            key_env=self.api_key_env,
        )

    def _request(self, endpoint: JsonEndpoint, texts: list[str]) -> Matrix:
        body: dict[str, object] = {"model": self.model, "input": texts}
        if self.model.startswith("text-embedding-3"):
            body["dimensions"] = self._dimensions  # only these models accept shortening
        return self._parse(endpoint, endpoint.post(body), len(texts))

    def _parse(self, endpoint: JsonEndpoint, answer: Any, expected: int) -> Matrix:
        try:
            items = sorted(answer["data"], key=lambda item: int(item.get("index", 0)))
            rows = np.array([item["embedding"] for item in items], dtype=np.float32)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise endpoint.shape_error(f"no data[].embedding rows ({exc!r})") from exc
        if rows.shape != (expected, self._dimensions):
            raise ConfigError(
                f"The endpoint returned vectors of shape {rows.shape}, expected "
                f"({expected}, {self._dimensions}) for model {self.model!r}.",
                "Set `embeddings.dimensions` to the model's real size, then run "
                "`elfmem migrate-embeddings`.",
            )
        return rows
