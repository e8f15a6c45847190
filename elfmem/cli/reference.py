"""docs/cli.md, rendered from the click commands and the result classes they print.

Usage, help and options come from the commands themselves; each command's ``--json`` keys come
from the result type declared for it in ``SHAPES`` (read by ``jsonshape``). A test compares the
rendered text with docs/cli.md, so the reference cannot drift from the code. Regenerate with
``elfmem cli-docs -o docs/cli.md``.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator

import click

from elfmem.api import MemorySystem
from elfmem.care import maintenance
from elfmem.care.doctor import DoctorResult
from elfmem.care.hooks import HooksReport
from elfmem.care.rescue import RescueResult
from elfmem.care.secretaudit import SecretAudit
from elfmem.care.status import StatusResult
from elfmem.care.visualise import VisualiseResult
from elfmem.cli.jsonshape import Key, Shape, first_line, shape_keys
from elfmem.errors import ElfmemError
from elfmem.identity.amendments import AmendmentHistory, AmendResult
from elfmem.identity.corpus import CorpusReview
from elfmem.identity.minds import MindList, MindResult, MindStats
from elfmem.identity.review import ReviewResult
from elfmem.identity.setup import InitResult
from elfmem.retrieval.result import FrameResult
from elfmem.rhythms.curate import CurateResult
from elfmem.rhythms.dream import DreamResult
from elfmem.rhythms.feedback import OutcomeResult
from elfmem.rhythms.graph import ConnectResult
from elfmem.rhythms.lookalikes import LookalikesResult, ResolveResult
from elfmem.rhythms.results import (
    BatchResult,
    BlockInfo,
    ChangeResult,
    HistoryResult,
    LedgerResult,
    ListResult,
    RememberResult,
    UndoResult,
)
from elfmem.sharing.backup import BackupResult, RestoreResult
from elfmem.sharing.migrate import MigrateResult
from elfmem.sharing.mode import ModeResult
from elfmem.sharing.results import (
    ExportResult,
    ImportResult,
    InboxResult,
    InboxStatus,
    PeerChange,
    PeerIdentity,
    PeerInfo,
    PeerList,
    SendResult,
)
from elfmem.sharing.sync import SyncResult
from elfmem.sharing.upstream import UpstreamImportResult
from elfmem.store import CommitInfo

REGENERATE = "elfmem cli-docs -o docs/cli.md"

SHAPES: dict[str, tuple[Shape, ...]] = {
    "init": (Shape(InitResult, plus_emitted=True),),
    "templates": (Shape(MemorySystem.templates),),
    "remember": (Shape(RememberResult), Shape(BatchResult, when="with `--batch`")),
    "edit": (Shape(ChangeResult),),
    "forget": (Shape(ChangeResult),),
    "undo": (Shape(UndoResult),),
    "ls": (Shape(ListResult),),
    "inbox": (Shape(ListResult),),
    "show": (Shape(BlockInfo),),
    "history": (Shape(HistoryResult),),
    "ledger": (Shape(LedgerResult),),
    "log": (Shape(CommitInfo, many=True),),
    "recall": (Shape(FrameResult),),
    "frame": (Shape(FrameResult),),
    "dream": (Shape(DreamResult),),
    "outcome": (Shape(OutcomeResult),),
    "connect": (Shape(ConnectResult),),
    "disconnect": (Shape(ConnectResult),),
    "curate": (Shape(CurateResult),),
    "status": (Shape(StatusResult),),
    "migrate-embeddings": (Shape(MemorySystem.migrate_embeddings),),
    "index check": (Shape(maintenance.CheckResult),),
    "index status": (Shape(maintenance.IndexStatus),),
    "index rebuild": (Shape(maintenance.RebuildResult),),
    "index update": (Shape(maintenance.UpdateResult),),
    "index parity": (Shape(maintenance.ParityResult),),
    "doctor": (
        Shape(DoctorResult),
        Shape(FrameResult, when="with `--frames`", many=True),
        Shape(SecretAudit, when="with `--secrets`"),
    ),
    "visualise": (Shape(VisualiseResult),),
    "hooks install": (Shape(HooksReport),),
    "hooks uninstall": (Shape(HooksReport),),
    "hooks status": (Shape(HooksReport),),
    "sync": (Shape(SyncResult),),
    "mode": (Shape(ModeResult),),
    "review lookalikes": (Shape(LookalikesResult),),
    "review resolve": (Shape(ResolveResult),),
    "guide": (Shape(),),
    "agent-docs": (Shape(),),
    "review": (Shape(ReviewResult),),
    "review accept": (Shape(AmendResult),),
    "review list": (Shape(AmendmentHistory),),
    "review revert": (Shape(UndoResult),),
    "review corpus": (Shape(CorpusReview),),
    "mind create": (Shape(MindResult),),
    "mind predict": (Shape(MindResult),),
    "mind list": (Shape(MindList),),
    "mind show": (Shape(MindStats),),
    "mind outcome": (Shape(MindResult),),
    "backup": (Shape(BackupResult),),
    "restore": (Shape(RestoreResult),),
    "rescue": (Shape(RescueResult),),
    "migrate status": (Shape(MigrateResult),),
    "migrate plan": (Shape(MigrateResult),),
    "migrate apply": (Shape(MigrateResult),),
    "import-upstream": (Shape(UpstreamImportResult),),
    "peer init": (Shape(PeerIdentity),),
    "peer add": (Shape(PeerChange),),
    "peer remove": (Shape(PeerChange),),
    "peer list": (Shape(PeerList),),
    "peer trust": (Shape(PeerChange), Shape(PeerInfo, when="without VALUE")),
    "peer send": (Shape(SendResult),),
    "peer inbox": (Shape(InboxResult), Shape(InboxStatus, when="with `--status`")),
    "export": (Shape(ExportResult),),
    "import": (Shape(ImportResult),),
}
"""What each command prints with ``--json``: the result type its API call returns."""


def commands(group: click.Group) -> Iterator[tuple[str, click.Command]]:
    """Every visible command as (path below ``elfmem``, command), subgroups and their children."""
    for name, command in group.commands.items():
        if command.hidden:
            continue
        yield name, command
        if isinstance(command, click.Group):
            yield from ((f"{name} {sub}", c) for sub, c in commands(command))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _type(param: click.Parameter) -> str:
    kind = param.type
    if isinstance(param, click.Option) and param.is_flag:
        text = "flag"
    elif isinstance(kind, click.Choice):
        text = " \\| ".join(f"`{c}`" for c in kind.choices)
    elif isinstance(kind, click.IntRange):
        text = f"integer ≥ {kind.min}" if kind.min is not None else "integer"
    else:
        text = {"float": "number", "filename": "file"}.get(kind.name, kind.name)
    if param.multiple:
        text += ", repeatable"
    default = param.default
    shown = isinstance(default, (str, int, float)) and not isinstance(default, bool)
    if shown and default != "":
        text += f" (default `{default}`)"
    return text


def _options(command: click.Command) -> list[str]:
    rows = []
    for param in command.params:
        names = ", ".join(f"`{n}`" for n in [*param.opts, *param.secondary_opts])
        if isinstance(param, click.Option):
            help_ = _cell(param.help or "")
        else:
            names = f"`{param.human_readable_name}`"
            help_ = "argument" + ("" if param.required else ", optional")
        rows.append(f"| {names} | {_type(param)} | {help_} |")
    if not rows:
        return []
    return ["| Parameter | Type | Meaning |", "| --- | --- | --- |", *rows, ""]


def _key_table(keys: list[Key]) -> list[str]:
    rows = [
        f"| `{k.name}` | {f'`{_cell(k.type)}`' if k.type else ''} | {_cell(k.meaning)} |"
        for k in keys
    ]
    return ["| Key | Type | Meaning |", "| --- | --- | --- |", *rows, ""]


def _class_doc(source: type) -> str:
    """The class's own docstring (a dataclass without one has a generated signature instead)."""
    node = ast.parse(inspect.getsource(source)).body[0]
    doc = ast.get_docstring(node) if isinstance(node, ast.ClassDef) else None
    return first_line(doc)


