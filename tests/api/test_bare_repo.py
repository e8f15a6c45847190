"""A bare repository has no working tree: its committed ``.elfmem/config.yaml`` is the config."""

from __future__ import annotations

from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.errors import ConfigError
from tests.conftest import arun, git

CONFIG = """project:
  name: ops-memory
  agent_name: Ada
memory:
  inbox_threshold: 3
  top_k: 7
embeddings:
  provider: static
  dimensions: 64
"""


def _bare_clone(repo: Path, tmp_path: Path, config: str) -> Path:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.close())
    (repo / ".elfmem" / "config.yaml").write_text(config)
    (repo / ".elfmem" / "memory" / "self.md").write_text("# Constitution\n\nBe brief.\n")
    git(repo, "commit", "-q", "-a", "-m", "configure the memory")
    bare = tmp_path / "memory.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    return bare


def test_a_bare_repository_reads_the_committed_config(repo: Path, tmp_path: Path) -> None:
    bare = _bare_clone(repo, tmp_path, CONFIG)
    assert not (bare / ".elfmem").exists()

    async def go() -> None:
        system = await MemorySystem.from_config(bare)
        try:
            assert system.config.project.name == "ops-memory"
            assert system.config.project.agent_name == "Ada"
            assert system.config.memory.inbox_threshold == 3
            assert system.config.memory.top_k == 7
            assert system.config.embeddings.dimensions == 64
            result = await system.remember("Bare repositories keep memory without a checkout")
            message = git(bare, "log", "-1", "--format=%an %B")
            assert message.startswith("Ada") and result.block_id
        finally:
            await system.close()

    arun(go())


def test_a_bare_repository_reports_a_broken_committed_config(repo: Path, tmp_path: Path) -> None:
    bare = _bare_clone(repo, tmp_path, "memory: [not, a, mapping\n")
    with pytest.raises(ConfigError) as refused:
        arun(MemorySystem.from_config(bare))
    assert "HEAD:.elfmem/config.yaml" in str(refused.value)


def test_init_in_a_bare_repository_keeps_the_committed_files(repo: Path, tmp_path: Path) -> None:
    bare = _bare_clone(repo, tmp_path, CONFIG)
    before = git(bare, "rev-parse", "HEAD")
    system, result = arun(MemorySystem.init(bare))
    arun(system.close())
    assert system.config.project.agent_name == "Ada"
    assert ".elfmem/config.yaml" not in result.files
    assert git(bare, "show", "HEAD:.elfmem/config.yaml") == CONFIG
    assert git(bare, "show", "HEAD:.elfmem/memory/self.md") == "# Constitution\n\nBe brief.\n"
    assert result.commit_id is None and git(bare, "rev-parse", "HEAD") == before


def test_doctor_in_a_bare_repository_finds_the_committed_config(repo: Path, tmp_path: Path) -> None:
    bare = _bare_clone(repo, tmp_path, CONFIG)

    async def go() -> None:
        system = await MemorySystem.from_config(bare)
        try:
            checks = {c.name: c for c in (await system.doctor()).checks}
            assert checks["config"].ok and checks["memory"].ok
        finally:
            await system.close()

    arun(go())
