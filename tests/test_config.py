"""Reading ``.elfmem/config.yaml``: what it parsed to is kept as JSON in the git dir, keyed by the
text, so a command imports PyYAML only when the file changed (docs/startup.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from elfmem import config
from elfmem.errors import ConfigError

TEXT = "project:\n  agent_name: Ada\nmemory:\n  top_k: 7\nframes:\n  mine:\n    top_k: 3\n"


def _without_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)  # ``import yaml`` now fails


def test_text_parsed_once_is_read_from_the_cache_without_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, cache = tmp_path / "config.yaml", tmp_path / "state" / "config.json"
    path.write_text(TEXT)
    first = config.load(path, cache)
    assert first.project.agent_name == "Ada" and first.memory.top_k == 7
    assert cache.exists()
    _without_yaml(monkeypatch)
    assert config.load(path, cache) == first
    path.write_text(TEXT.replace("Ada", "Bo"))  # a changed text is parsed again
    with pytest.raises(ImportError):
        config.load(path, cache)


def test_a_changed_text_replaces_the_cached_value(tmp_path: Path) -> None:
    path, cache = tmp_path / "config.yaml", tmp_path / "config.json"
    path.write_text(TEXT)
    config.load(path, cache)
    path.write_text(TEXT.replace("top_k: 7", "top_k: 9"))
    assert config.load(path, cache).memory.top_k == 9
    assert config.load(path, cache).memory.top_k == 9


@pytest.mark.parametrize(
    "text",
    [
        "project:\n  name: 2026-01-01\n",  # a date: JSON has none
        "frames:\n  1: {top_k: 3}\n",  # a number as a key: JSON makes it a string
        "memory:\n  top_k: 7\n  note: .nan\n",  # NaN is not JSON
    ],
)
def test_values_json_cannot_give_back_exactly_are_not_cached(tmp_path: Path, text: str) -> None:
    path, cache = tmp_path / "config.yaml", tmp_path / "config.json"
    path.write_text(text)
    expected = config.loads(text, "here")
    assert config.load(path, cache) == expected
    assert not cache.exists()


def test_a_damaged_cache_is_ignored_and_replaced(tmp_path: Path) -> None:
    path, cache = tmp_path / "config.yaml", tmp_path / "config.json"
    path.write_text(TEXT)
    cache.write_text('{"key": "1:')
    assert config.load(path, cache).project.agent_name == "Ada"
    assert config.load(path, cache) == config.loads(TEXT, "here")
    assert '"Ada"' in cache.read_text()


def test_broken_yaml_is_an_error_each_time_and_never_cached(tmp_path: Path) -> None:
    path, cache = tmp_path / "config.yaml", tmp_path / "config.json"
    path.write_text("project: [unclosed\n")
    for _ in range(2):
        with pytest.raises(ConfigError, match="not valid YAML"):
            config.load(path, cache)
    assert not cache.exists()


def test_an_unwritable_cache_only_costs_the_parse(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(TEXT)
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert config.load(path, blocker / "config.json").project.agent_name == "Ada"
