"""Changing the embedding model never leaves recall failing: a local model re-embeds the memory
by itself at the next read; an endpoint model names the one command, and after it recall works."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from elfmem.adapters.embedding import Matrix
from elfmem.adapters.mock import MockEmbedder
from elfmem.adapters.static import StaticEmbedder
from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.errors import ModelMismatch
from tests.conftest import arun

FACTS = [
    "The staging database listens on port 5433 behind the office VPN.",
    "Maria prefers green tea without sugar in the afternoon.",
    "The violin needs new strings before the December concert.",
]


class Endpoint:
    """Stands in for a remote embedding endpoint (no network in tests): its identity is not a
    local one, so a change to it is never applied without asking."""

    def __init__(self) -> None:
        self.inner = StaticEmbedder()
        self.calls = 0

    @property
    def identity(self) -> str:
        return "openai:test-endpoint-256"

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls += 1
        return self.inner.embed(texts)


def _filled(repo: Path) -> MemorySystem:
    system, _ = arun(MemorySystem.init(repo))
    system._core.embedder = MockEmbedder(64)  # the memory is first embedded with another model
    arun(system.remember_many([{"content": c} for c in FACTS]))
    arun(system.dream(no_llm=True))
    assert system._core.db().meta()["model_identity"] == "mock:64"
    return system


def _top(system: MemorySystem, query: str) -> str:
    return arun(system.recall(query, reinforce=False)).blocks[0].content


def test_a_change_to_the_embedded_model_re_embeds_by_itself_with_progress(repo: Path) -> None:
    arun(_filled(repo).close())
    system = arun(MemorySystem.from_config(repo))  # configured: the embedded model
    heard: list[tuple[str, int, int]] = []
    system._core.progress = lambda stage, done, total: heard.append((stage, done, total))
    assert _top(system, "which port does the staging database use") == FACTS[0]
    identity = StaticEmbedder().identity
    assert system._core.db().meta()["model_identity"] == identity
    assert heard and heard[-1][0] == "embed" and heard[-1][1] == heard[-1][2]
    warned = system.take_warnings()
    assert any("mock:64" in w and identity in w and "re-embedded" in w for w in warned)
    arun(system.close())


def test_an_endpoint_model_names_the_one_command_and_recall_works_after_it(repo: Path) -> None:
    system = _filled(repo)
    endpoint = Endpoint()
    system._core.embedder = endpoint
    with pytest.raises(ModelMismatch) as raised:
        arun(system.recall("staging database port", reinforce=False))
    assert "`elfmem migrate-embeddings`" in raised.value.recovery
    assert endpoint.calls == 0  # nothing was sent to the endpoint without asking
    heard: list[tuple[str, int, int]] = []
    done = arun(system.migrate_embeddings(lambda *a: heard.append(a)))
    assert done["model"] == endpoint.identity and done["embedded"] >= len(FACTS)
    assert heard and heard[-1][0] == "embed"
    assert _top(system, "which port does the staging database use") == FACTS[0]
    arun(system.close())


def test_the_cli_says_the_command_with_exit_code_6(repo: Path) -> None:
    system = _filled(repo)
    arun(system.close())
    (repo / ".elfmem" / "config.yaml").write_text(
        (repo / ".elfmem" / "config.yaml").read_text()
        + "\nembeddings:\n  provider: openai\n  model: text-embedding-3-small\n  dimensions: 1536\n"
    )
    result = CliRunner().invoke(cli, ["-C", str(repo), "recall", "staging database", "--json"])
    assert result.exit_code == 6, result.output
    assert "elfmem migrate-embeddings" in result.output
