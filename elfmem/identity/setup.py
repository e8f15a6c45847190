"""``init``: scaffold a memory, or refresh an established one without duplicating anything.

One commit holds whatever was missing: the config, the raw constitution, the folders, the
``.gitattributes`` line, and seed or template blocks for roles nobody has filled yet.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from elfmem.block import secrets
from elfmem.block.layout import (
    MEMORY_DIR,
    MERGE_ATTRIBUTES_LINE,
    STATUS_DIRS,
    month_of,
)
from elfmem.block.model import Block, refuse_control
from elfmem.block.render import block_bytes
from elfmem.config import CONFIG_PATH, ElfmemConfig, render
from elfmem.errors import InvalidInput
from elfmem.identity.constitution import CONSTITUTION, DEFAULT_SELF, SeedBlock, seed_tags
from elfmem.identity.rename import rename_blocks, renamed_self
from elfmem.identity.templates import TEMPLATES, template_tags
from elfmem.index import queries
from elfmem.rhythms.capture import Capture, make_block
from elfmem.rhythms.core import Core
from elfmem.rhythms.results import Result
from elfmem.store import FileEdit, MemoryView, Plan

GITATTRIBUTES_LINE = ".elfmem/memory/** text eol=lf"


@dataclass(frozen=True)
class InitResult(Result):
    root: str
    """Where ``.elfmem`` lives: the work tree, or a bare repository's git dir (absolute)."""
    created_repo: bool
    """True when there was no git repository and init created one."""
    commit_id: str | None
    seeded: list[str] = field(default_factory=list)
    """Ids of the constitution and template blocks added; empty when nothing was committed."""
    files: list[str] = field(default_factory=list)
    """Non-block files written, repository-relative (config, ``self.md``, ``.gitkeep``, …)."""
    agent_name: str = "elf"
    """The agent's name, from the config (``project.agent_name``)."""

    @property
    def summary(self) -> str:
        if self.commit_id is None:
            return f"Memory at {self.root} is already set up; nothing to change."
        what = ", ".join(self.files) if self.files else "no files"
        return (
            f"Initialised memory for {self.agent_name} at {self.root} "
            f"(commit {self.commit_id[:12]}): {what}; {len(self.seeded)} blocks seeded."
        )


def _filled_roles(core: Core) -> set[str]:
    core.sync()
    rows = queries.list_blocks(core.db(), tag_pattern="self/role/%")
    return {
        t.removeprefix("self/role/")
        for r in rows
        if r.status != "archived"
        for t in r.tags
        if t.startswith("self/role/")
    }


def _seed(
    core: Core,
    seeds: tuple[SeedBlock, ...],
    tags_for: Callable[[str], tuple[str, ...]],
    filled: set[str],
    name: str,
    key: str = "",
) -> list[Block]:
    out = []
    for seed in seeds:
        role = f"{key}-{seed.role}" if key else seed.role
        if role in filled:
            continue
        tags = tags_for(seed.role)
        item = Capture(seed.content.format(name=name), seed.cue, tuple(tags), "self", pinned=True)
        out.append(make_block(core, item))
    return out


def _seed_blocks(core: Core, seed: bool, template: str | None, name: str) -> list[Block]:
    """The constitution and template blocks for roles no live block fills yet."""
    filled = _filled_roles(core)
    blocks: list[Block] = []
    if seed:
        blocks += _seed(core, CONSTITUTION, seed_tags, filled, name)
    if template is not None:
        tags_for = partial(template_tags, template)
        blocks += _seed(core, TEMPLATES[template][1], tags_for, filled, name, template)
    return blocks


