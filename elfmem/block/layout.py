"""Where a block lives: ``<status folder>/<category>/<YYYY-MM>[-n].md`` under ``.elfmem/memory``.

Files are per category and bounded (docs/decisions/0001-bucket-files.md): a bucket holds at
most ``BUCKET_LIMIT`` blocks and about ``BUCKET_BYTES`` bytes, then continues in
``<YYYY-MM>-2.md``, so a write rewrites one small file, never one per block, and never megabytes
when the blocks are long documents.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MEMORY_DIR = ".elfmem/memory"
"""Repository-relative folder holding every memory file."""

BUCKET_LIMIT = 250
BUCKET_BYTES = 256 * 1024
"""A bucket takes no more blocks once they would carry it past this size; a block larger than this
on its own gets a bucket to itself."""

STATUS_DIRS: dict[str, str] = {"inbox": "log", "active": "notes", "archived": "archive"}
DIR_STATUS: dict[str, str] = {v: k for k, v in STATUS_DIRS.items()}
SELF_FILE = "self.md"
MERGE_ATTRIBUTES_LINE = ".elfmem/memory/** merge=elfmem"
"""The ``.gitattributes`` line that has git merge memory files with elfmem's driver
(``sharing/driver.py``) once the repository's config names it."""

_BUCKET_RE = re.compile(
    r"^(?P<dir>log|notes|archive)/(?P<cls>[a-z0-9][a-z0-9_-]*)/(?P<month>\d{4}-\d{2})(?:-(?P<n>\d+))?\.md$"
)


@dataclass(frozen=True, slots=True)
class BucketKey:
    """One bucket file, named relative to the memory folder."""

    status: str
    cls: str
    month: str
    n: int = 1

    @property
    def relpath(self) -> str:
        suffix = "" if self.n == 1 else f"-{self.n}"
        return f"{STATUS_DIRS[self.status]}/{self.cls}/{self.month}{suffix}.md"

    def next(self) -> BucketKey:
        return BucketKey(self.status, self.cls, self.month, self.n + 1)


def month_of(created: str) -> str:
    """``YYYY-MM`` of an ISO timestamp; blocks with no usable date go to ``0000-00``."""
    if len(created) >= 7 and created[4] == "-" and created[:4].isdigit() and created[5:7].isdigit():
        return created[:7]
    return "0000-00"


def parse_bucket_path(relpath: str) -> BucketKey | None:
    """The bucket a memory-relative path names, or None for files that are not buckets."""
    m = _BUCKET_RE.match(relpath)
    if not m:
        return None
    return BucketKey(DIR_STATUS[m["dir"]], m["cls"], m["month"], int(m["n"] or 1))
