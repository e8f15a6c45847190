"""Git hooks for people's own git commands: libgit2 runs none, so elfmem installs its own.

pre-commit refuses staged memory files that would not parse, repeat a block id, hold conflict
markers or carry a secret (``staged.py``); post-merge, post-checkout and post-rewrite bring the
derived index up to date; pre-push flushes the ledger spool and notes that a push is under way,
and reference-transaction pushes the notes once that push has moved a remote-tracking ref (so a
dry run or a refused push sends none). A hook already in place is chained,
never replaced. ``git rev-parse --git-path hooks`` names the folder: the one git really runs hooks
from, ``core.hooksPath`` included. Nothing here imports pygit2 or the index at import time, so the
pre-commit path starts fast.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from elfmem.errors import RepoStateError
from elfmem.rhythms.results import Result

__all__ = ["StagedCheck", "check_staged"]

if TYPE_CHECKING:
    from elfmem.care.staged import StagedCheck
    from elfmem.rhythms.core import Core

HOOK_NAMES = (
    "pre-commit",
    "post-merge",
    "post-checkout",
    "post-rewrite",
    "pre-push",
    "reference-transaction",
)
MARKER = b"# elfmem-hook: "
"""The second line of every program elfmem installs: how ``ours`` is told from a person's hook."""
CHAINED_SUFFIX = ".elfmem-chained"

_PROGRAM = """#!/bin/sh
# elfmem-hook: {name}
# Written by `elfmem hooks install`; `elfmem hooks uninstall` removes it and puts back the hook
# that was here before. That hook, kept as {name}.elfmem-chained, runs first with the same
# arguments and standard input, and its exit status is kept.
hook={name}
python=python3
status=0
if [ -x "$0.elfmem-chained" ]; then
    "$0.elfmem-chained" "$@" || status=$?
    case $hook in pre-*) [ "$status" -eq 0 ] || exit "$status" ;; esac
fi
# A checkout of files, or onto the same commit, changes no tree: nothing to reindex.
if [ "$hook" = post-checkout ] && [ $# -ge 3 ] && {{ [ "$3" = 0 ] || [ "$1" = "$2" ]; }}; then
    exit "$status"
fi
if command -v elfmem >/dev/null 2>&1; then
    elfmem hook "$hook" "$@" </dev/null || status=$?
elif "$python" -c 'import elfmem' >/dev/null 2>&1; then
    "$python" -c 'from elfmem.launch import main; main()' hook "$hook" "$@" </dev/null || status=$?
else
    echo "elfmem: not found, so its $hook hook did nothing (run: elfmem hooks uninstall)" >&2
fi
exit "$status"
"""
_STDIN_PROGRAM = """#!/bin/sh
# elfmem-hook: {name}
# Written by `elfmem hooks install`; `elfmem hooks uninstall` removes it and puts back the hook
# that was here before. That hook, kept as {name}.elfmem-chained, runs first with the same
# arguments and standard input, and its exit status is kept.
hook={name}
python=python3
status=0
input=$(cat)
if [ -x "$0.elfmem-chained" ]; then
    printf '%s\\n' "$input" | "$0.elfmem-chained" "$@" || status=$?
    [ "$status" -eq 0 ] || exit "$status"
fi
{guard}if command -v elfmem >/dev/null 2>&1; then
    printf '%s\\n' "$input" | elfmem hook "$hook" "$@" || status=$?
elif "$python" -c 'import elfmem' >/dev/null 2>&1; then
    printf '%s\\n' "$input" |
        "$python" -c 'from elfmem.launch import main; main()' hook "$hook" "$@" || status=$?
else
    echo "elfmem: not found, so its $hook hook did nothing (run: elfmem hooks uninstall)" >&2
fi
exit "$status"
"""
_STDIN_HOOKS = {
    "pre-push": "",
    # Runs on every ref update git makes, so it leaves at once unless a push just moved a
    # remote-tracking ref and a push is pending (never for elfmem's own git calls).
    "reference-transaction": (
        '[ "$1" = committed ] && [ -z "$ELFMEM_GIT" ] || exit "$status"\n'
        'case "$input" in *" refs/remotes/"*) ;; *) exit "$status" ;; esac\n'
        '[ -f "$(git rev-parse --git-path elfmem/push-pending)" ] || exit "$status"\n'
    ),
}
"""Hooks that need what git writes on their standard input; the text is the early exit."""
_PYTHON_LINE = "python=python3\n"


def program(name: str, python: str = "python3") -> bytes:
    """The program installed as hook ``name``; ``python`` runs elfmem when PATH lacks it."""
    if name in _STDIN_HOOKS:
        text = _STDIN_PROGRAM.format(name=name, guard=_STDIN_HOOKS[name])
    else:
        text = _PROGRAM.format(name=name)
    return text.replace(_PYTHON_LINE, f"python={shlex.quote(python)}\n").encode()


# ---- install, uninstall, status --------------------------------------------------------------


@dataclass(frozen=True)
class HookEntry(Result):
    name: str
    state: str
    """``missing``, ``ours``, ``chained`` (ours, running an earlier hook first) or ``foreign``."""
    path: str
    action: str = ""

    @property
    def summary(self) -> str:
        done = f"  [{self.action}]" if self.action else ""
        return f"{self.name:<14} {self.state}{done}"


@dataclass(frozen=True)
class HooksReport(Result):
    hooks_dir: str
    """The folder git runs hooks from (absolute; ``core.hooksPath`` when set)."""
    hooks: list[HookEntry] = field(default_factory=list)
    """One ``{name, state, path, action}`` per hook; ``action``: what this command did to it."""

    @property
    def summary(self) -> str:
        rows = [f"  {h.summary}" for h in self.hooks]
        return "\n".join([f"Hooks folder: {self.hooks_dir}", *rows])


