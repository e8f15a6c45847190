"""Things under ``.elfmem/`` that plain git can commit but elfmem never makes: symbolic links
and the temporary files of a killed write.

A link in place of a memory folder would have every write land wherever it points, outside the
repository too, so a write refuses any path that passes through a link (``refuse_links``) before
anything changes. A temporary file (``.<name>.<pid>.tmp``) is the half-written copy a kill left
beside a file; a person's ``git add -A`` can commit it. Recovery deletes such files only while
git does not track them (deleting a tracked one would leave a ``D`` in ``git status`` for good);
``doctor`` reports both, with the fix.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import pygit2

from elfmem.errors import RepoStateError

ELFMEM_DIR = ".elfmem"
TEMPORARY = re.compile(r"^\..+\.\d+\.tmp$")
"""The name ``worktree.atomic_write`` gives a file before renaming it into place."""


def link_on(workdir: Path, rel: str) -> str | None:
    """The first component of ``rel`` (repository-relative) under ``.elfmem`` that is a
    symbolic link on disk, as a repository-relative path; None when there is none."""
    parts = rel.split("/")
    if parts[0] != ELFMEM_DIR:
        return None
    for depth in range(1, len(parts) + 1):
        here = "/".join(parts[:depth])
        if os.path.islink(workdir / here):
            return here
    return None


def refuse_links(workdir: Path, paths: Iterable[str]) -> None:
    """Stop a write, before it changes anything, if one of its paths passes through a link."""
    for rel in paths:
        link = link_on(workdir, rel)
        if link is not None:
            target = os.readlink(workdir / link)
            raise RepoStateError(
                f"{link} is a symbolic link (to {target}); elfmem does not follow links under "
                f"{ELFMEM_DIR}/, where a write would land outside this memory (perhaps outside "
                "the repository); nothing was written.",
                f"Put the folder back in place of the link: `git rm -q {link} && git checkout "
                f"HEAD~1 -- {link}` if an earlier commit had it, or move the files it points "
                f"at into a folder of that name; commit, then run the command again "
                "(`elfmem doctor` lists every link).",
            )


def links_under(root: Path) -> list[str]:
    """Every symbolic link under ``<root>/.elfmem`` (repository-relative), never followed."""
    base = root / ELFMEM_DIR
    if os.path.islink(base):
        return [ELFMEM_DIR]
    found: list[str] = []
    for folder, dirs, files in os.walk(base, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            if path.is_symlink():
                found.append(path.relative_to(root).as_posix())
    return sorted(found)


def tracked_temporaries(repo: pygit2.Repository) -> list[str]:
    """Temporary files of killed writes that git's index tracks under ``.elfmem``."""
    index = repo.index
    index.read(False)
    return sorted(
        entry.path
        for entry in index
        if entry.path.startswith(f"{ELFMEM_DIR}/")
        and TEMPORARY.match(entry.path.rpartition("/")[2])
    )
