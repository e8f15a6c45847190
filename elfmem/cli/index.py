"""``index check | status | update | rebuild --to PATH | parity`` and ``doctor --frames``."""

from __future__ import annotations

import sys

import click

from elfmem.cli.output import emit, json_option, run
from elfmem.cli.progress import progress_bar


@click.group()
def index() -> None:
    """The derived search index (SQLite in the git dir; disposable)."""


@index.command()
@json_option
@click.pass_context
def check(ctx: click.Context, json_: bool) -> None:
    """Parse every memory file and report errors with file:line. Touches nothing."""
    result = run(ctx, json_, lambda s: s.index_check())
    emit(result, json_)
    if not result.ok:
        sys.exit(1)


@index.command()
@json_option
@click.pass_context
def status(ctx: click.Context, json_: bool) -> None:
    """Counts, freshness, the tree the index is keyed to, its size."""
    emit(run(ctx, json_, lambda s: s.index_status()), json_)


@index.command()
@json_option
@click.pass_context
def update(ctx: click.Context, json_: bool) -> None:
    """Embed what lacks a vector from the configured model (all of it after a model change)."""
    with progress_bar(json_) as bar:
        result = run(ctx, json_, lambda s: s.index_update(progress=bar))
    emit(result, json_)


@index.command(name="rebuild")
@click.option(
    "--to",
    "to",
    required=True,
    type=click.Path(dir_okay=False),
    help="Where to write the rebuilt index (never the live one).",
)
@json_option
@click.pass_context
def rebuild_cmd(ctx: click.Context, to: str, json_: bool) -> None:
    """Rebuild an index from git and the ledger. Zero LLM calls."""
    with progress_bar(json_) as bar:
        result = run(ctx, json_, lambda s: s.index_rebuild(to, progress=bar))
    emit(result, json_)


@index.command()
@click.option(
    "--probes", type=int, default=20, show_default=True, help="How many queries to compare."
)
@json_option
@click.pass_context
def parity(ctx: click.Context, probes: int, json_: bool) -> None:
    """Compare retrieval in the live index with a throwaway rebuild. Read-only."""
    result = run(ctx, json_, lambda s: s.index_parity(probes))
    emit(result, json_)
    if not result.ok:
        sys.exit(1)


@click.command()
@click.option(
    "--frames", "frames_", is_flag=True, help="Render every frame; show what was dropped and why."
)
@click.option("--resolve", is_flag=True, help="Make one real LLM call to prove the key works.")
@click.option(
    "--secrets",
    "secrets_",
    is_flag=True,
    help="Scan the memory's whole history and notes for credentials; say how to purge them.",
)
@click.option(
    "--query", default="what matters right now", show_default=True, help="Query for --frames."
)
@json_option
@click.pass_context
def doctor(
    ctx: click.Context, frames_: bool, resolve: bool, secrets_: bool, query: str, json_: bool
) -> None:
    """Diagnose setup; each problem with its fix.

    --frames exits non-zero only if a guarantee was dropped; --secrets if history holds one.
    """
    if secrets_:
        audit = run(ctx, json_, lambda s: s.doctor_secrets())
        emit(audit, json_)
        if not audit.ok:
            sys.exit(1)
        return
    if not frames_:
        result = run(ctx, json_, lambda s: s.doctor(resolve))
        emit(result, json_)
        if not result.ok:
            sys.exit(1)
        return
    results = run(ctx, json_, lambda s: s.doctor_frames(query))
    lines = []
    for r in results:
        lines.append(f"== {r.summary}")
        lines += [
            f"   kept    {b.id}  score {b.score:.3f}  {b.content.splitlines()[0][:60]}"
            for b in r.blocks
        ]
        for d in r.dropped:
            mark = ", GUARANTEED" if d["guaranteed"] == "yes" else ""
            lines.append(f"   dropped {d['id']}  ({d['reason']}{mark})")
    emit(results, json_, "\n".join(lines))
    if any(r.guaranteed_dropped for r in results):
        sys.exit(1)


COMMANDS = [index, doctor]
