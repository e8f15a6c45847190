"""Chat completions from any OpenAI-compatible endpoint: OpenAI itself, LM Studio, Ollama, vLLM.

The request shape is the de-facto standard, so one client covers hosted and local models alike;
pointing ``llm.base_url`` at a local server runs dream fully offline and needs no key.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from elfmem.adapters.endpoint import RETRIES, JsonEndpoint, require_key

OPENAI_URL = "https://api.openai.com/v1"


class OpenAILLM:
    """POSTs one system + user turn to ``{base_url}/chat/completions`` and returns the reply."""

    def __init__(
        self,
        model: str,
        base_url: str = OPENAI_URL,
        api_key_env: str = "",
        *,
        timeout: float = 60.0,
        retries: int = RETRIES,
        backoff: float = 1.0,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        headers: dict[str, str] = {}
        if api_key_env:
            headers["Authorization"] = "Bearer " + require_key(api_key_env, "llm")
        self._endpoint = JsonEndpoint(
            "llm",
            f"{self.base_url}/chat/completions",
            headers,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            key_env=api_key_env,
        )
        # OpenAI's reasoning models refuse the legacy `max_tokens`; local servers know only it.
        official = urlsplit(self.base_url).hostname == "api.openai.com"
        self._max_tokens_field = "max_completion_tokens" if official else "max_tokens"

    @property
    def identity(self) -> str:
        return f"openai:{self.model}@{self.base_url}"

    def complete(self, system: str, prompt: str, *, max_tokens: int, temperature: float) -> str:
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt})
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
            self._max_tokens_field: max_tokens,
        }
        return self._text(self._endpoint.post(body))

    def _text(self, data: Any) -> str:
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise self._endpoint.shape_error(f"no choices[0].message.content ({exc!r})") from exc
        if content is None:  # a refusal or a tool call: no text to analyse
            return ""
        if isinstance(content, list):  # some servers return content parts
            return "".join(part.get("text", "") for part in content if isinstance(part, dict))
        return str(content)
