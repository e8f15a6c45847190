"""Embeddings from any OpenAI-compatible ``/embeddings`` endpoint, through the ``openai`` SDK.

The same request serves OpenAI, Azure-style proxies, LM Studio, Ollama, vLLM and most hosted
providers. The SDK owns retries and timeouts (``embeddings.max_retries``, ``embeddings.timeout``)
and is imported only when texts are first embedded, never at ``import elfmem``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from elfmem.adapters.embedder import normalise_rows, text_list
from elfmem.adapters.provider_errors import Endpoint, require_key, translate
from elfmem.adapters.usage import Meter
from elfmem.errors import ConfigError, ModelReplyError

if TYPE_CHECKING:
    from openai import OpenAI

    from elfmem.adapters.embedder import Matrix

MAX_BATCH = 256
NO_KEY = "not-needed"
"""What a local server that checks no key is sent: the SDK refuses to build a client without one."""


class OpenAICompatEmbedder:
    """Sends batches of texts to ``{base_url}/embeddings``; returns normalised float32 rows."""

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key_env: str,
        dimensions: int,
        timeout: float = 30.0,
        max_retries: int = 2,
        *,
        batch_size: int = MAX_BATCH,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max(0, max_retries)
        self.batch_size = max(1, min(batch_size, MAX_BATCH))
        self.usage = Meter()
        self._dimensions = dimensions
        self._where = Endpoint("embeddings", self.base_url, api_key_env, timeout, self.max_retries)

    @property
    def identity(self) -> str:
        return f"openai:{self.model}:{self._dimensions}@{self.base_url}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> Matrix:
        batch = text_list(texts)
        out = np.zeros((len(batch), self._dimensions), dtype=np.float32)
        # Empty texts are refused by OpenAI; they carry no meaning, so they get a zero row.
        todo = [i for i, text in enumerate(batch) if text.strip()]
        if not todo:
            return out
        client = self._client()
        for start in range(0, len(todo), self.batch_size):
            rows = todo[start : start + self.batch_size]
            out[rows] = self._request(client, [batch[i] for i in rows])
        return normalise_rows(out)

    def _client(self) -> OpenAI:
        """Read the key now, not at construction: a config can name it before it is exported."""
        import openai

        key = require_key(self.api_key_env, "embeddings") if self.api_key_env else NO_KEY
        return openai.OpenAI(
            api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=self.max_retries
        )

    def _request(self, client: OpenAI, texts: list[str]) -> Matrix:
        import openai

        extra: dict[str, Any] = {}
        if self.model.startswith("text-embedding-3"):
            extra["dimensions"] = self._dimensions  # only these models accept shortening
        try:
            answer = client.embeddings.create(
                model=self.model, input=texts, encoding_format="float", **extra
            )
        except (openai.OpenAIError, ValueError) as exc:
            raise translate(exc, openai, self._where) from exc
        if answer.usage is not None:
            self.usage.add(answer.usage.prompt_tokens, 0)
        return self._rows(answer.data, len(texts))

    def _rows(self, data: Sequence[Any], expected: int) -> Matrix:
        try:
            items = sorted(data, key=lambda item: int(item.index))
            rows = np.array([item.embedding for item in items], dtype=np.float32)
        except (ValueError, TypeError, AttributeError) as exc:
            raise ModelReplyError(
                f"The embedding endpoint {self.base_url} answered without data[].embedding "
                f"rows ({exc!r}).",
                "Check `embeddings.model` and `embeddings.base_url` in .elfmem/config.yaml "
                "(an OpenAI-compatible base_url ends in /v1).",
                raw=repr(data)[:2000],
            ) from exc
        if rows.shape != (expected, self._dimensions):
            raise ConfigError(
                f"The endpoint returned vectors of shape {rows.shape}, expected "
                f"({expected}, {self._dimensions}) for model {self.model!r}.",
                "Set `embeddings.dimensions` to the model's real size, then run "
                "`elfmem migrate-embeddings`.",
            )
        return rows
