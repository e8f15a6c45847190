"""Claude through the official ``anthropic`` SDK, with the stable system prompt cached.

Dream sends the same system text with every block, so it carries ``cache_control``: once it is
long enough for the provider to cache, later calls read it at a fraction of the price (the
``cache_read`` tokens in a result). Structured answers use a forced tool whose ``input_schema`` is
the shape asked for. The SDK owns retries and timeouts and is imported only when a client is built.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from elfmem.adapters.provider_errors import Endpoint, require_key, translate
from elfmem.adapters.structured import checked, refused
from elfmem.adapters.usage import Meter
from elfmem.errors import ModelReplyError

if TYPE_CHECKING:
    from anthropic.types import Message

ANTHROPIC_URL = "https://api.anthropic.com"


class AnthropicLLM:
    """One turn to ``{base_url}/v1/messages``; ``usage`` meters tokens and cache reads/writes."""

    def __init__(
        self,
        model: str,
        api_key_env: str = "ANTHROPIC_API_KEY",
        base_url: str = ANTHROPIC_URL,
        *,
        timeout: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        import anthropic

        self.model = model
        # The SDK's base_url is the host; tolerate one written with the /v1 suffix.
        self.base_url = base_url.rstrip("/").removesuffix("/v1")
        self.usage = Meter()
        key = require_key(api_key_env, "llm")
        self._where = Endpoint("llm", self.base_url, api_key_env, timeout, max_retries)
        self._client = anthropic.Anthropic(
            api_key=key, base_url=self.base_url, timeout=timeout, max_retries=max_retries
        )

    @property
    def identity(self) -> str:
        if self.base_url == ANTHROPIC_URL:
            return f"anthropic:{self.model}"
        return f"anthropic:{self.model}@{self.base_url}"

    def complete(self, system: str, prompt: str, *, max_tokens: int, temperature: float) -> str:
        return _text(self._call(system, prompt, max_tokens, temperature, {}))

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
        """The reply as an object fitting ``schema``: the input of a tool the model must call."""
        tool = {"name": name, "description": "Record your answer.", "input_schema": dict(schema)}
        extra = {"tools": [tool], "tool_choice": {"type": "tool", "name": name}}
        message = self._call(system, prompt, max_tokens, temperature, extra)
        for block in message.content:
            if block.type == "tool_use" and block.name == name:
                return checked(block.input, schema, json.dumps(block.input), self.identity)
        raise ModelReplyError(
            f"{self.identity} answered without calling the `{name}` tool "
            f"(stop_reason {message.stop_reason}).",
            "Retry, or raise `llm.max_tokens` if the answer was cut off (the raw reply is on "
            "`.raw`).",
            raw=_text(message),
        )

    def _call(
        self, system: str, prompt: str, max_tokens: int, temperature: float, extra: dict[str, Any]
    ) -> Message:
        import anthropic

        # The Messages API of anthropic>=2 takes no temperature (the SDK refuses the argument),
        # so ``llm.temperature`` applies to OpenAI-compatible models only.
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": prompt}],
            **extra,
        }
        if system:
            body["system"] = [
                {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}
            ]
        try:
            message: Message = self._client.messages.create(**body)
        except (anthropic.AnthropicError, ValueError) as exc:
            raise translate(exc, anthropic, self._where) from exc
        usage = message.usage
        self.usage.add(
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_input_tokens,
            usage.cache_creation_input_tokens,
        )
        if message.stop_reason == "refusal":
            raise refused(self.identity, "stop_reason refusal", _text(message))
        return message


def _text(message: Message) -> str:
    return "".join(block.text for block in message.content if block.type == "text")
