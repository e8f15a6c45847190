"""Reading blobs out of trees (edits are made by ``ObjectBatch.edit`` in ``objects.py``)."""

from __future__ import annotations

import pygit2


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
