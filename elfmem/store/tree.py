"""Path-copy tree edits: only the trees along a changed path are rebuilt.

The new tree always starts from the branch tip's tree, never from the user's index, so nothing a
person has staged is swept into a memory commit.
"""

from __future__ import annotations

from collections.abc import Mapping

import pygit2
from pygit2.enums import FileMode


def edit_tree(
    repo: pygit2.Repository,
    base: pygit2.Tree | None,
    changes: Mapping[str, pygit2.Oid | None],
) -> pygit2.Oid | None:
    """Apply ``{path: blob oid or None (delete)}`` to ``base``; None when the result is empty."""
    builder = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
    nested: dict[str, dict[str, pygit2.Oid | None]] = {}
    for path, oid in changes.items():
        head, sep, rest = path.partition("/")
        if sep:
            nested.setdefault(head, {})[rest] = oid
        elif oid is None:
            if builder.get(head) is not None:
                builder.remove(head)
        else:
            builder.insert(head, oid, FileMode.BLOB)
    for name, sub in nested.items():
        current = builder.get(name)
        subtree = repo.get(current.id) if current is not None else None
        new_oid = edit_tree(repo, subtree if isinstance(subtree, pygit2.Tree) else None, sub)
        if new_oid is None:
            if current is not None:
                builder.remove(name)
        else:
            builder.insert(name, new_oid, FileMode.TREE)
    if len(builder) == 0:
        return None
    return builder.write()


def blob_paths(
    repo: pygit2.Repository, tree: pygit2.Tree | None, prefix: str = ""
) -> dict[str, str]:
    """Every blob under ``tree`` as ``{relative path: oid hex}``."""
    out: dict[str, str] = {}
    if tree is None:
        return out
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if entry.type_str == "tree":
            sub = repo.get(entry.id)
            if isinstance(sub, pygit2.Tree):
                out.update(blob_paths(repo, sub, path + "/"))
        elif entry.type_str == "blob":
            out[path] = str(entry.id)
    return out


def blob_at(repo: pygit2.Repository, tree: pygit2.Tree | None, path: str) -> pygit2.Blob | None:
    if tree is None:
        return None
    try:
        entry = tree[path]
    except KeyError:
        return None
    obj = repo.get(entry.id)
    return obj if isinstance(obj, pygit2.Blob) else None
