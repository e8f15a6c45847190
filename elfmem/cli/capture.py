"""``remember``, ``edit``, ``forget``, ``undo``: the writes, one commit each."""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING

import click

from elfmem.cli.output import emit, guarded, json_option, read_stdin, run
from elfmem.cli.progress import progress_bar
from elfmem.errors import ElfmemError, InvalidInput, SecretRefused

if TYPE_CHECKING:
    from elfmem.api import MemorySystem
    from elfmem.progress import Progress
    from elfmem.rhythms.capture import Capture
    from elfmem.rhythms.results import BatchResult


def _tags(values: tuple[str, ...]) -> list[str]:
    return [t for v in values for t in v.replace(",", " ").split()]


def _read_batch(path: str, lines: list[int] | None = None) -> list[Capture]:
    """The file's records, each checked field by field and named by its line in any error;
    ``lines`` collects each record's line."""
    from elfmem.rhythms.capture import capture_from  # the store and index: only for a batch

    stream = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    name = "stdin" if path == "-" else path
    captures: list[Capture] = []
    with stream:
        for n, line in enumerate(stream, 1):
            if not line.strip():
                continue
            if lines is not None:
                lines.append(n)
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(
                    f"{path}:{n}: not a JSON object ({exc.msg}).",
                    'Each line must be one JSON object like {"content": "…", "cue": "…"}.',
                ) from exc
            captures.append(capture_from(record, f"{name} line {n} (record {len(captures) + 1})"))
    return captures


_RECORD_RE = re.compile(r"Record (\d+): ")


def _at_line(exc: InvalidInput, batch: str, lines: list[int]) -> InvalidInput:
    """A refusal of record N, said at the line it came from: blank lines are skipped, so the
    record's number is not where an editor finds it."""
    found = _RECORD_RE.match(exc.message)
    if found is None or not 0 < int(found[1]) <= len(lines):
        return exc
    n = int(found[1])
    where = "stdin" if batch == "-" else batch
    message = f"{where}, line {lines[n - 1]} (record {n}): {exc.message[found.end() :]}"
    recovery = exc.recovery + " Nothing in the batch was written."
    if isinstance(exc, SecretRefused):
        return SecretRefused(message, recovery)
    return InvalidInput(message, recovery) if type(exc) is InvalidInput else exc


@click.command()
@click.argument("content", required=False)
@click.option("--cue", default="", help="When a future agent should recall this (one line).")
@click.option("--tags", "-t", multiple=True, help="Tags, comma or space separated (repeatable).")
@click.option(
    "--category", default="knowledge", show_default=True, help="Category (file it lives in)."
)
@click.option("--pinned", is_flag=True, help="Never archive this block automatically.")
@click.option(
    "--when",
    default="",
    help="When it was said or learned: 2023-05-08, '8 May 2023', yesterday, '3 days ago', "
    "or a period: '8 May 2023 to 9 June 2023'.",
)
@click.option(
    "--supersedes",
    "supersedes",
    multiple=True,
    metavar="ID",
    help="The block this one corrects (repeatable): recorded in the same commit.",
)
@click.option(
    "--batch", type=str, default=None, help="A JSONL file of blocks (or - for stdin): one commit."
)
@click.option(
    "--allow-secret", is_flag=True, help="Store text that looks like a credential anyway."
)
@json_option
@click.pass_context
def remember(
    ctx: click.Context,
    content: str | None,
    cue: str,
    tags: tuple[str, ...],
    category: str,
    pinned: bool,
    when: str,
    supersedes: tuple[str, ...],
    batch: str | None,
    allow_secret: bool,
    json_: bool,
) -> None:
    """Store knowledge in the inbox. Milliseconds, no LLM, one commit.

    --supersedes ID says the new block corrects block ID (an id or a unique prefix; repeat it
    for several). The relation is written into the new block's file in the same commit, so
    recall ranks the correction above ID at once, until outcomes refute it; `undo` removes
    both. An unknown or archived ID, or a text that says the same as ID's, is refused and
    nothing is written.

    With --batch, each line is one JSON object: `content` (a string, required), `cue`,
    `category` and `when` (strings), `tags` (a list of strings, or one string of tags),
    `pinned` (true or false) and `supersedes` (a block id, or a list of them). A field of
    another type is refused, naming its line and field, and nothing is written.

    CONTENT `-` (or none, with text piped in) reads one block's plain-text content from stdin,
    as `--batch -` reads JSONL records from it.
    """
    if batch is not None:
        if supersedes:
            raise click.UsageError(
                "--supersedes names one block's corrections; in a --batch "
                "file give each record its own `supersedes` field."
            )
        lines: list[int] = []
        try:
            records = _read_batch(batch, lines)
        except (OSError, ElfmemError) as exc:
            err = (
                exc
                if isinstance(exc, ElfmemError)
                else InvalidInput(str(exc), "Check the file path.")
            )
            from elfmem.cli.output import fail

            fail(err, json_)
            return

        async def many(system: MemorySystem, bar: Progress | None) -> BatchResult:
            try:
                return await system.remember_many(records, allow_secret, progress=bar)
            except InvalidInput as exc:
                raise _at_line(exc, batch, lines) from None

        with progress_bar(json_) as bar:
            result = run(ctx, json_, lambda s: many(s, bar))
        emit(result, json_)
        return
    if content is None or content == "-":
        if content is None and sys.stdin.isatty():
            raise click.UsageError("Pass CONTENT, or --batch FILE.jsonl, or pipe text on stdin.")
        content = guarded(json_, read_stdin)
    text = content
    result = run(
        ctx,
        json_,
        lambda s: s.remember(
            text,
            cue=cue,
            tags=_tags(tags),
            category=category,
            pinned=pinned,
            allow_secret=allow_secret,
            when=when,
            supersedes=supersedes,
        ),
    )
    # Standard output is the id either way, so `id=$(elfmem remember …)` works for a duplicate too.
    emit(result, json_, result.block_id)
    if result.status == "duplicate" and not json_:
        click.echo(f"Duplicate of {result.block_id}; nothing written.", err=True)


@click.command()
@click.argument("block_id")
@click.argument("content", required=False)
@click.option("--cue", default=None, help="A new cue.")
@click.option("--tags", "-t", multiple=True, help="Replace the tags.")
@click.option(
    "--allow-secret", is_flag=True, help="Store text that looks like a credential anyway."
)
@json_option
@click.pass_context
def edit(
    ctx: click.Context,
    block_id: str,
    content: str | None,
    cue: str | None,
    tags: tuple[str, ...],
    allow_secret: bool,
    json_: bool,
) -> None:
    """Correct a block's content, cue or tags. The id survives."""
    new_tags = _tags(tags) if tags else None
    result = run(ctx, json_, lambda s: s.edit(block_id, content, cue, new_tags, allow_secret))
    emit(result, json_)


@click.command()
@click.argument("block_id")
@json_option
@click.pass_context
def forget(ctx: click.Context, block_id: str, json_: bool) -> None:
    """Archive a block (kept in archive/, back with `undo`). Idempotent."""
    emit(run(ctx, json_, lambda s: s.forget(block_id)), json_)


@click.command()
@click.argument("commit", required=False)
@json_option
@click.pass_context
def undo(ctx: click.Context, commit: str | None, json_: bool) -> None:
    """Revert the last elfmem commit (or COMMIT) with a new commit."""
    emit(run(ctx, json_, lambda s: s.undo(commit)), json_)


COMMANDS = [remember, edit, forget, undo]