def _shape_lines(shape: Shape, command: click.Command) -> list[str]:
    assert command.callback is not None
    keys = shape_keys(shape, command.callback)
    source = shape.source
    when = f"{shape.when[0].upper()}{shape.when[1:]}, an" if shape.when else "An"
    what = "array of objects" if shape.many else "object"
    if isinstance(source, type):
        doc = _class_doc(source)
        head = f"{when} {what} (`{source.__name__}`){': ' + doc if doc else '.'}"
    elif source is not None and not keys:
        return [f"{when} {what}: {first_line(source.__doc__)}", ""]
    else:
        head = f"{when} {what} with these keys:"
    return [head, "", *_key_table(keys)]


def _json_section(path: str, command: click.Command) -> list[str]:
    has_json = any(p.name == "json_" for p in command.params)
    if isinstance(command, click.Group):
        return []
    if not has_json:
        return ["No `--json` output.", ""]
    shapes = SHAPES.get(path)
    if shapes is None:
        raise ElfmemError(
            f"`elfmem {path}` has --json but no entry in SHAPES.",
            "Add the result type it prints to SHAPES in elfmem/cli/reference.py, then "
            + REGENERATE,
        )
    lines = ["**JSON output** (`--json`):", ""]
    for shape in shapes:
        lines += _shape_lines(shape, command)
    return lines


