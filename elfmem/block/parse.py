"""Reading a memory file: a line framer for headings, frontmatter comments and inline fields.

The framer owns line numbers, which mistune's AST does not carry, so a hand edit that does not parse
is reported as ``file:line`` with a fix. The grammar is in docs/format.md; the block boundary is a
``## `` line whose next line opens with ``<!-- id: `` and nothing else, so bodies may hold any
Markdown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from elfmem.block.damage import Conflict, find_conflicts
from elfmem.block.model import (
    BLOCK_ID_RE,
    CONTROL_RE,
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
_ID_RE = re.compile(r"^<!-- id: (\S+)")


def parse_file(text: str, path: str = "") -> list[Block]:
    """Every block in a memory file, in file order; the first problem raises."""
    return [block for block, _ in parse_located(text, path)]


def parse_bytes(data: bytes, path: str = "") -> list[Block]:
    """Like ``parse_file`` for raw file bytes; invalid UTF-8 is reported at its line."""
    return [block for block, _ in parse_partial(data, path).strict()]


def parse_located(text: str, path: str = "") -> list[tuple[Block, int]]:
    """Every block with the 1-based line of its ``## `` heading (CRLF is read as LF)."""
    return parse_partial(text, path).strict()


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """What a file yields read leniently: the blocks that parse, with their heading lines, and
    every problem with its line, so a damaged file hides nothing and serves what is readable.

    ``problems`` lists what is wrong first (by line), then the blocks left out because of it.
    """

    located: list[tuple[Block, int]]
    problems: list[BlockFormatError]

    @property
    def blocks(self) -> list[Block]:
        return [block for block, _ in self.located]

    def strict(self) -> list[tuple[Block, int]]:
        """The blocks, or the first problem raised: what a write must see before it rewrites."""
        if self.problems:
            raise self.problems[0]
        return self.located


def parse_partial(data: bytes | str, path: str = "") -> ParsedFile:
    """Every block that parses, and a ``BlockFormatError`` with file:line for everything else.

    Damage is confined to the block it is in: a block whose lines hold invalid UTF-8 or a stray
    frontmatter opener, or that an unresolved conflict cuts through, is left out and reported; the
    blocks inside a conflict region are reported with it (see ``block/damage.py``).
    """
    lines, problems, damaged = _lines(data, path)
    conflicts = find_conflicts(lines)
    problems += [c.error(path) for c in conflicts]
    inside = {i for c in conflicts for i in range(c.open, c.close + 1)}
    starts, stray = _block_starts(lines, inside, path)
    problems += stray.values()
    damaged.update(stray)
    inside |= _orphans(lines, conflicts, starts)
    problems += _preamble(lines, starts[0] if starts else len(lines), inside, path)
    problems.sort(key=lambda e: e.line)
    located, left_out = _frame_blocks(lines, starts, conflicts, damaged, path)
    return ParsedFile(located, problems + left_out)


def _lines(data: bytes | str, path: str) -> tuple[list[str], list[BlockFormatError], set[int]]:
    """The file's lines (BOM dropped, CRLF and CR read as LF), and the lines with bad UTF-8."""
    problems: list[BlockFormatError] = []
    damaged: set[int] = set()
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("utf-8", "replace")
            for n, raw in enumerate(data.split(b"\n")):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    damaged.add(n)
                    problems.append(
                        BlockFormatError(
                            f"invalid UTF-8 byte 0x{raw[exc.start]:02x}",
                            path,
                            n + 1,
                            "Re-save the file as UTF-8 (or retype that line), then run "
                            "`elfmem index check`.",
                        )
                    )
    else:
        text = data
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if CONTROL_RE.search(text) is not None:
        for n, line in enumerate(lines):
            found = CONTROL_RE.search(line)
            if found is not None and n not in damaged:
                damaged.add(n)
                problems.append(
                    BlockFormatError(
                        f"control character U+{ord(found[0]):04X} (only tab, CR and LF are "
                        "allowed)",
                        path,
                        n + 1,
                        "Delete the character (an editor may show it as ^@ or a box), then run "
                        "`elfmem index check`.",
                    )
                )
    return lines, problems, damaged


