"""What a provider SDK's failure means for the user, as an elfmem error with a recovery.

The ``openai`` and ``anthropic`` SDKs retry what is transient themselves (429, 408, 409, 5xx,
timeouts, dropped connections; ``max_retries`` times with backoff, honouring ``retry-after``), so
by the time an exception reaches here the retries are spent. Both SDKs name their exceptions alike
(``RateLimitError``, ``APITimeoutError``, ...), so one mapping by class serves both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import ModuleType

from elfmem.errors import ConfigError, ElfmemError, ProviderError

CONFIG_FILE = ".elfmem/config.yaml"
_SUBJECTS = {"llm": "LLM", "embeddings": "embedding"}


def require_key(env_name: str, section: str) -> str:
    """The API key in ``$env_name``, or a ConfigError saying where to put it.

    ``section`` is the config section (``llm``, ``embeddings``) whose endpoint needs the key.
    """
    key = os.environ.get(env_name, "").strip()
    if not key:
        subject = _SUBJECTS.get(section, section)
        raise ConfigError(
            f"The {subject} endpoint needs an API key in ${env_name}: it is unset.",
            f"export {env_name}=<your key> (or add `{env_name}=<your key>` to the project's "
            f".env); for a local server that needs none, set `{section}.base_url` and leave "
            f"`{section}.api_key_env` empty.",
        )
    return key


@dataclass(frozen=True)
class Endpoint:
    """Where a call went, so an error can name it and the config fields that choose it."""

    section: str
    url: str
    key_env: str = ""
    timeout: float = 60.0
    max_retries: int = 2

    @property
    def subject(self) -> str:
        """``The LLM endpoint <url>``, to start a sentence with."""
        return f"The {self.name}"

    @property
    def name(self) -> str:
        """``LLM endpoint <url>``, to use within a sentence."""
        return f"{_SUBJECTS.get(self.section, self.section)} endpoint {self.url}"

    def field(self, name: str) -> str:
        return f"`{self.section}.{name}`"


def translate(exc: Exception, sdk: ModuleType, where: Endpoint) -> ElfmemError:
    """The elfmem error for an exception ``sdk`` (the ``openai`` or ``anthropic`` module) raised."""
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderError(
            f"{where.subject} did not answer within {where.timeout:g}s "
            f"({where.max_retries} retries spent).",
            f"Raise {where.field('timeout')} in {CONFIG_FILE}, or check the server's load.",
        )
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderError(
            f"Cannot reach the {where.name}: {_cause(exc)}",
            f"Start the server or fix {where.field('base_url')} in {CONFIG_FILE}, then retry.",
        )
    if isinstance(exc, sdk.APIStatusError):
        return _status_error(exc, sdk, where)
    if isinstance(exc, ValueError):  # the body was not JSON (JSONDecodeError is a ValueError)
        return ProviderError(
            f"{where.subject} answered with a body that is not JSON: {exc}",
            f"Check {where.field('base_url')} in {CONFIG_FILE}: it must be the API's root "
            "(an OpenAI-compatible one ends in /v1), not a web page or a proxy's error page.",
        )
    return ProviderError(
        f"{where.subject} failed: {type(exc).__name__}: {exc}",
        f"Check the `{where.section}:` section of {CONFIG_FILE}.",
    )


def _status_error(exc: Exception, sdk: ModuleType, where: Endpoint) -> ElfmemError:
    status = int(getattr(exc, "status_code", 0))
    what = f"{where.subject} answered HTTP {status}: {_server_message(exc)}"
    if isinstance(exc, sdk.AuthenticationError | sdk.PermissionDeniedError):
        if where.key_env:
            return ConfigError(what, f"Check the API key in ${where.key_env}.")
        return ConfigError(
            what, f"Set {where.field('api_key_env')} in {CONFIG_FILE} to the variable holding it."
        )
    if isinstance(exc, sdk.RateLimitError):
        return ProviderError(
            what + f" (rate limited; {where.max_retries} retries spent)",
            f"Wait and retry, raise {where.field('max_retries')}, or dream fewer blocks per run "
            "(`elfmem dream --max N`).",
            status,
        )
    if isinstance(exc, sdk.BadRequestError | sdk.NotFoundError | sdk.UnprocessableEntityError):
        return ProviderError(
            what,
            f"Check {where.field('model')} and {where.field('base_url')} in {CONFIG_FILE}.",
            status,
        )
    if isinstance(exc, sdk.InternalServerError):
        return ProviderError(
            what + f" ({where.max_retries} retries spent)",
            "The server kept failing; retry later or use another endpoint.",
            status,
        )
    return ProviderError(what, f"Check the `{where.section}:` section of {CONFIG_FILE}.", status)


def _server_message(exc: Exception) -> str:
    """The ``error.message`` both providers put in an error body, else the SDK's own text."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
        if isinstance(message, str) and message:
            return message
    return str(getattr(exc, "message", "") or exc)


def _cause(exc: BaseException) -> str:
    """The root of a connection failure (refused, unknown host), not the SDK's generic text."""
    inner = exc.__cause__ or exc.__context__
    while inner is not None and (inner.__cause__ or inner.__context__) is not None:
        inner = inner.__cause__ or inner.__context__
    return str(inner or exc) or type(inner or exc).__name__
