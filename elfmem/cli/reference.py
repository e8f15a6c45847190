"""docs/cli.md, rendered from the click commands and the result classes they print.

Usage, help and options come from the commands themselves; each command's ``--json`` keys come
from the result class the ``MemorySystem`` call behind it declares (``SHAPES``, read by
``jsonshape``), so this module names no layer below the API. A test compares the
rendered text with docs/cli.md, so the reference cannot drift from the code. Regenerate with
``elfmem cli-docs -o docs/cli.md``.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import click

from elfmem.api import MemorySystem as M
from elfmem.cli.jsonshape import Key, Shape, first_line, returned, shape_keys
from elfmem.errors import ElfmemError
from elfmem.store.log import CommitInfo  # `log` prints history()'s dicts: CommitInfo.to_dict()

REGENERATE = "elfmem cli-docs -o docs/cli.md"


def _of(method: Callable[..., Any], which: int = 0, **how: Any) -> Shape:
    """The shape of what one ``MemorySystem`` call returns: its declared result class."""
    return Shape(returned(method)[which], **how)


SHAPES: dict[str, tuple[Shape, ...]] = {
    "init": (_of(M.init, plus_emitted=True),),
    "templates": (Shape(M.templates),),
    "remember": (_of(M.remember), _of(M.remember_many, when="with `--batch`")),
    "edit": (_of(M.edit),),
    "forget": (_of(M.forget),),
    "undo": (_of(M.undo),),
    "ls": (_of(M.ls),),
    "inbox": (_of(M.inbox),),
    "show": (_of(M.show),),
    "history": (_of(M.block_history),),
    "ledger": (_of(M.ledger),),
    "log": (Shape(CommitInfo, many=True),),
    "recall": (_of(M.recall),),
    "frame": (_of(M.frame),),
    "dream": (_of(M.dream),),
    "outcome": (_of(M.outcome),),
    "connect": (_of(M.connect),),
    "disconnect": (_of(M.disconnect),),
    "curate": (_of(M.curate),),
    "status": (_of(M.status),),
    "migrate-embeddings": (Shape(M.migrate_embeddings),),
    "index check": (_of(M.index_check),),
    "index status": (_of(M.index_status),),
    "index rebuild": (_of(M.index_rebuild),),
    "index update": (_of(M.index_update),),
    "index parity": (_of(M.index_parity),),
    "doctor": (
        _of(M.doctor),
        _of(M.doctor_frames, when="with `--frames`", many=True),
        _of(M.doctor_secrets, when="with `--secrets`"),
    ),
    "visualise": (_of(M.visualise),),
    "hooks install": (_of(M.hooks_install),),
    "hooks uninstall": (_of(M.hooks_uninstall),),
    "hooks status": (_of(M.hooks_status),),
    "sync": (_of(M.sync),),
    "mode": (_of(M.mode),),
    "review lookalikes": (_of(M.lookalikes),),
    "review resolve": (_of(M.resolve_lookalike),),
    "guide": (Shape(),),
    "agent-docs": (Shape(),),
    "review": (_of(M.review_constitutional),),
    "review accept": (_of(M.accept_amendment),),
    "review list": (_of(M.list_amendments),),
    "review revert": (_of(M.revert_amendment),),
    "review corpus": (_of(M.review_corpus),),
    "mind create": (_of(M.mind_create),),
    "mind predict": (_of(M.mind_predict),),
    "mind list": (_of(M.mind_list),),
    "mind show": (_of(M.mind_show),),
    "mind outcome": (_of(M.mind_outcome),),
    "backup": (_of(M.backup),),
    "restore": (_of(M.restore),),
    "rescue": (_of(M.rescue),),
    "migrate status": (_of(M.migrate_status),),
    "migrate plan": (_of(M.migrate_plan),),
    "migrate apply": (_of(M.migrate_apply),),
    "import-upstream": (_of(M.import_upstream),),
    "peer init": (_of(M.peer_init),),
    "peer add": (_of(M.peer_add),),
    "peer remove": (_of(M.peer_remove),),
    "peer list": (_of(M.peer_list),),
    "peer trust": (_of(M.peer_trust), _of(M.peer_trust, 1, when="without VALUE")),
    "peer send": (_of(M.peer_send),),
    "peer inbox": (_of(M.peer_inbox), _of(M.peer_inbox_status, when="with `--status`")),
    "export": (_of(M.export),),
    "import": (_of(M.import_bundle),),
}
"""What each command prints with ``--json``: the result type its API call returns."""


def commands(group: click.Group) -> Iterator[tuple[str, click.Command]]:
    """Every visible command as (path below ``elfmem``, command), subgroups and their children."""
    load_all = getattr(group, "load_all", None)
    if load_all is not None:  # the root group imports its command modules on first use
        load_all()
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
