"""``recall``, ``frame`` and ``dream``: retrieval and consolidation."""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING

import click

from elfmem.cli.interrupt import stopping
from elfmem.cli.output import emit, json_option, run
from elfmem.cli.output import host_analyses as host_analyses_of
from elfmem.cli.progress import progress_bar
from elfmem.errors import EXIT_INTERRUPTED

if TYPE_CHECKING:
    from elfmem.api import MemorySystem
    from elfmem.retrieval.result import FrameResult


@click.command()
@click.argument("query")
@click.option(
    "--frame",
    "frame_name",
    default="attention",
    show_default=True,
    help="self, attention, task, simulate, or a custom frame.",
)
@click.option(
    "--top-k", type=int, default=None, help="How many blocks, 1 or more (default: the frame's)."
)
@click.option("--at", default=None, help="Answer from the memory as of this commit (e.g. HEAD~20).")
@json_option
@click.pass_context
def recall(
    ctx: click.Context, query: str, frame_name: str, top_k: int | None, at: str | None, json_: bool
) -> None:
    """Retrieve what bears on QUERY, rendered for prompt injection."""
    empty: list[str] = []

    async def answer(system: MemorySystem) -> FrameResult:
        result = await system.recall(query, frame_name, top_k=top_k, at=at)
        if not result.blocks and at is None:  # nothing matched: is there anything at all?
            state = await system.status()
            if state.health == "empty":
                empty.append(state.suggestion)
        return result

    result = run(ctx, json_, answer)
    emit(result, json_, result.text)
    if empty and not json_:
        click.echo(f"Memory holds no blocks yet. {empty[0]}", err=True)
    elif result.shortfall and not json_:
        click.echo(result.shortfall, err=True)


@click.command()
@click.argument("name")
@click.argument("query", required=False)
@click.option(
    "--top-k", type=int, default=None, help="How many blocks, 1 or more (default: the frame's)."
)
@click.option("--at", default=None, help="Answer from the memory as of this commit.")
@json_option
@click.pass_context
def frame(
    ctx: click.Context, name: str, query: str | None, top_k: int | None, at: str | None, json_: bool
) -> None:
    """Render frame NAME (self needs no QUERY)."""
    result = run(ctx, json_, lambda s: s.frame(name, query, top_k=top_k, at=at))
    emit(result, json_, result.text)


@click.command()
@click.option("--no-llm", is_flag=True, help="Deterministic consolidation (no key needed).")
@click.option(
    "--max",
    "max_blocks",
    type=int,
    default=None,
    help="Blocks per run (default: the whole inbox without an LLM, 5 with one).",
)
@click.option(
    "--host-analyses",
    type=click.File("r"),
    default=None,
    help='JSON {"<id>": {"alignment", "tags", "summary", "revision_of"}} from the host agent.',
)
@click.option(
    "--rescore",
    is_flag=True,
    help="Deep sleep: also re-judge aged active blocks against the current SELF.",
)
@json_option
@click.pass_context
def dream(
    ctx: click.Context,
    no_llm: bool,
    max_blocks: int | None,
    host_analyses: IO[str] | None,
    rescore: bool,
    json_: bool,
) -> None:
    """Consolidate the inbox: embed, dedupe, link look-alikes and related blocks, promote; one
    commit. --rescore also re-judges aged active blocks (additive ledger evidence)."""
    shape = 'one object: {"<block id>": {"alignment": 0.8, "tags": []}}'
    analyses = host_analyses_of(host_analyses, shape, json_)
    with progress_bar(json_) as bar, stopping(bar) as tell:
        result = run(
            ctx,
            json_,
            lambda s: s.dream(
                max_blocks, no_llm=no_llm, host_analyses=analyses, progress=tell, rescore=rescore
            ),
        )
    emit(result, json_)
    if result.interrupted:
        sys.exit(EXIT_INTERRUPTED)  # the result above says what was committed
    if tell.requested.is_set():
        click.echo("elfmem: Ctrl-C came after the last block; the dream finished.", err=True)


COMMANDS = [recall, frame, dream]
