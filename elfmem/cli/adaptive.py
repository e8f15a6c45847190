"""``outcome``, ``connect``, ``disconnect``, ``curate``, ``status``, ``migrate-embeddings``."""

from __future__ import annotations

import click

from elfmem.cli.output import emit, json_option, run
from elfmem.cli.progress import progress_bar


@click.command()
@click.argument("block_ids", nargs=-1, required=True)
@click.argument("signal", type=float)
@click.option(
    "--weight",
    type=float,
    default=1.0,
    show_default=True,
    help="How many observations this signal counts as.",
)
@click.option(
    "--source", default="cli", show_default=True, help="Where the ground truth came from."
)
@click.option("--allow-constitutional", is_flag=True, help="Also score self/constitutional blocks.")
@json_option
@click.pass_context
def outcome(
    ctx: click.Context,
    block_ids: tuple[str, ...],
    signal: float,
    weight: float,
    source: str,
    allow_constitutional: bool,
    json_: bool,
) -> None:
    """Fold a 0.0-1.0 ground-truth SIGNAL into the confidence of BLOCK_IDS."""
    result = run(
        ctx,
        json_,
        lambda s: s.outcome(list(block_ids), signal, weight, source, allow_constitutional),
    )
    emit(result, json_)
    if result.recovery and not json_:  # a skip the caller can fix is said where it is seen
        inbox = [s["id"] for s in result.skipped if s["reason"] == "pending_inbox"]
        click.echo(
            f"Skipped {', '.join(inbox)}: still in the inbox — run `elfmem dream`, then send "
            "the outcome again.",
            err=True,
        )


@click.command()
@click.argument("source")
@click.argument("target")
@click.option(
    "--relation",
    default="related",
    show_default=True,
    help="supports, contradicts, refines, derived-from, requires, supersedes, or related.",
)
@json_option
@click.pass_context
def connect(ctx: click.Context, source: str, target: str, relation: str, json_: bool) -> None:
    """Link SOURCE to TARGET (declared relations are written into SOURCE's file and committed)."""
    emit(run(ctx, json_, lambda s: s.connect(source, target, relation)), json_)


@click.command()
@click.argument("source")
@click.argument("target")
@click.option(
    "--relation", default="related", show_default=True, help="Which link to remove (as `connect`)."
)
@json_option
@click.pass_context
def disconnect(ctx: click.Context, source: str, target: str, relation: str, json_: bool) -> None:
    """Remove a link between SOURCE and TARGET."""
    emit(run(ctx, json_, lambda s: s.disconnect(source, target, relation)), json_)


@click.command()
@click.option("--top-k", type=int, default=None, help="How many proven blocks to reinforce.")
@json_option
@click.pass_context
def curate(ctx: click.Context, top_k: int | None, json_: bool) -> None:
    """Archive decayed or refuted blocks, prune weak edges, reinforce the top-K (one commit)."""
    emit(run(ctx, json_, lambda s: s.curate(top_k)), json_)


@click.command()
@json_option
@click.pass_context
def status(ctx: click.Context, json_: bool) -> None:
    """Session, inbox depth, active blocks, Hebbian staging, health and a suggested action."""
    emit(run(ctx, json_, lambda s: s.status()), json_)


@click.command(name="migrate-embeddings")
@json_option
@click.pass_context
def migrate_embeddings(ctx: click.Context, json_: bool) -> None:
    """Re-embed every block with the model now in .elfmem/config.yaml."""
    with progress_bar(json_) as bar:
        result = run(ctx, json_, lambda s: s.migrate_embeddings(bar))
    emit(result, json_, str(result["summary"]))


COMMANDS = [outcome, connect, disconnect, curate, status, migrate_embeddings]
