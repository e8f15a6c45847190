"""``mind create | predict | list | show | outcome``: Theory of Mind, one API call each."""

from __future__ import annotations

import click

from elfmem.cli.output import emit, json_option, run


@click.group()
def mind() -> None:
    """Models of other minds, kept honest by falsifiable predictions."""


@mind.command()
@click.argument("name")
@click.argument("content")
@click.option("--cue", default="", help="When to recall this mind (default: reasoning about NAME).")
@json_option
@click.pass_context
def create(ctx: click.Context, name: str, content: str, cue: str, json_: bool) -> None:
    """Create a mind block (tag mind/NAME) modelling another agent, person or system."""
    emit(run(ctx, json_, lambda s: s.mind_create(name, content, cue)), json_)


@mind.command()
@click.argument("mind_name", metavar="MIND")
@click.argument("content")
@click.option("--cue", default="", help="When the prediction should come back to mind.")
@json_option
@click.pass_context
def predict(ctx: click.Context, mind_name: str, content: str, cue: str, json_: bool) -> None:
    """Attach a falsifiable prediction to MIND (a name or block id)."""
    emit(run(ctx, json_, lambda s: s.mind_predict(mind_name, content, cue)), json_)


@mind.command(name="list")
@json_option
@click.pass_context
def list_(ctx: click.Context, json_: bool) -> None:
    """Every active mind with hits/closed predictions and its confidence."""
    emit(run(ctx, json_, lambda s: s.mind_list()), json_)


@mind.command()
@click.argument("mind_name", metavar="MIND")
@json_option
@click.pass_context
def show(ctx: click.Context, mind_name: str, json_: bool) -> None:
    """One mind with all its predictions."""
    emit(run(ctx, json_, lambda s: s.mind_show(mind_name)), json_)


@mind.command()
@click.argument("prediction_id")
@click.argument("result", type=click.Choice(["hit", "miss"]))
@click.option("--note", default="", help="What happened, for the commit message body.")
@json_option
@click.pass_context
def outcome(ctx: click.Context, prediction_id: str, result: str, note: str, json_: bool) -> None:
    """Close a prediction as a hit or a miss; the mind's confidence follows."""
    emit(run(ctx, json_, lambda s: s.mind_outcome(prediction_id, result == "hit", note)), json_)


COMMANDS = [mind]
