"""The git program, run as a subprocess in a work tree.

The pre-commit check and the merge driver ask git itself where things are (``rev-parse
--git-path``) and what it has staged, because only the git binary knows the ``GIT_INDEX_FILE``
and the worktree a hook runs in. Kept below every layer so the pre-commit check can use it without
loading libgit2 (the store's import).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from elfmem.errors import RepoStateError


def run_git(cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """Stdout of the git binary run in ``cwd``, inheriting the hook's GIT_* environment."""
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True)
    except FileNotFoundError as exc:
        raise RepoStateError(
            "The `git` program is not on PATH; git hooks need it.",
            "Install git (or fix PATH), then run the command again.",
        ) from exc
    if proc.returncode != 0:
        raise RepoStateError(
            f"`git {' '.join(args[:2])}` failed: {proc.stderr.decode(errors='replace').strip()}",
            "Run it from inside the repository's work tree (`git status` should work there).",
        )
    return proc.stdout