def _scaffold(
    core: Core, write_config: bool, self_text: str | None, name: str, renamed_from: str | None
) -> dict[str, bytes | None]:
    """The non-block files init writes: config, constitution, folder keepers, .gitattributes."""
    raw: dict[str, bytes | None] = {}
    if write_config:
        raw[CONFIG_PATH] = render(core.config).encode("utf-8")
    self_path = f"{MEMORY_DIR}/self.md"
    renamed = (
        renamed_self(_existing(core, self_path), renamed_from, name)
        if renamed_from and self_text is None
        else None
    )
    if renamed is not None:
        raw[self_path] = renamed
    elif self_text is not None:
        refuse_control("self text", self_text)
        text = f"# Constitution of {name}\n\n{self_text.strip()}\n"
        _check_self(text)
        raw[self_path] = text.encode()
    elif _existing(core, self_path) is None:
        raw[self_path] = DEFAULT_SELF.format(name=name).encode("utf-8")
    for folder in STATUS_DIRS.values():
        keep = f"{MEMORY_DIR}/{folder}/.gitkeep"
        if _existing(core, keep) is None:
            raw[keep] = b""
    attrs = _gitattributes(_existing(core, ".gitattributes") or b"")
    if attrs is not None:
        raw[".gitattributes"] = attrs
    return raw


def _check_self(text: str) -> None:
    """``self.md`` is committed and read into every frame: it never needs a credential."""
    findings = secrets.scan(text, "self.md")
    if findings:
        raise secrets.refusal(
            findings,
            "Remove the credential from the --self text (say where it lives instead, e.g. "
            "'keys are in the environment'), then run init again. Nothing was written.",
        )


def init(
    core: Core,
    created_repo: bool,
    *,
    write_config: bool,
    seed: bool = False,
    self_text: str | None = None,
    template: str | None = None,
    renamed_from: str | None = None,
) -> InitResult:
    """``renamed_from``: the agent's name before this init, when it gives a new one."""
    if template is not None and template not in TEMPLATES:
        raise InvalidInput(
            f"Unknown template {template!r}.",
            f"Choose one of: {', '.join(TEMPLATES)} (`elfmem templates`).",
        )
    name = core.config.project.agent_name
    blocks = _seed_blocks(core, seed, template, name)
    raw = _scaffold(core, write_config, self_text, name, renamed_from)
    root = core.store.root

    def build(view: MemoryView) -> Plan | None:
        plan = Plan(op="init", subject=f"init: memory for {name}", block_ids=[b.id for b in blocks])
        plan.raw = dict(raw)
        for block in blocks:
            relpath = view.append_target(
                "active", block.cls, month_of(block.created), block_bytes(block)
            )
            edit = plan.files.get(relpath)
            before = edit.blocks if edit else view.read(relpath)
            plan.files[relpath] = FileEdit((*before, block))
        if renamed_from:
            plan.subject += f" (renamed from {renamed_from})"
            plan.block_ids += rename_blocks(core, view, renamed_from, name, plan.files)
        return plan if (plan.files or plan.raw) else None

    result = core.store.write(build, core.after_write)
    if result is not None and blocks:
        core.record(
            {
                b.id: [
                    core.event("birth", b.id, cls=b.cls, created=b.created, commit=result.commit_id)
                ]
                for b in blocks
            },
            "elfmem: birth",
        )
    return InitResult(
        root=str(root),
        created_repo=created_repo,
        commit_id=result.commit_id if result else None,
        seeded=[b.id for b in blocks] if result else [],
        files=sorted(raw),
        agent_name=name,
    )


def _existing(core: Core, path: str) -> bytes | None:
    """A repository file as it is now: on disk in a work tree, committed in a bare repository
    (which has no work tree, so a re-init must not take the file for missing and replace it)."""
    wd = core.store.memory_workdir
    if wd is None:  # bare, or ref mode: the memory ref's tip is the copy there is
        return core.store.committed_file(path)
    try:
        return (wd / path).read_bytes()
    except FileNotFoundError:
        return None


def _gitattributes(data: bytes) -> bytes | None:
    text = data.decode("utf-8", "replace")
    missing = [x for x in (GITATTRIBUTES_LINE, MERGE_ATTRIBUTES_LINE) if x not in text.splitlines()]
    if not missing:
        return None
    sep = "" if not text or text.endswith("\n") else "\n"
    added = "".join(f"{line}\n" for line in missing)
    return f"{text}{sep}{added}".encode()


def config_for(existing: ElfmemConfig | None, name: str | None) -> tuple[ElfmemConfig, bool]:
    """The config to use, and whether the file must be (re)written."""
    if existing is None:
        config = ElfmemConfig()
        return (config.with_agent_name(name) if name else config), True
    if name and name != existing.project.agent_name:
        return existing.with_agent_name(name), True
    return existing, False
