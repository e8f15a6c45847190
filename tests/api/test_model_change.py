"""Changing the embedding model never leaves recall failing: a local model re-embeds the memory
by itself at the next read; an endpoint model names the one command, and after it recall works."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from elfmem.adapters.embedding import make_embedder
from elfmem.adapters.mock import MockEmbedder
from elfmem.adapters.static import StaticEmbedder
from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.errors import ModelMismatch
from elfmem.rhythms import core as core_mod
from tests.conftest import arun

if TYPE_CHECKING:
    from elfmem.adapters.embedding import Matrix

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
    identity = make_embedder(None).identity
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


def test_a_large_backlog_is_answered_by_words_and_index_update_embeds_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past what a recall embeds itself, it answers from the lexical arm, says how many blocks
    wait and which command embeds them; ``index update`` does, with progress, and then the
    dense arm is back (a question in other words is found again)."""
    monkeypatch.setattr(core_mod, "EMBED_IN_RECALL", 2)
    arun(_filled(repo).close())
    system = arun(MemorySystem.from_config(repo))
    found = arun(system.recall("staging database port", reinforce=False))
    assert found.blocks[0].content == FACTS[0]  # the words still find it
    warned = system.take_warnings()
    assert any("3 blocks are not embedded" in w and "elfmem index update" in w for w in warned)
    assert system._core.db().meta()["model_identity"] == "mock:64"  # nothing re-embedded
    assert arun(system.index_status()).details["not_embedded"] == 3
    doctor = CliRunner().invoke(cli, ["-C", str(repo), "doctor", "--json"])
    names = [c["name"] for c in json.loads(doctor.stdout)["checks"]]
    assert "embedder" in names, (names, doctor.output)
    [embedder] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "embedder"]
    assert "3 blocks wait" in embedder["detail"] and "elfmem index update" in embedder["detail"]
    paraphrase = "what hot drink is liked after lunch"
    assert arun(system.recall(paraphrase, reinforce=False)).blocks == []  # no shared word
    system.take_warnings()
    heard: list[tuple[str, int, int]] = []
    done = arun(system.index_update(lambda *a: heard.append(a)))
    assert done.waiting == 3 and done.model == make_embedder(None).identity
    # progress is heard for texts the embedding cache lacked (another test may have cached them)
    assert all(stage == "embed" for stage, _, _ in heard)
    assert system._core.db().meta()["model_identity"] == done.model
    assert arun(system.index_status()).details["not_embedded"] == 0
    assert arun(system.recall(paraphrase, reinforce=False)).blocks[0].content == FACTS[1]
    assert not any("not embedded" in w for w in system.take_warnings())
    arun(system.close())


def test_index_update_on_the_cli_says_what_it_embedded(repo: Path) -> None:
    arun(_filled(repo).close())
    result = CliRunner().invoke(cli, ["-C", str(repo), "index", "update", "--json"])
    assert result.exit_code == 0, result.output
    assert '"waiting": 3' in result.stdout
    again = CliRunner().invoke(cli, ["-C", str(repo), "index", "update"])
    assert "every block is embedded" in again.stdout
