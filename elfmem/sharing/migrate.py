"""``migrate status | plan | apply``: format changes that need a decision, as one undoable commit.

The memory records its file format as ``format: N`` in ``.elfmem/config.yaml``; a memory with no
record is read as format 1 (the format docs/format.md describes). Each step below moves a memory
from one format to the next one the code reads. The index needs no step here: it is derived,
carries its own schema version and migrates (or rebuilds) itself when opened; ``status`` reports
it. ``plan`` reads only; ``apply`` makes every pending step in one ``migrate`` commit, so
``elfmem undo`` takes it back whole.

Format 0 is upstream elfmem's layout: one file per status and category
(``notes/knowledge.md``) with blocks our parser reads but our buckets do not hold. The step to
format 1 moves those blocks into ``<status>/<category>/<YYYY-MM>.md`` buckets with their ids and
deletes the flat files. What upstream kept outside the files (confidence, outcomes, learned
edges: its SQLite database) comes across with ``elfmem import --from-upstream``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from elfmem.block.layout import DIR_STATUS, MEMORY_DIR, month_of, parse_bucket_path
from elfmem.block.model import Block
from elfmem.block.render import block_bytes, render_block
from elfmem.config import CONFIG_PATH
from elfmem.errors import ConfigError, ConflictError
from elfmem.index import queries
from elfmem.rhythms.core import Core
from elfmem.rhythms.results import Result
from elfmem.store import FileEdit, MemoryView, Plan
from elfmem.store.tree import blob_paths

FORMAT_VERSION = 1
"""The newest memory format this code writes and reads."""
_FLAT_RE = re.compile(r"^(?P<dir>log|notes|archive)/(?P<cls>[a-z0-9][a-z0-9_-]*)\.md$")
_FORMAT_LINE = re.compile(r"^format:[ \t]*\S*[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class Step:
    name: str
    from_version: int
    to_version: int
    description: str
    changes: list[dict[str, Any]] = field(default_factory=list)
    """``{path, action, blocks, sha256_before, sha256_after}`` per file it writes or deletes."""


@dataclass(frozen=True)
class MigrateResult(Result):
    format_version: int
    """The format the memory is in (before ``apply``; after it, the one it reached)."""
    code_version: int = FORMAT_VERSION
    index_schema: int = 0
    """The index's schema version (it migrates itself when opened)."""
    steps: list[Step] = field(default_factory=list)
    applied: bool = False
    commit_id: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def pending(self) -> bool:
        return bool(self.steps) and not self.applied

    @property
    def summary(self) -> str:
        if self.applied:
            head = f"migrated to format {self.format_version} in {(self.commit_id or '')[:12]}"
            lines = [head + " (undo with `elfmem undo`)"]
        elif not self.steps:
            lines = [
                f"format {self.format_version}: up to date (index schema "
                f"v{self.index_schema}, migrates itself on open)"
            ]
        else:
            lines = [
                f"format {self.format_version}, this elfmem writes format "
                f"{self.code_version}: {len(self.steps)} step(s) pending"
            ]
        for step in self.steps:
            lines.append(
                f"- {step.name} ({step.from_version} -> {step.to_version}): {step.description}"
            )
            lines += [
                f"    {c['action']:<7} {c['path']} ({c['blocks']} blocks)" for c in step.changes
            ]
        if self.pending:
            lines.append("Apply with `elfmem migrate apply` (one commit; `elfmem undo` reverts).")
        lines += self.notes
        return "\n".join(lines)


def recorded_format(config_text: str | None) -> int:
    """``format:`` from the config's text; 1 when it records none."""
    if not config_text:
        return 1
    try:
        data = yaml.safe_load(config_text)
    except yaml.YAMLError:
        return 1
    value = data.get("format") if isinstance(data, dict) else None
    if value is None:
        return 1
    if not isinstance(value, int) or value < 0:
        raise ConfigError(
            f"config: `format` = {value!r} is not a format number.",
            f"Fix `format:` in {CONFIG_PATH} (the current format is {FORMAT_VERSION}).",
        )
    return value


def _sha(data: bytes | None) -> str:
    return hashlib.sha256(data).hexdigest()[:16] if data is not None else ""


def _flat_files(view: MemoryView) -> list[str]:
    return [p for p in blob_paths(view.repo, view.tree) if _FLAT_RE.match(p)]


