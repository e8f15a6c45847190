"""The LLM contract dream reasons through and the factory that picks a provider.

Both providers run on their official SDKs (``openai``, ``anthropic``), which retry and time out
alike under ``llm.max_retries`` and ``llm.timeout``. Keys come only from the environment (a
project-root ``.env`` is loaded first); the config names the variable, never the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

from elfmem.adapters.dotenv import load_dotenv
from elfmem.config import LLMConfig
from elfmem.errors import ConfigError, ElfmemError

_FIX = "in the `llm:` section of .elfmem/config.yaml"


class LLM(Protocol):
    """One chat turn: a system text and a user prompt in, the model's text out."""

    @property
    def identity(self) -> str:
        """Provider, model and endpoint, e.g. ``anthropic:claude-haiku-4-5-20251001``."""
        ...

    def complete(self, system: str, prompt: str, *, max_tokens: int, temperature: float) -> str: ...


@runtime_checkable
class StructuredLLM(LLM, Protocol):
    """A model that can be held to a JSON schema (OpenAI json_schema, Anthropic tool use).

    ``complete_json`` returns an object that fits ``schema`` or raises ``ModelReplyError`` with the
    raw reply on ``.raw`` (a refusal included); callers fall back to ``complete`` for other models.
    """

    def complete_json(
        self,
        system: str,
        prompt: str,
        schema: Mapping[str, Any],
        *,
        name: str,
        max_tokens: int,
        temperature: float,
    ) -> dict[str, Any]: ...


def make_llm(config: LLMConfig, root: Path | None = None) -> LLM | None:
    """The configured model, or None when ``llm.model`` is empty (dream then runs without one).

    ``claude-*`` models go to Anthropic's Messages API; everything else to an OpenAI-compatible
    ``/chat/completions`` endpoint (``llm.base_url``; a local server needs no key), or to Azure
    OpenAI when ``llm.api_version`` is set (``base_url`` is then the resource's endpoint).
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
    if config.max_retries < 0:
        raise ConfigError(
            f"llm.max_retries = {config.max_retries} is negative.",
            f"Set `max_retries: 2` (0 turns retries off) {_FIX}.",
        )
    base_url = config.base_url.strip()
    key_env = key_env_for(config)
    if model.lower().startswith("claude-"):
        from elfmem.adapters.anthropic_llm import ANTHROPIC_URL, AnthropicLLM

        return AnthropicLLM(
            model,
            key_env,
            base_url or ANTHROPIC_URL,
            timeout=config.timeout,
            max_retries=config.max_retries,
        )
    from elfmem.adapters.openai_llm import OPENAI_URL, OpenAILLM

    return OpenAILLM(
        model,
        base_url or OPENAI_URL,
        key_env,
        timeout=config.timeout,
        max_retries=config.max_retries,
        api_version=config.api_version.strip(),
    )


def key_env_for(config: LLMConfig) -> str:
    """The variable the configured model's key is read from; empty when it needs none.

    ``llm.api_key_env`` wins; otherwise Claude, OpenAI's own endpoint and Azure always need a key
    (their SDKs' usual variables), and any other ``base_url`` is taken for a local server.
    """
    if config.api_key_env.strip():
        return config.api_key_env.strip()
    if config.model.strip().lower().startswith("claude-"):
        return "ANTHROPIC_API_KEY"
    if config.api_version.strip():
        return "AZURE_OPENAI_API_KEY"
    base_url = config.base_url.strip() or "https://api.openai.com/v1"
    return "OPENAI_API_KEY" if urlsplit(base_url).hostname == "api.openai.com" else ""


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
