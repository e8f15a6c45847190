"""The grammar of one block: its frontmatter comment, inline fields and body (docs/format.md).

``parse.py`` frames a file into blocks and owns what is wrong between them; this module reads the
lines of one block and raises ``BlockFormatError`` at the exact line that does not fit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from elfmem.block.model import (
    BLOCK_ID_RE,
    RELATIONS,
    Block,
    Relation,
    is_valid_category,
    is_valid_tag,
    normalise_content,
)
from elfmem.errors import BlockFormatError

HEADING_PREFIX = "## "
FRONTMATTER_OPEN = "<!-- id: "
FRONTMATTER_KEYS = ("id", "cls", "tags", "pinned", "created")
CUE_KEY = "cue"

_ENTRY_SEP_RE = re.compile(" {2,}")
_ENTRY_RE = re.compile(r"^([a-z][a-z0-9_-]*): ?(.*)$")
_FIELD_LINE_RE = re.compile(r"^([a-z][a-z0-9_-]*)::(.*)$")
_ESCAPE_RE = re.compile(r"^\\(?=\\*(?:<!-- id: |<{7}))", re.MULTILINE)
"""The one backslash the renderer adds before a body line that starts with ``\\*<!-- id: `` or
``\\*<<<<<<<`` (a conflict opener, see ``block/damage.py``)."""
_TARGETS_RE = re.compile(r"^(?:\[\[[^\]]*\]\][\s,]*)+$")
_TARGET_RE = re.compile(r"\[\[([^\]]*)\]\]")


@dataclass(frozen=True, slots=True)
class _Head:
    """What the frontmatter comment states, before the inline fields and body are read."""

    id: str
    cls: str = "knowledge"
    tags: tuple[str, ...] = ()
    pinned: bool = False
    created: str = ""
    extra: tuple[tuple[str, str], ...] = ()


def parse_block(lines: list[str], start: int, end: int, path: str) -> Block:
    """The block whose heading is ``lines[start]`` and which ends before ``lines[end]``."""
    head = _frontmatter(lines[start + 1].rstrip(), path, start + 2)
    i = start + 2
    cue, cue_line = "", 0
    relations: list[Relation] = []
    fields: list[tuple[str, str]] = []
    while i < end and lines[i].strip():
        key, value = _field_line(lines[i], path, i + 1)
        if key == CUE_KEY:
            if cue_line:
                raise BlockFormatError(
                    f"second `cue::` line (the first is line {cue_line})",
                    path,
                    i + 1,
                    "Keep one `cue::` line per block.",
                )
            cue, cue_line = value, i + 1
        elif key in RELATIONS:
            relations.extend(Relation(key, t) for t in _relation_targets(key, value, path, i + 1))
        else:
            fields.append((key, value))
        i += 1
    body = "\n".join(lines[i + 1 : end])
    content = normalise_content(_ESCAPE_RE.sub("", body) if "\\<" in body else body)
    if not content:
        raise BlockFormatError(
            f"block {head.id} has no body",
            path,
            start + 1,
            "Write the content after one blank line below the inline fields, or delete the block.",
        )
    return Block(
        head.id,
        content,
        head.cls,
        head.tags,
        head.pinned,
        head.created,
        cue,
        tuple(relations),
        tuple(fields),
        head.extra,
    )


def _frontmatter(line: str, path: str, lineno: int) -> _Head:
    """``<!-- id: ...  key: value ... -->``: entries split on two or more spaces."""
    if not line.endswith("-->"):
        raise _fm_error(
            "the comment is not closed with `-->` on the same line",
            "End the line with ` -->`.",
            path,
            lineno,
        )
    inner = line[len("<!--") : -len("-->")].strip()
    if "-->" in inner:
        raise _fm_error(
            "`-->` inside the comment",
            "Remove `-->` from the values; a value cannot hold it.",
            path,
            lineno,
        )
    entries: dict[str, str] = {}
    for entry in _ENTRY_SEP_RE.split(inner) if "   " in inner else inner.split("  "):
        match = _ENTRY_RE.match(entry)
        if match is None:
            raise _fm_error(
                f"entry {entry[:40]!r} is not `key: value`",
                "Write entries as `key: value` with a lowercase key, separated by two spaces.",
                path,
                lineno,
            )
        if match[1] in entries:
            raise _fm_error(
                f"duplicate key `{match[1]}`",
                f"Keep one `{match[1]}:` entry.",
                path,
                lineno,
            )
        entries[match[1]] = match[2]
    return _head(entries, path, lineno)


def _head(entries: dict[str, str], path: str, lineno: int) -> _Head:
    block_id = entries["id"]
    if not BLOCK_ID_RE.match(block_id):
        raise _fm_error(
            f"invalid id {block_id!r}",
            "An id is exactly 16 lowercase hex digits.",
            path,
            lineno,
        )
    cls = entries.get("cls", "knowledge")
    if not is_valid_category(cls):
        raise _fm_error(
            f"invalid category {cls!r}",
            "A category is lowercase letters, digits, `_` or `-`, at most 40 characters.",
            path,
            lineno,
        )
    pinned = entries.get("pinned", "false")
    if pinned != "true" and pinned != "false":
        raise _fm_error(
            f"pinned must be true or false, got {pinned!r}",
            "Write `pinned: true` or leave it out.",
            path,
            lineno,
        )
    tags = _tags(entries.get("tags", "[]"), path, lineno)
    extra = tuple((k, v) for k, v in entries.items() if k not in FRONTMATTER_KEYS)
    return _Head(block_id, cls, tags, pinned == "true", entries.get("created", ""), extra)


def _tags(value: str, path: str, lineno: int) -> tuple[str, ...]:
    if not (value.startswith("[") and value.endswith("]")):
        raise _fm_error(
            f"tags must be written [a, b], got {value!r}",
            "Write `tags: [one, two]`.",
            path,
            lineno,
        )
    inner = value[1:-1]
    tags = tuple(tag.strip() for tag in inner.split(",")) if inner.strip() else ()
    for tag in tags:
        if not is_valid_tag(tag):
            raise _fm_error(
                f"invalid tag {tag!r}",
                "Tags are letters, digits and `_ . / % : + -` (no spaces), separated by commas.",
                path,
                lineno,
            )
    return tags


def _fm_error(what: str, recovery: str, path: str, lineno: int) -> BlockFormatError:
    return BlockFormatError(f"frontmatter: {what}", path, lineno, recovery)


def _field_line(line: str, path: str, lineno: int) -> tuple[str, str]:
    match = _FIELD_LINE_RE.match(line)
    if match is None:
        raise BlockFormatError(
            f"expected an inline field `key:: value` here, got {line.strip()[:40]!r}",
            path,
            lineno,
            "Inline fields end at the first blank line: put one blank line before the body "
            "(field keys are lowercase, e.g. `cue:: ...`).",
        )
    return match[1], match[2].strip()


def _relation_targets(kind: str, value: str, path: str, lineno: int) -> list[str]:
    targets = _TARGET_RE.findall(value) if _TARGETS_RE.match(value) else []
    if not targets or not all(BLOCK_ID_RE.match(t) for t in targets):
        raise BlockFormatError(
            f"`{kind}::` needs targets written [[<16 lowercase hex digits>]], got {value[:60]!r}",
            path,
            lineno,
            f"Write it as `{kind}:: [[0123456789abcdef]]` with the target block's id.",
        )
    return list(targets)