def _section(path: str, command: click.Command, root: click.Context) -> list[str]:
    parent = root
    for part in path.split()[:-1]:
        group = parent.command
        assert isinstance(group, click.Group)
        parent = click.Context(group.commands[part], info_name=part, parent=parent)
    ctx = click.Context(command, info_name=path.split()[-1], parent=parent)
    usage = " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])
    lines = [f"## elfmem {path}", "", "```", usage, "```", ""]
    help_ = inspect.cleandoc((command.help or "").split("\f")[0])
    lines += [click.unstyle(help_), ""]
    if isinstance(command, click.Group):
        subs = [
            f"- [{path} {n}](#elfmem-{path}-{n})"
            for n, c in command.commands.items()
            if not c.hidden
        ]
        return [*lines, "Subcommands:", "", *subs, ""]
    return lines + _options(command) + _json_section(path, command)


def render_reference(group: click.Group) -> str:
    """The whole of docs/cli.md for ``group``: the ``elfmem`` command (``elfmem.cli.cli``), which
    the caller passes so this module, imported by one of its commands, never imports it back."""
    unknown = sorted(set(SHAPES) - {p for p, _ in commands(group)})
    if unknown:
        raise ElfmemError(
            f"SHAPES names commands that do not exist: {', '.join(unknown)}.",
            "Remove them from SHAPES in elfmem/cli/reference.py.",
        )
    root = click.Context(group, info_name="elfmem")
    error = Shape(ElfmemError.to_dict)
    lines = [
        "# elfmem command reference",
        "",
        f"Generated from the commands by `{REGENERATE}`; a test fails when this file and the",
        "commands disagree, so edit the commands (their help and result types), not this file.",
        "",
        "Data goes to stdout (text, or JSON with `--json`); messages and progress bars go to",
        "stderr. On failure a command exits non-zero and, with `--json`, prints on stdout:",
        "",
        *_key_table(shape_keys(error)),
        "## Global options",
        "",
        *_options(group)[:-1],
        "| `-h`, `--help` | flag | Show a command's help and exit. |",
        "",
        "## Commands",
        "",
    ]
    visible = list(commands(group))
    lines += [
        f"- [{p}](#elfmem-{p.replace(' ', '-')}) — {_cell(c.get_short_help_str(200))}"
        for p, c in visible
    ]
    lines.append("")
    for path, command in visible:
        lines += _section(path, command, root)
    return "\n".join(lines).rstrip("\n") + "\n"
