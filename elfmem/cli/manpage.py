"""The manual page (roff, section 1), rendered from the click commands' own help.

``git elfmem --help`` makes git run ``man git-elfmem``, and people type ``man elfmem``; both
pages are this text, installed with the package into ``share/man/man1`` (pyproject data-files)
where ``man`` finds it through the venv's ``bin`` on PATH. A test compares the checked-in copies
with this rendering, so the page cannot drift from the commands. Regenerate both with
``python -m elfmem.cli.manpage -o man/man1``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from elfmem import __version__
from elfmem.cli.reference import commands

REGENERATE = "python -m elfmem.cli.manpage -o man/man1"
PAGES = ("elfmem", "git-elfmem")
"""One page per name a person may ask ``man`` for; the same text, each under its own name."""

_DESCRIPTION = (
    "elfmem keeps an agent's long-term memory inside a git repository: a folder of Markdown "
    "blocks a person can read, edit, diff and commit. Every write is a commit, undo is a revert, "
    "the history of use lives in git notes (refs/notes/elfmem), and the search index is derived "
    "from the tree and may be deleted at any time.",
    "The same program is installed as elfmem and git-elfmem, so git elfmem works too. Every "
    "command that prints a result takes --json; errors print Error: and Recovery: on stderr and "
    "exit non-zero. Wherever a block id is taken, any unique prefix of at least four characters "
    "of it will do, as with git's commit ids.",
)
_COMPLETION = (
    ("bash", 'eval "$(_ELFMEM_COMPLETE=bash_source elfmem)"', "~/.bashrc"),
    ("zsh", 'eval "$(_ELFMEM_COMPLETE=zsh_source elfmem)"', "~/.zshrc"),
    ("fish", "_ELFMEM_COMPLETE=fish_source elfmem | source", "~/.config/fish/config.fish"),
)


def escape(text: str) -> str:
    """Text as roff prints it literally: backslashes and hyphens escaped, no line read as a
    request (a leading dot or quote)."""
    out = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(
        "\\&" + line if line.startswith((".", "'")) else line for line in out.split("\n")
    )


def _paragraphs(text: str) -> list[str]:
    """Help text as roff paragraphs: click's own ``\\b`` (keep as is) blocks become no-fill."""
    out: list[str] = []
    for block in text.strip().split("\n\n"):
        lines = block.split("\n")
        if lines[0].strip() == "\b":
            out += [".nf", *(escape(line) for line in lines[1:]), ".fi"]
        else:
            out += [".PP", escape(" ".join(block.split()))]
    return out


def _options(ctx: click.Context, command: click.Command) -> list[str]:
    lines: list[str] = []
    help_option = command.get_help_option(ctx)
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None or isinstance(param, click.Argument):  # the usage line names these
            continue
        if param is help_option:  # click caches it per command, as the first context named it
            continue
        names, help_ = record
        lines += [".TP", f"\\fB{escape(names)}\\fR", escape(" ".join(help_.split()) or "-")]
    return lines


def runs_alone(command: click.Command) -> bool:
    """A command a person can run: not a group, or a group that does something by itself."""
    return not isinstance(command, click.Group) or command.invoke_without_command


def _command(root: click.Context, path: str, command: click.Command) -> list[str]:
    ctx = click.Context(command, info_name=f"elfmem {path}", parent=root)
    usage = " ".join(command.collect_usage_pieces(ctx))
    lines = [".SS " + escape(path), f"\\fBelfmem {escape(path)}\\fR {escape(usage)}"]
    lines += _paragraphs(command.help or "")
    return lines + _options(ctx, command)


def render_manpage(group: click.Group | None = None, name: str = "elfmem") -> str:
    """The whole page for ``name`` (``elfmem`` or ``git-elfmem``), from every visible command."""
    if group is None:
        from elfmem.cli import cli

        group = cli
    root = click.Context(group, info_name="elfmem", **group.context_settings)
    invoked = "git elfmem" if name == "git-elfmem" else "elfmem"
    lines = [
        f'.TH {escape(name.upper())} 1 "" "elfmem {__version__}" "elfmem manual"',
        ".SH NAME",
        f"{escape(name)} \\- {escape(group.help or '')}",
        ".SH SYNOPSIS",
        f"\\fB{escape(invoked)}\\fR [\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]...",
        ".SH DESCRIPTION",
        *(line for text in _DESCRIPTION for line in (".PP", escape(text))),
        ".SH OPTIONS",
        *_options(root, group),
        ".TP",
        f"\\fB{escape(', '.join(root.help_option_names))}\\fR",
        "Show the help of elfmem, or of the command it follows, and exit.",
        ".SH COMMANDS",
    ]
    for path, command in commands(group):
        if runs_alone(command):
            lines += _command(root, path, command)
    lines += [".SH SHELL COMPLETION", ".PP", "Add the line for your shell to its start-up file:"]
    for shell, line, where in _COMPLETION:
        lines += [".TP", f"\\fB{shell}\\fR ({escape(where)})", f"\\f(CW{escape(line)}\\fR"]
    lines += [
        ".SH SEE ALSO",
        ".BR git (1),",
        ".BR git\\-notes (1);",
        "\\fBelfmem guide\\fR for every operation in full; docs/cli.md for the JSON keys.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    """``-o DIR`` writes ``elfmem.1`` and ``git-elfmem.1`` there; otherwise ``elfmem.1`` to
    stdout."""
    if len(argv) == 2 and argv[0] in ("-o", "--out"):
        out = Path(argv[1])
        out.mkdir(parents=True, exist_ok=True)
        for name in PAGES:
            (out / f"{name}.1").write_text(render_manpage(name=name), encoding="utf-8")
        return
    sys.stdout.write(render_manpage())


if __name__ == "__main__":
    main(sys.argv[1:])
