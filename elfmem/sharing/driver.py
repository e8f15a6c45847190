"""The git merge driver for memory buckets, and its registration in a repository.

Plain ``git pull``, ``merge``, ``rebase`` and ``cherry-pick`` call a merge driver for each file
both sides changed when ``.gitattributes`` names one for it (``merge=elfmem``) and the repository's
config says how to run it (``merge.elfmem.driver``). The driver merges a bucket by block id
(``block/merge.py``) and writes the result over git's ``%A`` file; a file that is not a bucket, or
a side that does not parse, gets git's own text merge, conflict markers included, so a person is
told instead of a block being guessed (docs/merging.md).

The config holds the absolute interpreter elfmem runs in, as the hooks do, so the driver works
without the virtual environment on PATH.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from elfmem.block.layout import MEMORY_DIR, MERGE_ATTRIBUTES_LINE, parse_bucket_path
from elfmem.block.merge import merge_bucket
from elfmem.errors import BlockFormatError
from elfmem.gitprogram import run_git
from elfmem.rhythms.result import Result

DRIVER = "elfmem"
ATTRIBUTES_LINE = MERGE_ATTRIBUTES_LINE
"""Memory files use the driver; ``init`` commits it in ``.gitattributes`` and ``hooks install``
puts it in ``info/attributes`` for memories made before (that file is not committed)."""
DRIVER_NAME = "elfmem: merge memory buckets by block id"


def driver_command(python: str | None = None) -> str:
    """What git runs: this interpreter, this module, and git's placeholders. The same as
    ``git elfmem merge-driver %O %A %B %P``, without loading the whole CLI for every file."""
    exe = shlex.quote(python or sys.executable or "python3")
    return f"{exe} -m elfmem.sharing.driver %O %A %B %P"


@dataclass(frozen=True, slots=True)
class Registration:
    driver: str
    attributes: str
    changed: list[str] = field(default_factory=list)


def register(root: Path, python: str | None = None, attributes: bool = True) -> Registration:
    """Set ``merge.elfmem.name``/``.driver`` in the repository's config and, with
    ``attributes``, add the memory line to ``info/attributes``; idempotent."""
    repo = pygit2.Repository(str(root))
    changed: list[str] = []
    want = {f"merge.{DRIVER}.name": DRIVER_NAME, f"merge.{DRIVER}.driver": driver_command(python)}
    config = repo.config
    for key, value in want.items():
        try:
            current = config[key]
        except KeyError:
            current = None
        if current != value:
            config[key] = value
            changed.append(key)
    info = Path(repo.path) / "info" / "attributes"
    if attributes:
        out = run_git(root, "rev-parse", "--git-path", "info/attributes").decode().strip()
        info = Path(out) if Path(out).is_absolute() else (root / out)
        text = info.read_text("utf-8") if info.exists() else ""
        if ATTRIBUTES_LINE not in text.splitlines():
            info.parent.mkdir(parents=True, exist_ok=True)
            sep = "" if not text or text.endswith("\n") else "\n"
            info.write_text(f"{text}{sep}{ATTRIBUTES_LINE}\n", "utf-8")
            changed.append(str(info))
    return Registration(want[f"merge.{DRIVER}.driver"], str(info), changed)


@dataclass(frozen=True)
class DriverRun(Result):
    """What one driver call did: git's exit status convention (0 merged, 1 conflict left)."""

    path: str
    status: int
    events: list[str] = field(default_factory=list)

    @property
    def summary(self) -> str:
        done = "merged by block id" if self.status == 0 else "left with conflict markers"
        return "\n".join([f"{self.path}: {done}", *self.events])


def run_driver(base: Path, ours: Path, theirs: Path, path: str) -> DriverRun:
    """Merge ``ours`` (git's ``%A``, overwritten with the result), ``base`` and ``theirs``."""
    rel = path.removeprefix(MEMORY_DIR + "/") if path.startswith(MEMORY_DIR + "/") else ""
    if rel and parse_bucket_path(rel) is not None:
        try:
            merged = merge_bucket(
                base.read_bytes() or None, ours.read_bytes(), theirs.read_bytes(), path
            )
        except BlockFormatError as exc:
            status = _text_merge(base, ours, theirs, path)
            return DriverRun(
                path,
                status,
                [
                    f"{exc}; merged as text instead"
                    + (", conflict markers left for a person" if status else "")
                ],
            )
        ours.write_bytes(merged.data)
        return DriverRun(path, 0, merged.events)
    return DriverRun(path, _text_merge(base, ours, theirs, path))


def _text_merge(base: Path, ours: Path, theirs: Path, path: str) -> int:
    """git's own three-way text merge into ``ours``: 0 when clean, else conflicts were left."""
    proc = subprocess.run(
        [
            "git",
            "merge-file",
            "-L",
            "ours",
            "-L",
            "base",
            "-L",
            "theirs",
            "--",
            str(ours),
            str(base),
            str(theirs),
        ],
        capture_output=True,
    )
    return 0 if proc.returncode == 0 else 1


def main(argv: list[str]) -> int:
    """``python -m elfmem.sharing.driver BASE OURS THEIRS PATH``: what the config runs."""
    if len(argv) != 4:
        sys.stderr.write("usage: python -m elfmem.sharing.driver BASE OURS THEIRS PATH\n")
        return 2
    result = run_driver(Path(argv[0]), Path(argv[1]), Path(argv[2]), argv[3])
    for event in result.events:
        sys.stderr.write(f"elfmem: {event}\n")
    return result.status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