def check_staged(root: Path, paths: Sequence[str] = ()) -> StagedCheck:
    """The pre-commit check of ``staged.py``, loaded on call: it needs the block parser, which
    the hooks that have nothing to do (a file checkout, a push with an empty spool) never load."""
    from elfmem.care.staged import check_staged as check

    return check(root, paths)


def hooks_dir(root: Path) -> Path:
    """Where git runs hooks: ``core.hooksPath`` (relative to the work tree) or ``.git/hooks``."""
    from elfmem.gitprogram import run_git

    out = run_git(root, "rev-parse", "--git-path", "hooks").decode().strip()
    return Path(os.path.abspath(os.path.join(root, out)))


def _is_ours(path: Path) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    with path.open("rb") as f:
        return f.read(512).split(b"\n")[1:2] == [MARKER + path.name.encode()]


def _entry(folder: Path, name: str, action: str = "") -> HookEntry:
    path = folder / name
    if not os.path.lexists(path):
        state = "missing"
    elif not _is_ours(path):
        state = "foreign"
    else:
        state = "chained" if os.path.lexists(folder / (name + CHAINED_SUFFIX)) else "ours"
    return HookEntry(name, state, str(path), action)


def status(root: Path) -> HooksReport:
    folder = hooks_dir(root)
    return HooksReport(str(folder), [_entry(folder, name) for name in HOOK_NAMES])


def _write_program(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.elfmem-tmp")
    tmp.write_bytes(data)
    tmp.chmod(0o755)
    os.replace(tmp, path)


def install(root: Path, python: str | None = None) -> HooksReport:
    """Write elfmem's hooks; a person's hook already there is kept as ``<name>.elfmem-chained``.

    Idempotent: a hook that is already elfmem's is rewritten only when its text differs.
    """
    folder = hooks_dir(root)
    for name in HOOK_NAMES:
        path, chained = folder / name, folder / (name + CHAINED_SUFFIX)
        if os.path.lexists(path) and not _is_ours(path) and os.path.lexists(chained):
            raise RepoStateError(
                f"{path} is not elfmem's, and {chained.name} (an earlier hook elfmem kept) is "
                "there too; installing would have to drop one of them.",
                f"Merge the two into {path} yourself and delete {chained.name}, then run "
                "`elfmem hooks install` again.",
            )
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for name in HOOK_NAMES:
        path = folder / name
        want = program(name, python or sys.executable or "python3")
        if _is_ours(path):
            action = "unchanged" if path.read_bytes() == want else "updated"
        else:
            action = "installed"
            if os.path.lexists(path):
                os.replace(path, folder / (name + CHAINED_SUFFIX))
                action = "chained"
        if action != "unchanged":
            _write_program(path, want)
        entries.append(_entry(folder, name, action))
    return HooksReport(str(folder), entries)


def uninstall(root: Path) -> HooksReport:
    """Remove elfmem's hooks and move each chained hook back, bytes and mode as they were."""
    folder = hooks_dir(root)
    entries = []
    for name in HOOK_NAMES:
        path, chained = folder / name, folder / (name + CHAINED_SUFFIX)
        action = ""
        if _is_ours(path):
            if os.path.lexists(chained):
                os.replace(chained, path)
                action = "restored"
            else:
                path.unlink()
                action = "removed"
        elif os.path.lexists(path):
            action = "not elfmem's, left alone"
        entries.append(_entry(folder, name, action))
    return HooksReport(str(folder), entries)


# ---- after checkout, merge and rewrite; before push ----------------------------------------------


@dataclass(frozen=True)
class ReindexResult(Result):
    mode: str
    """The index sync's mode (``none`` when it was current), or ``skipped`` with no memory here."""
    files_parsed: int = 0
    blocks_added: int = 0
    blocks_removed: int = 0
    tree_oid: str | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def summary(self) -> str:
        if self.mode == "skipped":
            return "No memory and no index here; nothing to do."
        text = (
            f"Index {self.mode}: {self.files_parsed} file(s) parsed, +{self.blocks_added} "
            f"-{self.blocks_removed} blocks."
        )
        if self.errors:
            text += f" {len(self.errors)} file(s) do not parse: run `elfmem index check`."
        return text


def wants_reindex(name: str, args: Sequence[str]) -> bool:
    """post-checkout of files (flag 0) or onto the same commit changes no tree: skip it (the
    installed program makes the same test before it starts Python at all)."""
    if name == "post-checkout":
        return len(args) < 3 or (args[2] != "0" and args[0] != args[1])
    return name in ("post-merge", "post-rewrite")


def reindex(core: Core) -> ReindexResult:
    """Bring the derived index to the checked-out memory: text only, no model is loaded."""
    if not core.index_path.exists() and core.store.memory_tree_oid() is None:
        return ReindexResult("skipped")
    report = core.sync()
    return ReindexResult(
        report.mode,
        report.files_parsed,
        report.blocks_added,
        report.blocks_removed,
        report.tree_oid,
        [str(e) for e in report.errors],
    )


@dataclass(frozen=True)
class FlushResult(Result):
    events: int

    @property
    def summary(self) -> str:
        return f"Flushed {self.events} spooled ledger event(s) to refs/notes/elfmem."


def flush(core: Core) -> FlushResult:
    """Write the spooled ledger events as one notes commit, so a push carries them."""
    return FlushResult(core.store.flush_spool())
