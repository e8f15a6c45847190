"""The LLM contract dream reasons through and the factory that picks a provider.

Both providers speak JSON over HTTPS through the shared client in ``elfmem.adapters.endpoint``,
so they retry and fail alike. Keys come only from the environment (a project-root ``.env`` is
loaded first); the config names the variable, never the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol
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
