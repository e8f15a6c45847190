"""The factory that builds an embedder from the ``embeddings:`` config section.

The contract the embedders implement is in ``embedder.py``; its names are re-exported here for the
callers that build an embedder and use it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from elfmem.adapters.embedder import Embedder as Embedder
from elfmem.adapters.embedder import file_sha256 as file_sha256
from elfmem.adapters.embedder import normalise_rows as normalise_rows
from elfmem.adapters.embedder import text_list as text_list
from elfmem.errors import ConfigError

if TYPE_CHECKING:
    from elfmem.adapters.embedder import Matrix as Matrix

PROVIDERS = ("embedded", "static", "openai", "mock")
OPENAI_URL = "https://api.openai.com/v1"
_SECTION_HINT = "Fix the `embeddings:` section of .elfmem/config.yaml"


def make_embedder(spec: Mapping[str, object] | object | None = None) -> Embedder:
    """Build the embedder a config asks for; with nothing configured, the embedded default model.

    ``spec`` is the ``embeddings:`` mapping or the config dataclass holding the same fields
    (``provider``, ``model``, ``dimensions``, ``base_url``, ``api_key_env``, ``path``); empty values
    count as unset. Without a provider, a ``model`` or ``base_url`` means an OpenAI-compatible
    endpoint (the seed's ``embeddings: {model: text-embedding-3-small}``), otherwise the embedded
    default. ``provider: static`` with no ``path`` is what every memory's config said before the
    transformer became the default, so it means the embedded default too: such a memory moves
    over by itself (its vectors re-embed at the next dream or index update).
    """
    fields = _as_mapping(spec)
    provider = _text(fields, "provider")
    if not provider:
        provider = "openai" if _text(fields, "model") or _text(fields, "base_url") else "embedded"
    if provider == "static" and not _text(fields, "path"):
        _no_remote(fields, provider)
        provider, fields = "embedded", {}
    if provider == "embedded":
        return _embedded(fields)
    if provider == "static":
        return _static(fields)
    if provider == "openai":
        return _openai(fields)
    if provider == "mock":
        from elfmem.adapters.mock import MockEmbedder

        return MockEmbedder(_int(fields, "dimensions") or 64)
    raise ConfigError(
        f"Unknown embeddings provider {provider!r}.",
        f"{_SECTION_HINT}: provider must be one of {', '.join(PROVIDERS)}.",
    )


def _embedded(fields: Mapping[str, object]) -> Embedder:
    from elfmem.adapters.models import DEFAULT_MODEL, MODELS, STATIC

    if _text(fields, "base_url"):
        raise ConfigError(
            "embeddings.provider is `embedded`, but `base_url` names a remote endpoint.",
            f"{_SECTION_HINT}: set `provider: openai` to use that endpoint, or remove `base_url`.",
        )
    name = _text(fields, "model") or DEFAULT_MODEL
    if name == STATIC:
        return _static({})
    spec = MODELS.get(name)
    if spec is None:
        raise ConfigError(
            f"Unknown embedded model {name!r}.",
            f"{_SECTION_HINT}: `model` must be one of {', '.join([*MODELS, STATIC])}, or empty "
            "for the default.",
        )
    from elfmem.adapters.transformer import TransformerEmbedder

    return TransformerEmbedder(spec)


def _no_remote(fields: Mapping[str, object], provider: str) -> None:
    if _text(fields, "model") or _text(fields, "base_url"):
        raise ConfigError(
            f"embeddings.provider is `{provider}`, but `model`/`base_url` name a remote model.",
            f"{_SECTION_HINT}: set `provider: openai` to use that endpoint, or remove `model` "
            "and `base_url` to use the embedded model.",
        )


def _static(fields: Mapping[str, object]) -> Embedder:
    from elfmem.adapters.static import StaticEmbedder

    _no_remote(fields, "static")
    path = _text(fields, "path")
    return StaticEmbedder(Path(path).expanduser() if path else None)


def _openai(fields: Mapping[str, object]) -> Embedder:
    from elfmem.adapters.openai_compat import OpenAICompatEmbedder

    model = _text(fields, "model")
    dimensions = _int(fields, "dimensions")
    if not model or not dimensions:
        raise ConfigError(
            "An OpenAI-compatible embedder needs both `model` and `dimensions`.",
            f"{_SECTION_HINT}, e.g. `model: text-embedding-3-small` and `dimensions: 1536`.",
        )
    base_url = _text(fields, "base_url") or OPENAI_URL
    key_env = _text(fields, "api_key_env")
    if not key_env and base_url == OPENAI_URL:
        key_env = "OPENAI_API_KEY"  # the official endpoint always needs a key; local ones rarely do
    timeout = fields.get("timeout", 30.0)
    retries = fields.get("max_retries", fields.get("retries", 2))  # `retries`: the old key
    if (
        not isinstance(timeout, int | float)
        or timeout <= 0
        or not isinstance(retries, int)
        or retries < 0
    ):
        raise ConfigError(
            "embeddings.timeout must be a positive number and embeddings.max_retries a "
            "non-negative integer.",
            f"{_SECTION_HINT}.",
        )
    return OpenAICompatEmbedder(model, base_url, key_env, dimensions, float(timeout), retries)


def _as_mapping(spec: object) -> Mapping[str, object]:
    if spec is None:
        return {}
    if isinstance(spec, Mapping):
        return spec
    if dataclasses.is_dataclass(spec) and not isinstance(spec, type):
        return dataclasses.asdict(spec)
    raise ConfigError(
        f"The embeddings configuration is a {type(spec).__name__}, not a mapping.",
        f"{_SECTION_HINT}: it must be a mapping of provider, model, dimensions, ...",
    )


def _text(fields: Mapping[str, object], key: str) -> str:
    value = fields.get(key)
    if value is None:
        return ""
    if isinstance(value, str | Path):
        return str(value).strip()
    raise ConfigError(f"embeddings.{key} = {value!r} is not text.", f"{_SECTION_HINT}.")


def _int(fields: Mapping[str, object], key: str) -> int:
    value = fields.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(
            f"embeddings.{key} = {value!r} is not a positive integer.", f"{_SECTION_HINT}."
        )
    return value
