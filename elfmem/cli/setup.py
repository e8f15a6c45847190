"""``init`` and ``templates``."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import click

from elfmem.cli.output import emit, finish, guarded, json_option, repo_path


def mcp_config_block(root: Path) -> dict[str, object]:
    """The MCP client entry with real paths (docs/mcp.md)."""
    exe = shutil.which("elfmem") or str(Path(sys.executable).with_name("elfmem"))
    return {"mcpServers": {"elfmem": {"command": exe, "args": ["-C", str(root), "serve"]}}}


@click.command()
@click.option(
    "--seed", is_flag=True, help="Add the ten constitutional blocks (idempotent by role)."
)
@click.option("--name", default=None, help="The agent's name (SELF frame says 'You are NAME').")
@click.option("--self", "self_text", default=None, help="Seed a bespoke identity into self.md.")
@click.option(
    "--template", default=None, help="Add a profession's blocks (see `elfmem templates`)."
)
@click.option(
    "--ref",
    "ref",
    default=None,
    metavar="NAME",
    help="Keep memory on its own ref (e.g. elfmem = refs/heads/elfmem), not the checked-out "
    "branch; moves an existing branch-mode memory there.",
)
@json_option
@click.pass_context
def init(
    ctx: click.Context,
    seed: bool,
    name: str | None,
    self_text: str | None,
    template: str | None,
    ref: str | None,
    json_: bool,
) -> None:
    """Set up memory here (creating a git repository if needed), or refresh it."""
    from elfmem.api import MemorySystem

    async def go() -> object:
        system, result = await MemorySystem.init(
            repo_path(ctx), name=name, seed=seed, self_text=self_text, template=template, ref=ref
        )
        await system.close()
        return result

    result = guarded(json_, lambda: finish(go()))
    block = mcp_config_block(Path(result.root))  # type: ignore[attr-defined]
    if json_:
        emit({**result.to_dict(), "mcp_config": block}, True)  # type: ignore[attr-defined]
        return
    click.echo(str(result))
    click.echo("\nAdd this to your MCP client config (e.g. .claude.json):", err=True)
    click.echo(json.dumps(block, indent=2))


@click.command()
@json_option
def templates(json_: bool) -> None:
    """List the profession templates for `init --template`."""
    from elfmem.api import MemorySystem

    items = MemorySystem.templates()
    emit(items, json_, "\n".join(f"  {k:<10} {v}" for k, v in items.items()))


COMMANDS = [init, templates]
