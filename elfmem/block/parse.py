"""Reading a memory file: a line framer that splits it into blocks and finds the damage between.

The framer owns line numbers, which mistune's AST does not carry, so a hand edit that does not parse
is reported as ``file:line`` with a fix; one block's lines are read by ``grammar.py``. The grammar
is in docs/format.md; the block boundary is a ``## `` line whose next line opens with
``<!-- id: `` and nothing else, so bodies may hold any Markdown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from elfmem.block.damage import Conflict, find_conflicts
from elfmem.block.grammar import (
    CUE_KEY,
    FRONTMATTER_KEYS,
    FRONTMATTER_OPEN,
    HEADING_PREFIX,
    parse_block,
)
from elfmem.block.model import CONTROL_RE, Block
from elfmem.errors import BlockFormatError

__all__ = [
    "CUE_KEY",
    "FRONTMATTER_KEYS",
    "FRONTMATTER_OPEN",
    "HEADING_PREFIX",
    "ParsedFile",
    "parse_bytes",
    "parse_file",
    "parse_located",
    "parse_partial",
]

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
    conflicts = find_conflicts(lines) if any("<<<<<<<" in line for line in lines) else []
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
                        f"control character U+{ord(found[0]):04X} (NUL, ESC and U+009B are "
                        "never stored)",
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
        if lines[i].startswith(HEADING_PREFIX) and i + 1 < len(lines) and i not in inside:
            # A heading is a block's first line; what broke is the id line under it.
            return [
                BlockFormatError(
                    "a `## ` heading not followed by a `<!-- id: <16 hex digits> ... -->` line",
                    path,
                    i + 2,
                    "Repair this line to the form `<!-- id: 0123456789abcdef  cls: knowledge  "
                    "tags: []  created: … -->` (see docs/format.md), or delete the heading.",
                )
            ]
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
    lines: list[str],
    starts: list[int],
    conflicts: list[Conflict],
    damaged: set[int],
    path: str,
) -> tuple[list[tuple[Block, int]], list[BlockFormatError]]:
    """Parse each block between its start and the next start (or a region that begins a block);
    returns the blocks served and a problem for each block left out."""
    located: list[tuple[Block, int]] = []
    problems: list[BlockFormatError] = []
    seen: dict[str, int] = {}
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        cut = next((c for c in conflicts if start < c.open < end), None) if conflicts else None
        if cut is not None and cut.clean_start:
            end, cut = cut.open, None
        try:
            if cut is not None:
                raise _left_out(
                    lines,
                    start,
                    path,
                    f"the unresolved git conflict at line {cut.open + 1}",
                )
            bad = min((i for i in damaged if start <= i < end), default=None) if damaged else None
            if bad is not None:
                raise _left_out(lines, start, path, f"line {bad + 1} in it is damaged")
            block = parse_block(lines, start, end, path)
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
