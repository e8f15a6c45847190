"""Markdown reduced to its words, for heading previews and for search.

Only this module reads Markdown structure, through mistune's AST: the line framer in ``parse.py``
never needs it, and mistune is imported on first use so ``import elfmem`` stays cheap.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable
from functools import cache, lru_cache
from typing import Any, cast

EMPTY_PREVIEW = "(empty)"
"""The heading of a block whose content has no words at all (only markup or comments)."""

ELLIPSIS = "\u2026"
"""Marks a cut line: one character, so a shortened line still fits its width."""

# Where a cut may fall: after a space, or after CJK punctuation (such text has no spaces).
_BOUNDARY = re.compile(r"[ \u3001\u3002\uff0c\uff01\uff1f\uff1b\uff1a]")
_TRAILING = " ,;:-\u2013\u2014\u3001\uff0c\uff1b\uff1a"
# Characters that belong to the one before them: never left stranded by a cut.
_JOINED = frozenset({"Mn", "Mc", "Me"})
_JOINERS = "\u200d\ufe0e\ufe0f"

_INLINE_PARENTS = frozenset(
    {
        "paragraph",
        "heading",
        "block_text",
        "emphasis",
        "strong",
        "link",
        "image",
        "strikethrough",
        "table_cell",
    }
)
_VERBATIM = frozenset({"text", "codespan", "block_code"})
_SPACES = frozenset({"linebreak", "softbreak"})

# A single line free of these characters, and not starting with a list/setext/ordered-list marker
# or indentation, is plain text already: previews skip mistune for it (the common case).
_MARKUP_CHARS = re.compile(r"[\\`*_\[\]!<>&#~|]")
_MARKUP_START = re.compile(r"^(?:[ \t]|[-+=]|\d)")
# A line that starts like no block construct (heading, quote, list, fence, rule, HTML, indented
# code, link definition) is a paragraph: mistune's inline parser alone reads it, ~5x faster.
_BLOCK_START = re.compile(r"^(?:[ \t#>`~<\[]|\d|[-+*](?:[ \t]|$)|([-*_])[ \t]*\1[ \t]*\1)")

_Token = dict[str, Any]


@cache
def _markdown() -> Any:
    import mistune

    return mistune.create_markdown(renderer=None, plugins=["strikethrough", "table"])


def plain_text(markdown: str) -> str:
    """The words of ``markdown`` without markup: one line per block-level element.

    Emphasis, links and code spans keep their text; images keep their alt text; HTML (including
    comments) is dropped; entities are decoded. Whitespace inside each line is collapsed.
    """
    tokens = cast(list[_Token], _markdown()(markdown))
    lines = (" ".join(piece.split()) for piece in _block_texts(tokens))
    return "\n".join(line for line in lines if line)


def _block_texts(tokens: Iterable[_Token]) -> Iterable[str]:
    for token in tokens:
        kind = token["type"]
        if kind in _INLINE_PARENTS:
            yield _inline_text(token.get("children", ()))
        elif kind == "block_code":
            yield from str(token.get("raw", "")).split("\n")
        elif "children" in token:
            yield from _block_texts(token["children"])


def _inline_text(tokens: Iterable[_Token]) -> str:
    parts: list[str] = []
    for token in tokens:
        kind = token["type"]
        if kind in _VERBATIM:
            raw = str(token.get("raw", ""))
            parts.append(html.unescape(raw) if kind == "text" else raw)
        elif kind in _SPACES:
            parts.append(" ")
        elif "children" in token:
            parts.append(_inline_text(token["children"]))
    return "".join(parts)


def _line_words(line: str) -> str:
    if not _MARKUP_CHARS.search(line) and not _MARKUP_START.match(line):
        return " ".join(line.split())
    if _BLOCK_START.match(line):
        return " ".join(plain_text(line).split())
    tokens = cast(list[_Token], _markdown().inline(line.strip(), {"ref_links": {}}))
    return " ".join(_inline_text(tokens).split())


def shorten(text: str, width: int) -> str:
    """``text`` on one line in at most ``width`` characters, cut after a word with an ellipsis.

    A reader skims headings and commit subjects: "above 200 client" reads as a different fact,
    "above 200…" as an unfinished one. Text with no boundary in reach (one long word, CJK
    without punctuation) is cut between characters, never between a letter and its accent.
    """
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    room = max(width, 1) - 1
    cut = max((m.end() for m in _BOUNDARY.finditer(text, 0, room + 1)), default=0)
    if cut <= room // 3:  # no boundary, or one that would keep too little of the line
        cut = room
        while cut > 1 and (
            unicodedata.category(text[cut]) in _JOINED
            or text[cut] in _JOINERS
            or text[cut - 1] in _JOINERS
        ):
            cut -= 1
    head = text[:cut].rstrip(_TRAILING) or text[:cut].rstrip()
    return head + ELLIPSIS


def preview(content: str, width: int = 60) -> str:
    """The heading text for ``content``: the first line that has words, as plain text.

    At most ``width`` characters, cut after a word with an ellipsis (``shorten``), never empty
    and never containing a line break, so the ``## `` heading stays one line.
    """
    return _cached_preview(content, max(width, 1))


@lru_cache(maxsize=8192)
def _cached_preview(content: str, width: int) -> str:
    # Cached because every write re-renders a whole bucket of mostly unchanged blocks.
    for line in content.split("\n"):
        if not line.strip():
            continue
        words = _line_words(line)
        if words:
            return shorten(words, width)
    return EMPTY_PREVIEW
