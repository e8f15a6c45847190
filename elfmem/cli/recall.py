"""``recall``, ``frame`` and ``dream``: retrieval and consolidation."""

from __future__ import annotations

import click

from elfmem.cli.output import emit, json_option, run


@click.command()
@click.argument("query")
@click.option("--frame", "frame_name", default="attention", show_default=True,
              help="self, attention, task, simulate, or a custom frame.")
@click.option("--top-k", type=int, default=None, help="How many blocks (default: the frame's).")
@click.option("--at", default=None, help="Answer from the memory as of this commit (e.g. HEAD~20).")
@json_option
@click.pass_context
def recall(ctx: click.Context, query: str, frame_name: str, top_k: int | None, at: str | None,
           json_: bool) -> None:
    """Retrieve what bears on QUERY, rendered for prompt injection."""
    result = run(ctx, json_, lambda s: s.recall(query, frame_name, top_k=top_k, at=at))
    emit(result, json_, result.text)


@click.command()
@click.argument("name")
@click.argument("query", required=False)
@click.option("--top-k", type=int, default=None)
@click.option("--at", default=None, help="Answer from the memory as of this commit.")
@json_option
@click.pass_context
def frame(ctx: click.Context, name: str, query: str | None, top_k: int | None, at: str | None,
          json_: bool) -> None:
    """Render frame NAME (self needs no QUERY)."""
    result = run(ctx, json_, lambda s: s.frame(name, query, top_k=top_k, at=at))
    emit(result, json_, result.text)


@click.command()
@click.option("--no-llm", is_flag=True, help="Deterministic consolidation (no key needed).")
@click.option("--max", "max_blocks", type=int, default=None, help="Blocks per run (default 5).")
@json_option
@click.pass_context
def dream(ctx: click.Context, no_llm: bool, max_blocks: int | None, json_: bool) -> None:
    """Consolidate the inbox: embed, dedupe, link look-alikes, promote; one commit."""
    emit(run(ctx, json_, lambda s: s.dream(max_blocks, no_llm=no_llm)), json_)


COMMANDS = [recall, frame, dream]
