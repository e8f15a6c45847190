"""``serve``: this memory as an MCP server on stdio (stdout carries the protocol, nothing else)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from elfmem.cli.output import guarded, repo_path


@click.command()
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="A config YAML (default: .elfmem/config.yaml in the repository).",
)
@click.option("-v", "--verbose", is_flag=True, help="Log requests to stderr.")
@click.pass_context
def serve(ctx: click.Context, config_path: str | None, verbose: bool) -> None:
    """Serve this memory to an MCP client over stdio (run by the client, not by hand)."""
    import logging

    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO if verbose else logging.WARNING,
        format="elfmem serve: %(levelname)s %(name)s: %(message)s",
    )
    from elfmem.mcp.server import run_stdio

    # Without -C, a config file names its repository (the seed's `serve --config <path>` form).
    path = repo_path(ctx) or (Path(config_path).parent if config_path else None)
    guarded(False, lambda: run_stdio(path, config_path))


COMMANDS = [serve]
