"""``peer init | add | remove | list | trust | send | inbox``: peers over git, one API call each."""

from __future__ import annotations

import click

from elfmem.cli.output import emit, json_option, run


@click.group()
def peer() -> None:
    """Other memories this one talks to: ids, trust, and messages through git remotes."""


@peer.command()
@json_option
@click.pass_context
def init(ctx: click.Context, json_: bool) -> None:
    """Record this memory's peer id (a did:key of the key that signs its mail) and print it."""
    emit(run(ctx, json_, lambda s: s.peer_init()), json_)


@peer.command()
@click.argument("name")
@click.option("--id", "peer_id", required=True, help="The peer's id: did:key:z6Mk…")
@click.option("--remote", default="", help="The remote (name, URL or path) the peer reads.")
@click.option("--trust", type=float, default=0.5, show_default=True, help="Prior trust, 0..1.")
@json_option
@click.pass_context
def add(
    ctx: click.Context, name: str, peer_id: str, remote: str, trust: float, json_: bool
) -> None:
    """Register peer NAME (one commit)."""
    emit(run(ctx, json_, lambda s: s.peer_add(name, peer_id, remote, trust)), json_)


@peer.command()
@click.argument("name")
@json_option
@click.pass_context
def remove(ctx: click.Context, name: str, json_: bool) -> None:
    """Unregister peer NAME (one commit); blocks imported from it stay."""
    emit(run(ctx, json_, lambda s: s.peer_remove(name)), json_)


@peer.command(name="list")
@json_option
@click.pass_context
def list_(ctx: click.Context, json_: bool) -> None:
    """This memory's id and the registered peers with set and folded trust."""
    emit(run(ctx, json_, lambda s: s.peer_list()), json_)


@peer.command()
@click.argument("name")
@click.argument("value", type=float, required=False)
@json_option
@click.pass_context
def trust(ctx: click.Context, name: str, value: float | None, json_: bool) -> None:
    """Show NAME's trust, or set its prior trust to VALUE (0..1, one commit)."""
    emit(run(ctx, json_, lambda s: s.peer_trust(name, value)), json_)


@peer.command()
@click.argument("name")
@click.argument("message")
@click.option("--tags", default="", help="Comma- or space-separated tags for the message.")
@json_option
@click.pass_context
def send(ctx: click.Context, name: str, message: str, tags: str, json_: bool) -> None:
    """Send MESSAGE to peer NAME through its remote (signed when a key is available)."""
    tag_list = [t for t in tags.replace(",", " ").split() if t]
    emit(run(ctx, json_, lambda s: s.peer_send(name, message, tag_list)), json_)


@peer.command()
@click.option("--import", "do_import", is_flag=True, help="Import the new messages (one commit).")
@click.option("--status", "counts", is_flag=True, help="Only count new/imported/refused.")
@json_option
@click.pass_context
def inbox(ctx: click.Context, do_import: bool, counts: bool, json_: bool) -> None:
    """Fetch and list messages addressed to this memory; --import takes in the new ones."""
    if counts and do_import:
        raise click.UsageError("--status counts only; run --import on its own.")
    if counts:
        emit(run(ctx, json_, lambda s: s.peer_inbox_status()), json_)
    else:
        emit(run(ctx, json_, lambda s: s.peer_inbox(do_import)), json_)


COMMANDS = [peer]
