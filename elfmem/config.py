"""Configuration: ``.elfmem/config.yaml``, committed with the memory. Zero config works.

API keys never live here: ``llm.api_key_env`` names the environment variable that holds one.

Every command reads the file, and importing PyYAML costs more than the rest of reading it, so a
memory keeps what its file parsed to as JSON in the git dir (``CONFIG_CACHE``), keyed by a hash
of the file's text: YAML is loaded only when the text changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from elfmem.errors import ConfigError

CONFIG_PATH = ".elfmem/config.yaml"
CONFIG_CACHE = "config.json"
"""What the config file parsed to, kept in the memory's state folder in the git dir."""


@dataclass(frozen=True)
class ProjectConfig:
    name: str = "my-agent"
    agent_name: str = "elf"


@dataclass(frozen=True)
class LLMConfig:
    model: str = ""
    """Empty: no LLM; dream runs its deterministic path."""
    base_url: str = ""
    api_key_env: str = ""
    temperature: float = 0.0
    max_tokens: int = 512
    timeout: float = 60.0
    """Seconds one attempt may take before the SDK gives up on it."""
    max_retries: int = 2
    """Retries of a transient failure (429, 5xx, timeout) before it is an error; 0 turns off."""
    api_version: str = ""
    """Azure OpenAI's API version; set, it routes to Azure (``model`` is the deployment)."""


@dataclass(frozen=True)
class EmbeddingsConfig:
    provider: str = "embedded"
    model: str = ""
    dimensions: int = 0
    base_url: str = ""
    api_key_env: str = ""
    path: str = ""
    timeout: float = 30.0
    max_retries: int = 2


@dataclass(frozen=True)
class MemoryConfig:
    inbox_threshold: int = 10
    curate_interval_hours: float = 40.0
    edge_score_threshold: float = 0.45
    edge_degree_cap: int = 5
    top_k: int = 5
    search_window_hours: float = 200.0
    penalize_threshold: float = 0.2
    max_content_bytes: int = 256_000
    """Longest block content. Long documents stay whole: the index embeds them as passages
    (block/passages.py) and buckets are bounded by bytes (block/layout.py BUCKET_BYTES)."""


@dataclass(frozen=True)
class ConsolidationConfig:
    max_inbox_per_run: int = 5


@dataclass(frozen=True)
class MCPConfig:
    exports: str = ""
    """The one folder files written for an MCP client go to (``elfmem_export``), relative to the
    repository's root. Empty: ``elfmem/exports`` in the git dir. Never elsewhere in ``.git`` or
    in ``.elfmem`` (sharing/exports.py)."""


@dataclass(frozen=True)
class ElfmemConfig:
    project: ProjectConfig = field(default_factory=ProjectConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    embeddings: EmbeddingsConfig = field(default_factory=EmbeddingsConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    consolidation: ConsolidationConfig = field(default_factory=ConsolidationConfig)
    mcp: MCPConfig = field(default_factory=MCPConfig)
    frames: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def with_agent_name(self, name: str) -> ElfmemConfig:
        return replace(self, project=replace(self.project, agent_name=name))


_SECTIONS: dict[str, type] = {
    "project": ProjectConfig,
    "llm": LLMConfig,
    "embeddings": EmbeddingsConfig,
    "memory": MemoryConfig,
    "consolidation": ConsolidationConfig,
    "mcp": MCPConfig,
}


def _section(name: str, cls: type, raw: object) -> object:
    if raw is None:
        return cls()
    if not isinstance(raw, Mapping):
        raise ConfigError(
            f"config: `{name}` must be a mapping.", f"Fix `{name}:` in {CONFIG_PATH}."
        )
    known = {f.name: f for f in fields(cls)}
    values: dict[str, object] = {}
    for key, value in raw.items():
        if key not in known:
            continue
        default = getattr(cls(), key)
        try:
            values[key] = type(default)(value) if value is not None else default
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"config: `{name}.{key}` = {value!r} is not a {type(default).__name__}.",
                f"Fix `{name}.{key}` in {CONFIG_PATH}.",
            ) from exc
    return cls(**values)


def from_mapping(raw: Mapping[str, Any] | None) -> ElfmemConfig:
    raw = raw or {}
    sections = {name: _section(name, cls, raw.get(name)) for name, cls in _SECTIONS.items()}
    frames = raw.get("frames") or {}
    if not isinstance(frames, Mapping):
        raise ConfigError("config: `frames` must be a mapping.", f"Fix `frames:` in {CONFIG_PATH}.")
    return ElfmemConfig(frames=dict(frames), **sections)  # type: ignore[arg-type]


def load(path: Path, cache: Path | None = None) -> ElfmemConfig:
    """Read a config file; a missing file gives the defaults. ``cache``: see ``loads``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ElfmemConfig()
    return loads(text, str(path), cache)


def loads(text: str, where: str, cache: Path | None = None) -> ElfmemConfig:
    """A config from its YAML text; ``where`` names it in errors (a path, or ``HEAD:<path>``
    for the copy a bare repository commits, since it has no working tree to read). With
    ``cache`` (a file in the git dir), text parsed before is read from there instead."""
    raw = _parsed(text, where, cache)
    if raw is not None and not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected a mapping at the top.", f"Fix {where}.")
    return from_mapping(raw)


CACHE_VERSION = 1


def _parsed(text: str, where: str, cache: Path | None) -> object:
    """``yaml.safe_load(text)``, or the same value from ``cache``."""
    key = f"{CACHE_VERSION}:{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()}"
    if cache is not None:
        try:
            kept = json.loads(cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            kept = None
        if isinstance(kept, dict) and kept.get("key") == key and "value" in kept:
            return kept["value"]
    import yaml  # about 10 ms to import: only when the text is new

    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not valid YAML ({exc}).", f"Fix the YAML in {where}.") from exc
    if cache is not None:
        _keep(cache, key, raw)
    return raw


def _keep(cache: Path, key: str, raw: object) -> None:
    """Save ``raw`` if JSON gives back exactly it (YAML has dates, sets and non-string keys,
    which it does not); a cache that cannot be written is left alone."""
    try:
        encoded = json.dumps({"key": key, "value": raw}, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return
    if repr(json.loads(encoded)["value"]) != repr(raw):
        return
    part = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        part.write_text(encoded, encoding="utf-8")
        os.replace(part, cache)  # readers see the old file or the new one, never half of one
    except OSError:
        with contextlib.suppress(OSError):
            part.unlink(missing_ok=True)


def from_env(environ: Mapping[str, str] | None = None) -> ElfmemConfig:
    """``ELFMEM_<SECTION>__<KEY>`` variables (e.g. ``ELFMEM_PROJECT__AGENT_NAME=Ada``)."""
    env = os.environ if environ is None else environ
    raw: dict[str, dict[str, str]] = {}
    for key, value in env.items():
        if not key.startswith("ELFMEM_") or "__" not in key:
            continue
        section, _, name = key[len("ELFMEM_") :].lower().partition("__")
        raw.setdefault(section, {})[name] = value
    return from_mapping(raw)


def render(config: ElfmemConfig) -> str:
    data = config.to_dict()
    if not data["frames"]:
        data.pop("frames")
    import yaml

    text: str = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    return text
