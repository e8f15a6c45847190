"""``review`` (constitutional review by default) and ``review accept | list | revert | corpus``.

``review`` is a plain click group so other commands (such as ``lookalikes``) attach with one
``review.add_command`` line. Nothing here changes identity except ``accept`` and ``revert``.
"""

from __future__ import annotations

from typing import IO

import click

from elfmem.cli import lookalikes as lookalikes_mod
from elfmem.cli.output import emit, json_option, run
from elfmem.cli.output import host_analyses as host_analyses_of

_HOST_SHAPE = '{"<block id>": {"text": "the amended principle", "reason": "why"}}'


@click.group(invoke_without_command=True)
@click.option("--no-llm", is_flag=True, help="The deterministic drift report only.")
@click.option(
    "--host-analyses",
    type=click.File("r"),
    default=None,
    help=f"JSON {_HOST_SHAPE}: proposal text from the host agent.",
)
@json_option
@click.pass_context
def review(ctx: click.Context, no_llm: bool, host_analyses: IO[str] | None, json_: bool) -> None:
    """Propose amendments where what was learned contradicts or leaves a constitutional principle
    bare. Changes nothing; accept a proposal with `review accept`."""
    if ctx.invoked_subcommand is not None:
        return
    analyses = host_analyses_of(host_analyses, _HOST_SHAPE, json_)
    emit(run(ctx, json_, lambda s: s.review_constitutional(no_llm, analyses)), json_)


@review.command()
@click.option(
    "--content-file",
    type=click.File("r"),
    default="-",
    help="The amended principle (default: read stdin).",
)
@click.option("--proposal", default=None, help="The proposal id from `elfmem review`.")
@click.option("--block", "block_id", default=None, help="The constitutional block, if no proposal.")
@click.option("--reason", default="", help="Why, for the commit message body.")
@json_option
@click.pass_context
def accept(
    ctx: click.Context,
    content_file: IO[str],
    proposal: str | None,
    block_id: str | None,
    reason: str,
    json_: bool,
) -> None:
    """Apply one amendment to a self/constitutional block as one commit."""
    content = content_file.read()
    emit(run(ctx, json_, lambda s: s.accept_amendment(content, block_id, proposal, reason)), json_)


@review.command(name="list")
@click.option("--limit", type=int, default=20, show_default=True, help="At most this many.")
@json_option
@click.pass_context
def list_(ctx: click.Context, limit: int, json_: bool) -> None:
    """Amendment history from git, newest first (with hand edits of self.md)."""
    emit(run(ctx, json_, lambda s: s.list_amendments(limit)), json_)


@review.command()
@json_option
@click.pass_context
def revert(ctx: click.Context, json_: bool) -> None:
    """Undo the newest standing amendment (a new commit)."""
    emit(run(ctx, json_, lambda s: s.revert_amendment()), json_)


@review.command()
@click.option("--apply", is_flag=True, help="Archive the archive proposals in one commit.")
@json_option
@click.pass_context
def corpus(ctx: click.Context, apply: bool, json_: bool) -> None:
    """Stale blocks as proposals: superseded, refuted, contested, contradicted, old, doubtful."""
    emit(run(ctx, json_, lambda s: s.review_corpus(apply)), json_)


for _command in lookalikes_mod.SUBCOMMANDS:
    review.add_command(_command)

COMMANDS = [review]
