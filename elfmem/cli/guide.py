"""``guide`` and ``agent-docs``: the reference, from the one table in elfmem/guide.py."""

from __future__ import annotations

from pathlib import Path

import click

from elfmem import guide as guide_mod
from elfmem.cli.output import emit, json_option, repo_path


@click.command()
@click.argument("operation", required=False)
@json_option
def guide(operation: str | None, json_: bool) -> None:
    """Every operation, or one in full. Never fails."""
    text = guide_mod.guide(operation)
    emit({"operation": operation, "text": text}, json_, text)


@click.command(name="agent-docs")
@json_option
@click.pass_context
def agent_docs(ctx: click.Context, json_: bool) -> None:
    """Write .elfmem/AGENT.md from the guide table."""
    root = repo_path(ctx) or Path.cwd()
    path = root / ".elfmem" / "AGENT.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(guide_mod.agent_markdown(), encoding="utf-8")
    emit({"path": str(path)}, json_, f"Wrote {path}")


COMMANDS = [guide, agent_docs]
