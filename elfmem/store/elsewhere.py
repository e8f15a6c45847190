"""Where the memory is when the checkout holds none: on another branch, local or fetched.

``git clone`` of a bare repository whose HEAD names ``master``, when the memory went to ``main``,
checks nothing out; a person who switched to a branch made before ``elfmem init`` sees none
either. Both look like a new, empty memory, and ``elfmem init`` would start a second one beside
the real one. This finds the branch that holds it, so every command can say ``git switch``.
"""

from __future__ import annotations

import pygit2

from elfmem.block.layout import MEMORY_DIR
from elfmem.store.repo import head_commit, ref_mode


def memory_elsewhere(repo: pygit2.Repository) -> str | None:
    """The branch to ``git switch`` to when HEAD's commit holds no memory and a branch does
    (``main`` first; a fetched ``origin/main`` is named ``main``, which ``git switch`` makes);
    None when the checkout holds memory, in ref mode, or when no branch holds any."""
    if repo.is_bare or ref_mode(repo):
        return None
    head = head_commit(repo)
    if head is not None and MEMORY_DIR in head.tree:
        return None
    names = [*sorted(repo.branches.local), *sorted(repo.branches.remote)]
    names.sort(key=lambda n: n.rsplit("/", 1)[-1] != "main")  # stable: local before fetched
    for name in names:
        if name.endswith("/HEAD"):
            continue
        try:
            commit = repo.branches[name].peel(pygit2.Commit)
        except (KeyError, pygit2.GitError, ValueError):
            continue
        if MEMORY_DIR in commit.tree:
            return name.split("/", 1)[1] if name in repo.branches.remote else name
    return None
