"""Writing a memory file in canonical form, so that ``parse_file(render_file(blocks)) == blocks``.

Everything the parser would refuse or read back differently is refused here first, as
``InvalidInput``, so a write can never produce a file that the next read rejects.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from elfmem.block.model import (
    BLOCK_ID_RE,
    CATEGORY_RE,
    FIELD_KEY_RE,
    RELATIONS,
    TAG_RE,
    Block,
    normalise_content,
    refuse_control,
)
from elfmem.block.parse import CUE_KEY, FRONTMATTER_KEYS, HEADING_PREFIX
from elfmem.block.text import preview
from elfmem.errors import InvalidInput

_NEEDS_ESCAPE_RE = re.compile(r"^\\*(?:<!-- id: |<{7})")


def render_file(blocks: Sequence[Block]) -> str:
    """The whole file: blocks separated by one blank line, ending in one newline ("" if none)."""
    seen: set[str] = set()
    for block in blocks:
        if block.id in seen:
            raise InvalidInput(
                f"block id {block.id} appears twice in one file",
                "Keep one block per id: drop or re-id the duplicate before writing.",
            )
        seen.add(block.id)
    return "\n".join(_render_kept(block) for block in blocks)


def block_bytes(block: Block) -> int:
    """How many bytes ``block`` adds to its bucket file, for the ``BUCKET_BYTES`` bound: its whole
    rendered text and the blank line before it. Counting only content and cue let tags alone
    carry a bucket far past the bound (100k tags made a 909 KB bucket)."""
    return len(_render_kept(block).encode("utf-8")) + 1


_RENDERED: dict[int, tuple[Block, str]] = {}
_RENDERED_KEPT = 8192


def _render_kept(block: Block) -> str:
    """``render_block``, kept per block object: ``edit`` and ``forget`` rewrite a whole bucket,
    and all but one of its blocks are the same (frozen) objects as last time. Rendering 250 took
    1.2 ms here. The entry holds the block, so its ``id`` cannot be reused while it is kept."""
    hit = _RENDERED.get(id(block))
    if hit is not None and hit[0] is block:
        return hit[1]
    text = render_block(block)
    if len(_RENDERED) >= _RENDERED_KEPT:
        _RENDERED.clear()
    _RENDERED[id(block)] = (block, text)
    return text


def render_block(block: Block) -> str:
    """One block in canonical form, ending with a newline; the content is written normalised."""
    validate_block(block)
    content = normalise_content(block.content)
    lines = [HEADING_PREFIX + preview(content), _frontmatter_line(block)]
    if block.cue:
        lines.append(_field(CUE_KEY, block.cue))
    lines.extend(f"{r.kind}:: [[{r.target}]]" for r in block.relations)
    lines.extend(_field(key, value) for key, value in block.fields)
    lines.append("")
    lines.extend(
        "\\" + line if _NEEDS_ESCAPE_RE.match(line) else line for line in content.split("\n")
    )
    return "\n".join(lines) + "\n"


def _frontmatter_line(block: Block) -> str:
    entries = [f"id: {block.id}", f"cls: {block.cls}", f"tags: [{', '.join(block.tags)}]"]
    if block.pinned:
        entries.append("pinned: true")
    if block.created:
        entries.append(f"created: {block.created}")
    entries.extend(f"{key}: {value}" if value else f"{key}:" for key, value in block.extra)
    return "<!-- " + "  ".join(entries) + " -->"


def _field(key: str, value: str) -> str:
    return f"{key}:: {value}" if value else f"{key}::"


def validate_block(block: Block) -> None:
    """Refuse (``InvalidInput``) any block whose fields could not be written and read back as is."""
    _refuse_control(block)
    if not BLOCK_ID_RE.fullmatch(block.id):
        raise InvalidInput(
            f"invalid block id {block.id!r}", "Use 16 lowercase hex digits (new_block_id())."
        )
    if not CATEGORY_RE.fullmatch(block.cls):
        raise InvalidInput(
            f"invalid category {block.cls!r}",
            "Use lowercase letters, digits, `_` or `-`, starting with a letter or digit (≤ 40).",
        )
    for tag in block.tags:
        if not TAG_RE.fullmatch(tag):
            raise InvalidInput(
                f"invalid tag {tag!r}",
                "Use letters, digits and `_ . / % : + -` only, e.g. `db/postgres`.",
            )
    if not normalise_content(block.content):
        raise InvalidInput("empty content", "Give the block some text.")
    _check_frontmatter_value("created", block.created)
    _check_extra(block.extra)
    _check_inline(block)


def _refuse_control(block: Block) -> None:
    """Every text that reaches the file, checked before the format rules so the error names
    the control character instead of calling the whole value invalid."""
    refuse_control("content", block.content)
    refuse_control("cue", block.cue)
    refuse_control("category", block.cls)
    refuse_control("created", block.created)
    for tag in block.tags:
        refuse_control("tag", tag)
    for relation in block.relations:
        refuse_control(f"{relation.kind} target", relation.target)
    for key, value in (*block.fields, *block.extra):
        refuse_control(f"field {key!r}", key + value)


def _check_extra(extra: tuple[tuple[str, str], ...]) -> None:
    seen: set[str] = set()
    for key, value in extra:
        if not FIELD_KEY_RE.fullmatch(key) or key in FRONTMATTER_KEYS or key in seen:
            raise InvalidInput(
                f"frontmatter key {key!r} cannot be written (bad, reserved or repeated)",
                "Use a new lowercase key (letters, digits, `_`, `-`), once per block.",
            )
        seen.add(key)
        _check_frontmatter_value(key, value)


def _check_frontmatter_value(key: str, value: str) -> None:
    if "-->" in value or "  " in value or "\n" in value or "\r" in value or value != value.strip():
        raise InvalidInput(
            f"frontmatter value for {key!r} cannot be written back unchanged: {value[:60]!r}",
            "Remove `-->`, line breaks, double spaces and leading/trailing spaces from the value.",
        )


def _check_inline(block: Block) -> None:
    _check_inline_value(CUE_KEY, block.cue)
    for relation in block.relations:
        if relation.kind not in RELATIONS or not BLOCK_ID_RE.fullmatch(relation.target):
            raise InvalidInput(
                f"invalid relation {relation.kind!r} -> {relation.target!r}",
                f"Use one of {', '.join(RELATIONS)} with a 16-hex-digit target block id.",
            )
    for key, value in block.fields:
        if not FIELD_KEY_RE.fullmatch(key) or key == CUE_KEY or key in RELATIONS:
            raise InvalidInput(
                f"inline field key {key!r} cannot be written as an unknown field",
                "Use a lowercase key that is not `cue` or a relation name.",
            )
        _check_inline_value(key, value)


def _check_inline_value(key: str, value: str) -> None:
    if "\n" in value or "\r" in value or value != value.strip():
        raise InvalidInput(
            f"inline field {key!r} cannot be written back unchanged: {value[:60]!r}",
            "Keep the value on one line without leading or trailing spaces.",
        )
