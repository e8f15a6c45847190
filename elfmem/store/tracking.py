"""What plain git fetches for memory, and the remote-tracking refs sync and the hooks read.

``git fetch`` (and so ``git pull``) brings another clone's ledger into
``refs/notes/remotes/<remote>/elfmem``, never into ``refs/notes/elfmem`` itself: a forced fetch
over the local notes ref drops every note not pushed yet. The refspecs are globs
(``refs/notes/elfmem*``) because git fails a fetch whose exact source ref the remote lacks, and a
remote without memory yet must not break anyone's ``git pull``. Nothing here sets
``remote.<name>.push``, so a plain ``git push`` sends what it sent before.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pygit2

from elfmem.block.layout import MEMORY_DIR
from elfmem.store import repo as repo_mod
from elfmem.store.notes import NOTES_REF

NOTES_MERGE_STRATEGY = ("notes.elfmem.mergeStrategy", "cat_sort_uniq")


def remote_key(remote: str) -> str:
    """A remote's name as it may appear in a ref: the name, or a short hash of a URL/path."""
    if "/" in remote or ":" in remote or not pygit2.reference_is_valid_name(f"refs/x/{remote}"):
        return "url-" + hashlib.sha1(remote.encode()).hexdigest()[:12]
    return remote


def notes_tracking(remote: str) -> str:
    return f"refs/notes/remotes/{remote_key(remote)}/elfmem"


def memory_tracking(remote: str, ref: str) -> str:
    """Where another clone's memory ref is kept: ``refs/remotes/<remote>/<branch>`` for a
    branch (so git's default refspec agrees), ``refs/remotes/<remote>/<rest>`` otherwise."""
    rest = ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else ref[5:]
    return f"refs/remotes/{remote_key(remote)}/{rest}"


def notes_refspec(remote: str) -> str:
    return f"+{NOTES_REF}*:{notes_tracking(remote)}*"


def memory_refspec(remote: str, ref: str) -> str:
    return f"+{ref}*:{memory_tracking(remote, ref)}*"


def _fetch_specs(repo: pygit2.Repository, remote: str) -> list[str]:
    try:
        return list(repo.remotes[remote].fetch_refspecs)
    except (KeyError, ValueError, pygit2.GitError):
        return []


def _covered(specs: list[str], ref: str, track: str) -> bool:
    """Does an existing fetch refspec already bring ``ref`` to ``track``?"""
    for spec in specs:
        src, _, dst = spec.lstrip("+").partition(":")
        if "*" in src and "*" in dst:
            pre, _, post = src.partition("*")
            if ref.startswith(pre) and ref.endswith(post):
                middle = ref[len(pre) : len(ref) - len(post)]
                if dst.replace("*", middle, 1) == track:
                    return True
        elif src == ref and dst == track:
            return True
    return False


def configure(repo: pygit2.Repository) -> list[str]:
    """Add the fetch refspecs every configured remote needs; returns the ones added."""
    added: list[str] = []
    ref = repo_mod.configured_ref(repo)
    for remote in repo.remotes:
        name = remote.name or ""
        specs = _fetch_specs(repo, name)
        wanted = [(NOTES_REF, notes_tracking(name), notes_refspec(name))]
        if ref is not None:
            wanted.append((ref, memory_tracking(name, ref), memory_refspec(name, ref)))
        for src, track, spec in wanted:
            if not _covered(specs, src, track):
                repo.remotes.add_fetch(name, spec)
                added.append(f"remote.{name}.fetch {spec}")
    key, value = NOTES_MERGE_STRATEGY
    try:
        present = repo.config[key]
    except (KeyError, pygit2.GitError):
        present = None
    if present is None:
        repo.config[key] = value
    return added


def configured(repo: pygit2.Repository) -> bool:
    """Every remote fetches the notes into its tracking ref already."""
    return all(
        _covered(_fetch_specs(repo, r.name or ""), NOTES_REF, notes_tracking(r.name or ""))
        for r in repo.remotes
    )


def tracking_tips(repo: pygit2.Repository, pattern: str) -> dict[str, str]:
    """``pattern`` with ``{remote}`` filled in for each configured remote → its tip, if any."""
    out: dict[str, str] = {}
    for remote in repo.remotes:
        name = pattern.format(remote=remote.name)
        found = repo.references.get(name)
        if found is not None:
            out[name] = str(found.resolve().target)
    return out


def notes_tracking_tips(repo: pygit2.Repository) -> dict[str, str]:
    return tracking_tips(repo, "refs/notes/remotes/{remote}/elfmem")


class MergedMarks:
    """The tracking tips already merged, kept in the state dir so the check on every command
    is one small file read and a ref lookup per remote."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self.path: Path = repo_mod.state_dir(repo) / "tracking-merged.json"

    def read(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def write(self, marks: dict[str, str]) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(marks, sort_keys=True))
        tmp.replace(self.path)


def adopt_remote_memory(repo: pygit2.Repository, ref: str | None = None) -> str | None:
    """In a fresh clone of a ref-mode memory, find the memory and record ref mode.

    Only when this clone records no mode and its checked-out branch has no ``.elfmem``: a local
    ``ref`` (default ``refs/heads/elfmem``) with memory, else a remote's
    ``refs/remotes/<r>/<name>`` (a plain ``git clone`` fetches it), which then becomes the
    local ref. Returns the ref adopted."""
    if repo_mod.configured_ref(repo) is not None or repo.is_bare:
        return None
    head = repo_mod.head_commit(repo)
    if head is not None and ".elfmem" in head.tree:
        return None
    ref = ref or repo_mod.DEFAULT_MEMORY_REF
    local = repo.references.get(ref)
    candidates = [local] if local is not None else []
    candidates += [
        found
        for remote in repo.remotes
        if (found := repo.references.get(memory_tracking(remote.name or "", ref))) is not None
    ]
    for found in candidates:
        commit = repo.get(found.resolve().target)
        if isinstance(commit, pygit2.Commit) and repo_mod.memory_tree(commit) is not None:
            if local is None:
                repo.create_reference_direct(ref, commit.id, False, message="elfmem: adopt memory")
            repo_mod.set_memory_ref(repo, ref)
            return ref
    return None


def has_memory(commit: pygit2.Commit | None) -> bool:
    return commit is not None and MEMORY_DIR.split("/")[0] in commit.tree
