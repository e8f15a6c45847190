"""Chat completions through the official ``openai`` SDK: OpenAI, Azure, and any compatible server.

vLLM, Ollama, LM Studio and the llama.cpp server speak the same API, so ``llm.base_url`` points one
client at any of them (a local server needs no key); ``llm.api_version`` switches to Azure, where
``llm.model`` is the deployment name. The SDK owns retries and timeouts; failures become elfmem
errors (``provider_errors``). The SDK is imported when a client is built, not at ``import elfmem``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from elfmem.adapters.provider_errors import Endpoint, require_key, translate
from elfmem.adapters.structured import decoded, refused
from elfmem.adapters.usage import Meter
from elfmem.errors import ModelReplyError

if TYPE_CHECKING:
    from openai import OpenAI
    from openai.types.chat import ChatCompletion

OPENAI_URL = "https://api.openai.com/v1"
NO_KEY = "not-needed"
"""What a local server that checks no key is sent: the SDK refuses to build a client without one."""


class OpenAILLM:
    """One system + user turn to ``{base_url}/chat/completions``; ``usage`` meters the tokens."""

    def __init__(
        self,
        model: str,
        base_url: str = OPENAI_URL,
        api_key_env: str = "",
        *,
        timeout: float = 60.0,
        max_retries: int = 2,
        api_version: str = "",
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.usage = Meter()
        key = require_key(api_key_env, "llm") if api_key_env else NO_KEY
        self._where = Endpoint("llm", self.base_url, api_key_env, timeout, max_retries)
        self._client = _client(self.base_url, key, timeout, max_retries, api_version)
        # OpenAI's reasoning models refuse the legacy `max_tokens`; local servers know only it.
        official = urlsplit(self.base_url).hostname == "api.openai.com"
        self._max_tokens_field = "max_completion_tokens" if official else "max_tokens"

    @property
    def identity(self) -> str:
        return f"openai:{self.model}@{self.base_url}"

    def complete(self, system: str, prompt: str, *, max_tokens: int, temperature: float) -> str:
        message = self._call(system, prompt, max_tokens, temperature, {}).choices[0].message
        if message.refusal:
            raise refused(self.identity, message.refusal, _text(message.content))
        return _text(message.content)

    def complete_json(
        self,
        system: str,
        prompt: str,
        schema: Mapping[str, Any],
        *,
        name: str,
        max_tokens: int,
        temperature: float,
    ) -> dict[str, Any]:
        """The reply as an object fitting ``schema``, asked for with ``response_format``."""
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": dict(schema), "strict": True},
        }
        extra = {"response_format": response_format}
        choice = self._call(system, prompt, max_tokens, temperature, extra).choices[0]
        text = _text(choice.message.content)
        if choice.message.refusal:
            raise refused(self.identity, choice.message.refusal, text)
        if choice.finish_reason == "length":
            raise ModelReplyError(
                f"{self.identity} ran out of tokens before finishing its answer.",
                "Raise `llm.max_tokens` in .elfmem/config.yaml (the raw reply is on `.raw`).",
                raw=text,
            )
        return decoded(text, schema, self.identity)

    def _call(
        self, system: str, prompt: str, max_tokens: int, temperature: float, extra: dict[str, Any]
    ) -> ChatCompletion:
        import openai

        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt})
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
            self._max_tokens_field: max_tokens,
            **extra,
        }
        try:
            completion: ChatCompletion = self._client.chat.completions.create(**body)
        except (openai.OpenAIError, ValueError) as exc:
            raise translate(exc, openai, self._where) from exc
        self._meter(completion)
        if not completion.choices:
            raise ModelReplyError(
                f"{self.identity} answered with no choices.",
                "Check `llm.model` and `llm.base_url` in .elfmem/config.yaml.",
                raw=completion.model_dump_json(),
            )
        return completion

    def _meter(self, completion: ChatCompletion) -> None:
        usage = completion.usage
        if usage is None:  # some local servers report none: the call still counts
            self.usage.add(0, 0)
            return
        details = usage.prompt_tokens_details
        cached = details.cached_tokens if details is not None else 0
        self.usage.add(usage.prompt_tokens, usage.completion_tokens, cached)


def _text(content: object) -> str:
    """The reply's text; some servers send a list of content parts instead of one string."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _client(base_url: str, key: str, timeout: float, max_retries: int, api_version: str) -> OpenAI:
    import openai

    if api_version:
        return openai.AzureOpenAI(
            azure_endpoint=base_url,
            api_version=api_version,
            api_key=key,
            timeout=timeout,
            max_retries=max_retries,
        )
    return openai.OpenAI(api_key=key, base_url=base_url, timeout=timeout, max_retries=max_retries)