def _block_starts(
    lines: list[str], inside: set[int], path: str
) -> tuple[list[int], dict[int, BlockFormatError]]:
    """Indexes of heading lines outside conflict regions, and each stray frontmatter opener
    (one with no heading above it: an error, not body text) by its index."""
    starts: list[int] = []
    stray: dict[int, BlockFormatError] = {}
    for i, line in enumerate(lines):
        if not line.startswith(FRONTMATTER_OPEN) or (inside and i in inside):
            continue
        if i == 0 or not lines[i - 1].startswith(HEADING_PREFIX) or i - 1 in inside:
            stray[i] = BlockFormatError(
                "a `<!-- id: ...` frontmatter comment without a `## ` heading line above it",
                path,
                i + 1,
                "Add a `## ` heading line directly above it, or, if it is body text, escape "
                "it as `\\<!-- id: ...`.",
            )
        else:
            starts.append(i - 1)
    return starts, stray


def _orphans(lines: list[str], conflicts: list[Conflict], starts: list[int]) -> set[int]:
    """Lines after a region up to the next block start: the tail of a block inside it."""
    out: set[int] = set()
    for conflict in conflicts:
        end = next((s for s in starts if s > conflict.close), len(lines))
        out.update(range(conflict.close + 1, end))
    return out


def _preamble(lines: list[str], first: int, inside: set[int], path: str) -> list[BlockFormatError]:
    for i in range(first):
        if lines[i].strip() and i not in inside:
            return [
                BlockFormatError(
                    "text before the first block (a block starts with a `## ` heading followed "
                    "by a `<!-- id: ... -->` line)",
                    path,
                    i + 1,
                    "Move that text into a block's body, or delete it.",
                )
            ]
    return []


def _frame_blocks(
    lines: list[str], starts: list[int], conflicts: list[Conflict], damaged: set[int], path: str
) -> tuple[list[tuple[Block, int]], list[BlockFormatError]]:
    """Parse each block between its start and the next start (or a region that begins a block);
    returns the blocks served and a problem for each block left out."""
    located: list[tuple[Block, int]] = []
    problems: list[BlockFormatError] = []
    seen: dict[str, int] = {}
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        cut = next((c for c in conflicts if start < c.open < end), None)
        if cut is not None and cut.clean_start:
            end, cut = cut.open, None
        try:
            if cut is not None:
                raise _left_out(
                    lines, start, path, f"the unresolved git conflict at line {cut.open + 1}"
                )
            bad = min((i for i in damaged if start <= i < end), default=None)
            if bad is not None:
                raise _left_out(lines, start, path, f"line {bad + 1} in it is damaged")
            block = _parse_block(lines, start, end, path)
        except BlockFormatError as exc:
            problems.append(exc)
            continue
        if block.id in seen:
            problems.append(
                BlockFormatError(
                    f"duplicate block id {block.id} (first used at line {seen[block.id]})",
                    path,
                    start + 2,
                    "Give one of the two blocks a new id (16 lowercase hex digits), or merge them.",
                )
            )
            continue
        seen[block.id] = start + 2
        located.append((block, start + 1))
    return located, problems


def _left_out(lines: list[str], start: int, path: str, why: str) -> BlockFormatError:
    match = _ID_RE.match(lines[start + 1])
    name = f"block {match[1]}" if match else "the block"
    return BlockFormatError(
        f"{name} is not served: {why}",
        path,
        start + 1,
        "Fix the line named, then run `elfmem index check`.",
    )


@dataclass(frozen=True, slots=True)
class _Head:
    """What the frontmatter comment states, before the inline fields and body are read."""

    id: str
    cls: str = "knowledge"
    tags: tuple[str, ...] = ()
    pinned: bool = False
    created: str = ""
    extra: tuple[tuple[str, str], ...] = ()


def _parse_block(lines: list[str], start: int, end: int, path: str) -> Block:
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
                f"duplicate key `{match[1]}`", f"Keep one `{match[1]}:` entry.", path, lineno
            )
        entries[match[1]] = match[2]
    return _head(entries, path, lineno)


def _head(entries: dict[str, str], path: str, lineno: int) -> _Head:
    block_id = entries["id"]
    if not BLOCK_ID_RE.match(block_id):
        raise _fm_error(
            f"invalid id {block_id!r}", "An id is exactly 16 lowercase hex digits.", path, lineno
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
            f"tags must be written [a, b], got {value!r}", "Write `tags: [one, two]`.", path, lineno
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
