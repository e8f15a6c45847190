"""The guide covers every public MemorySystem operation and never raises."""

from __future__ import annotations

from click.testing import CliRunner

from elfmem.api import MemorySystem
from elfmem.cli import cli
from elfmem.guide import GUIDES, agent_markdown, guide


def test_every_public_operation_has_an_entry() -> None:
    public = {n for n in dir(MemorySystem) if not n.startswith("_")}
    assert public - set(GUIDES) == set()
    assert set(GUIDES) - public == set()


def test_guide_never_raises_and_suggests_the_closest() -> None:
    assert "USE WHEN" in guide("recall")
    assert "Did you mean: remember" in guide("remembr")
    assert "No operation" in guide("zzzz")
    assert "frame" in guide()
    assert "## remember" in agent_markdown()


def test_cli_guide_and_agent_docs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(cli, ["guide", "outcome"])
    assert result.exit_code == 0 and "signal" in result.stdout
    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "agent-docs"])
    assert result.exit_code == 0 and (tmp_path / ".elfmem/AGENT.md").read_text().startswith(
        "# elfmem"
    )
