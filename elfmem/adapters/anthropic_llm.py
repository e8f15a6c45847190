"""Claude through Anthropic's Messages API, with the standard library instead of the SDK.

Dream makes one short call per block, so a plain HTTPS POST is all it needs; keeping the SDK out
keeps the install small and the retry policy identical to the OpenAI-compatible adapter's.
"""

from __future__ import annotations

from typing import Any

from elfmem.adapters.endpoint import RETRIES, JsonEndpoint, require_key

ANTHROPIC_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"


class AnthropicLLM:
    """POSTs one turn to ``{base_url}/v1/messages`` and joins the text blocks of the answer."""

    def __init__(
        self,
        model: str,
        api_key_env: str = "ANTHROPIC_API_KEY",
        base_url: str = ANTHROPIC_URL,
        *,
        timeout: float = 60.0,
        retries: int = RETRIES,
        backoff: float = 1.0,
    ) -> None:
        self.model = model
        # Like the SDK, base_url is the host; tolerate one written with the /v1 suffix.
        self.base_url = base_url.rstrip("/").removesuffix("/v1")
        key = require_key(api_key_env, "llm")
        headers = {"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION}
        self._endpoint = JsonEndpoint(
            "llm",
            f"{self.base_url}/v1/messages",
            headers,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            key_env=api_key_env,
        )

    @property
    def identity(self) -> str:
        if self.base_url == ANTHROPIC_URL:
            return f"anthropic:{self.model}"
        return f"anthropic:{self.model}@{self.base_url}"

    def complete(self, system: str, prompt: str, *, max_tokens: int, temperature: float) -> str:
        body: dict[str, object] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "messages": [{"role": "user", "content": prompt}],
        }
        if system:
            body["system"] = system
        return self._text(self._endpoint.post(body))

    def _text(self, data: Any) -> str:
        content = data.get("content") if isinstance(data, dict) else None
        if not isinstance(content, list):
            raise self._endpoint.shape_error("no `content` list of blocks")
        return "".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
