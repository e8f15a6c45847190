"""Damage a memory file can carry that no single block owns: unresolved git conflicts.

A plain ``git merge`` of two branches that appended to the same bucket, committed with
``git commit -a`` and no hooks, leaves ``<<<<<<<`` / ``=======`` / ``>>>>>>>`` lines (and diff3's
``|||||||``) in the file. Read as Markdown they would become block content, so they are found here
first: the reader serves the blocks outside a region and reports the region with its lines, and a
write refuses the file until a person resolves it. A region needs all three markers in order, so a
body line ``=======`` (a setext underline) or ``>>>>>>>`` alone is never mistaken for one; the
renderer escapes a body line that starts with ``<<<<<<<`` (see docs/format.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from elfmem.errors import BlockFormatError

OPEN_RE = re.compile(r"^<{7}(?: |$)")
BASE_RE = re.compile(r"^\|{7}(?: |$)")
SEP_RE = re.compile(r"^={7}\s*$")
CLOSE_RE = re.compile(r"^>{7}(?: |$)")
_ID_IN_RE = re.compile(r"^<!-- id: ([0-9a-f]{16})\b")


def repair_steps(path: str) -> str:
    """Merge a committed conflicted file again, by block id, as a new commit: unlike a reset to
    before the merge, this drops no commit made since (docs/merging.md runs these verbatim)."""
    where = path or "<file>"
    return (
        f"Let elfmem merge {where} by block id, in a new commit that drops no later commit: "
        "`elfmem hooks install` (it registers the merge driver), then "
        f"`m=$(git log -1 --merges --format=%H -- {where})`, "
        f'`git restore --source="$(git merge-tree --write-tree "$m^1" "$m^2" | head -n 1)" '
        f"-- {where}`, `git add {where} && git commit -m 'memory: merge {where} by block id'`."
    )


def conflict_recovery(path: str) -> str:
    """The fix for a conflict in ``path``: what a person does, since no write may guess it."""
    return (
        f"Resolve the conflict in {path or 'the file'}: keep the blocks you want (each id once) "
        "and delete the `<<<<<<<`, `|||||||`, `=======` and `>>>>>>>` lines (when both sides "
        "only added blocks, deleting those lines keeps both), then `git add` it, commit, and run "
        f"`elfmem index check`. To take one side whole instead: `git checkout --theirs -- {path}` "
        f"(or `--ours`) during the merge; once it is committed, `git checkout HEAD^2 -- {path}` "
        "(or `HEAD^1`, naming the merge commit for HEAD) and commit. While the merge is in "
        "progress, `git merge --abort`, `elfmem hooks install` and the same `git merge` again "
        f"merge it by block id. Once it is committed: {repair_steps(path)}"
    )


@dataclass(frozen=True, slots=True)
class Conflict:
    """One unresolved region: 0-based indexes of its ``<<<<<<<`` and ``>>>>>>>`` lines."""

    open: int
    close: int
    clean_start: bool
    """Every side begins with a block heading, so the block before it ends at the opener."""
    block_ids: tuple[str, ...]
    """Ids of the frontmatter lines inside the region (its blocks, on every side)."""

    def error(self, path: str) -> BlockFormatError:
        ids = ", ".join(self.block_ids) or "none"
        return BlockFormatError(
            f"unresolved git conflict (lines {self.open + 1}-{self.close + 1}); the blocks "
            f"inside it are not served and nothing is written until it is resolved (ids: {ids}); "
            "to have it merged by block id, merge it again with elfmem's driver (`elfmem hooks "
            "install`, then the steps of the recovery)",
            path,
            self.open + 1,
            conflict_recovery(path),
        )


def find_conflicts(lines: list[str]) -> list[Conflict]:
    """Every complete ``<<<<<<<`` … ``=======`` … ``>>>>>>>`` region, in file order."""
    found: list[Conflict] = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("<<<<<<<") and OPEN_RE.match(lines[i]):
            region = _region_from(lines, i)
            if region is not None:
                found.append(region)
                i = region.close
        i += 1
    return found


def _region_from(lines: list[str], start: int) -> Conflict | None:
    sep = close = None
    for j in range(start + 1, len(lines)):
        if sep is None and SEP_RE.match(lines[j]):
            sep = j
        elif sep is not None and CLOSE_RE.match(lines[j]):
            close = j
            break
    if sep is None or close is None:
        return None
    base = next((j for j in range(start + 1, sep) if BASE_RE.match(lines[j])), sep)
    sides = [(start + 1, base), (sep + 1, close)]
    clean = all(_starts_block(lines, a, b) for a, b in sides)
    ids = tuple(m[1] for line in lines[start:close] if (m := _ID_IN_RE.match(line)))
    return Conflict(start, close, clean, ids)


def _starts_block(lines: list[str], first: int, end: int) -> bool:
    """A side is empty, or its first line with text is a ``## `` heading over a frontmatter."""
    for k in range(first, end):
        if lines[k].strip():
            nxt = lines[k + 1] if k + 1 < end else ""
            return lines[k].startswith("## ") and nxt.startswith("<!-- id: ")
    return True