def _upstream_plan(view: MemoryView, present: set[str]) -> tuple[Plan, list[dict[str, Any]]]:
    """Blocks of upstream's flat files into our buckets; ids already held are not copied."""
    plan = Plan(op="migrate", subject="migrate: upstream layout to buckets (format 0 -> 1)")
    moved: dict[str, list[Block]] = {}
    changes: list[dict[str, Any]] = []
    for relpath in _flat_files(view):
        found = _FLAT_RE.match(relpath)
        assert found is not None
        status, cls = DIR_STATUS[found["dir"]], found["cls"]
        # Upstream names the category by the file, not in the block's frontmatter.
        blocks = tuple(b.with_changes(cls=cls) for b in view.read(relpath))
        before = view.text(relpath).encode("utf-8")
        changes.append(
            {
                "path": f"{MEMORY_DIR}/{relpath}",
                "action": "delete",
                "blocks": len(blocks),
                "sha256_before": _sha(before),
                "sha256_after": "",
            }
        )
        plan.raw[f"{MEMORY_DIR}/{relpath}"] = None  # not a bucket: gone, not left empty
        for block in blocks:
            if block.id in present:
                continue
            present.add(block.id)
            size = block_bytes(block)
            target = view.append_target(status, block.cls, month_of(block.created), size)
            moved.setdefault(target, list(view.read(target))).append(block)
            plan.block_ids.append(block.id)
    for target, kept in sorted(moved.items()):
        text = "\n".join(render_block(b) for b in kept)
        plan.files[target] = FileEdit(tuple(kept), text)
        changes.append(
            {
                "path": f"{MEMORY_DIR}/{target}",
                "action": "write",
                "blocks": len(kept),
                "sha256_before": _sha(view.text(target).encode() if view.text(target) else None),
                "sha256_after": _sha(text.encode("utf-8")),
            }
        )
    return plan, changes


def _with_format(text: str, version: int) -> str:
    line = f"format: {version}"
    if _FORMAT_LINE.search(text):
        return _FORMAT_LINE.sub(line, text, count=1)
    return (text if text.endswith("\n") or not text else text + "\n") + line + "\n"


def _status(core: Core) -> tuple[int, list[Step], list[str]]:
    committed = core.store.committed_file(CONFIG_PATH)
    version = recorded_format(committed.decode("utf-8", "replace") if committed else None)
    notes: list[str] = []
    if version > FORMAT_VERSION:
        raise ConfigError(
            f"this memory is in format {version}; this elfmem reads up to {FORMAT_VERSION}.",
            "Upgrade elfmem (`pip install -U elfmem`), then run the command again.",
        )
    view = core.store.view()
    steps: list[Step] = []
    flat = _flat_files(view)
    if flat:
        _, changes = _upstream_plan(view, _present(core))
        steps.append(
            Step(
                "upstream-layout",
                0,
                1,
                "move upstream elfmem's flat files into month buckets",
                changes,
            )
        )
        notes.append(
            "Upstream's confidence, outcomes and learned edges live in its database: "
            "bring them with `elfmem import --from-upstream PATH`."
        )
    return (0 if flat else version), steps, notes


def _present(core: Core) -> set[str]:
    """Ids held in our buckets (the index may list blocks of the flat files too)."""
    core.sync(overlay=False)
    rows = queries.list_blocks(core.db())
    return {row.id for row in rows if parse_bucket_path(row.path.removeprefix(MEMORY_DIR + "/"))}


def status(core: Core) -> MigrateResult:
    version, steps, notes = _status(core)
    return MigrateResult(version, FORMAT_VERSION, _schema(core), steps, notes=notes)


def _schema(core: Core) -> int:
    return int(str(queries.status(core.db()).get("schema_version", 0)))


def apply(core: Core) -> MigrateResult:
    version, steps, notes = _status(core)
    if not steps:
        return MigrateResult(version, FORMAT_VERSION, _schema(core), [], notes=notes)
    present = _present(core)
    disk = core.store.root / CONFIG_PATH
    committed = core.store.committed_file(CONFIG_PATH)
    if core.store.workdir is not None and disk.exists() and disk.read_bytes() != committed:
        raise ConflictError(
            f"{CONFIG_PATH} has uncommitted changes; the migration commit would sweep them in.",
            f"Commit or stash your edit of {CONFIG_PATH}, then run `elfmem migrate apply`.",
        )

    def build(view: MemoryView) -> Plan | None:
        if not _flat_files(view):
            return None
        plan, _ = _upstream_plan(view, set(present))
        text = (committed or b"").decode("utf-8")
        plan.raw[CONFIG_PATH] = _with_format(text, FORMAT_VERSION).encode("utf-8")
        plan.body = "Steps: " + ", ".join(s.name for s in steps)
        return plan

    result = core.store.write(build, core.after_write)
    if result is None:
        return MigrateResult(FORMAT_VERSION, FORMAT_VERSION, _schema(core), [], notes=notes)
    return MigrateResult(
        FORMAT_VERSION, FORMAT_VERSION, _schema(core), steps, True, result.commit_id, notes
    )
