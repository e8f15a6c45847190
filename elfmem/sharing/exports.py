"""Where a file written for an MCP client may go: one exports folder, and nothing else.

A client is a model, and a confused or hostile one asked ``elfmem_export`` to write over
``.git/config`` (which breaks the repository), a hook (which runs), a memory file or a file outside
the repository. So a client names a file *inside* the exports folder (default ``elfmem/exports``
in the git dir, ``mcp.exports`` in ``.elfmem/config.yaml``); the path may not climb out of it, pass
through a symlink, land elsewhere in the git dir or among memory files, or replace a file unless
the client says ``overwrite``. The command line is not confined: a person writes where they say.
"""

from __future__ import annotations

import os
from pathlib import Path

from elfmem.config import CONFIG_PATH
from elfmem.errors import ConfigError, InvalidInput
from elfmem.rhythms.core import Core

DEFAULT_FOLDER = ("elfmem", "exports")
"""Inside the git dir: never committed, never pushed, and beside elfmem's other local state."""


def exports_folder(core: Core) -> Path:
    """The exports folder, resolved; a configured one inside ``.git`` or ``.elfmem`` is refused."""
    configured = core.config.mcp.exports.strip()
    if not configured:
        return _default(core)
    folder = (core.store.root / Path(configured).expanduser()).resolve()
    if _forbidden(core, folder):
        raise ConfigError(
            f"config: `mcp.exports` ({configured}) is inside the git dir or .elfmem: files a "
            "client asks for would land among git's or memory's own files.",
            f"Set `mcp.exports` in {CONFIG_PATH} to a folder of its own (e.g. exports), or "
            "remove it for the default (elfmem/exports in the git dir).",
        )
    return folder


def client_path(core: Core, output: str, overwrite: bool) -> Path:
    """Where ``output`` (a file name inside the exports folder) is written, its folder made;
    refused when it would leave the folder, pass through a symlink, or replace a file unasked."""
    folder = exports_folder(core)
    target = _inside(folder, output)
    if target is None or _forbidden(core, target):
        raise _outside(output, folder)
    for part in [*reversed(target.parents), target]:
        if part.is_relative_to(folder) and part.is_symlink():
            raise InvalidInput(
                f"`{output}` passes through a symlink in the exports folder; it is not followed.",
                f"Give a plain file name inside the exports folder ({folder}).",
            )
    if target.exists() and not target.is_file():
        raise _outside(output, folder)
    if target.exists() and not overwrite:
        raise InvalidInput(
            f"{target} already exists; it was left as it was.",
            "Pass overwrite: true to replace it, or choose another file name.",
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def _inside(folder: Path, output: str) -> Path | None:
    """``output`` as a path in ``folder``, or None when it is empty or climbs out of it."""
    if not output.strip() or "\0" in output:
        return None
    given = Path(output).expanduser()
    target = Path(os.path.normpath(given if given.is_absolute() else folder / given))
    if target == folder or not target.is_relative_to(folder):
        return None
    return target


def _default(core: Core) -> Path:
    """Named, not resolved: a symlink planted at its place cannot move it into ``.git``."""
    return Path(core.store.repo.path).resolve().joinpath(*DEFAULT_FOLDER)


def _forbidden(core: Core, path: Path) -> bool:
    """In the git dir outside the default exports folder, or among memory files."""
    gitdir = Path(core.store.repo.path).resolve()
    memory = (core.store.root / ".elfmem").resolve()
    in_git = path.is_relative_to(gitdir) and not path.is_relative_to(_default(core))
    return in_git or path.is_relative_to(memory)


def _outside(output: str, folder: Path) -> InvalidInput:
    return InvalidInput(
        f"`{output}` is not a file inside the exports folder; a client's export goes only there.",
        f"Give a file name such as ada.jsonl: it is written to the exports folder ({folder}, "
        f"`mcp.exports` in {CONFIG_PATH}).",
    )
