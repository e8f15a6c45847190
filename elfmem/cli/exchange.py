"""``export`` and ``import``: exchange bundles, one API call each.

``import`` takes exactly one source option. ``--from-upstream PATH`` (memories made by upstream
elfmem) belongs to the backup/migration work and is wired in beside ``--from`` and
``--self-merge`` here when it lands.
"""

from __future__ import annotations

from pathlib import Path

import click

from elfmem.cli.output import emit, json_option, run
from elfmem.cli.progress import progress_bar


@click.command()
@click.option(
    "--share",
    type=click.Choice(["public", "peer", "all"]),
    default="peer",
    show_default=True,
    help="public blocks only; public and peer; or everything not private (for --self-merge).",
)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--min-confidence", type=float, default=0.0, show_default=True, help="Leave out weaker blocks."
)
@json_option
@click.pass_context
def export(
    ctx: click.Context, share: str, output: Path, min_confidence: float, json_: bool
) -> None:
    """Write a bundle (JSON Lines) of shareable blocks with provenance and ledger state."""
    emit(run(ctx, json_, lambda s: s.export(share, output, min_confidence)), json_)


@click.command(name="import")
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--from", "from_peer", default=None, help="The peer (name or id) that exported it.")
@click.option("--self-merge", is_flag=True, help="A bundle of this same memory: trust 1.0.")
@click.option(
    "--from-upstream",
    "upstream",
    default=None,
    type=click.Path(exists=True, path_type=Path),
    help="Instead of a bundle: a memory made by upstream elfmem 0.20 (its folder or .db file).",
)
@json_option
@click.pass_context
def import_(
    ctx: click.Context,
    file: Path | None,
    from_peer: str | None,
    self_merge: bool,
    upstream: Path | None,
    json_: bool,
) -> None:
    """Import a bundle in one commit (`elfmem undo` takes it back); re-imports add nothing.

    `elfmem import --from-upstream PATH` brings in a memory made by upstream elfmem instead (the
    same as `elfmem import-upstream PATH`)."""
    if upstream is not None:
        if file is not None or from_peer or self_merge:
            raise click.UsageError("--from-upstream PATH takes no FILE, --from or --self-merge.")
        with progress_bar(json_) as bar:
            result = run(ctx, json_, lambda s: s.import_upstream(upstream, progress=bar))
        emit(result, json_)
        return
    if file is None:
        raise click.UsageError("Give the bundle FILE (or --from-upstream PATH).")
    if bool(from_peer) == self_merge:
        raise click.UsageError("Give exactly one of --from PEER or --self-merge.")
    emit(run(ctx, json_, lambda s: s.import_bundle(file, from_peer, self_merge)), json_)


COMMANDS = [export, import_]
