"""The block: one idea, its frontmatter, its cue and its declared relations.

A block's status (inbox, active, archived) is not stored in the block: it is where the block lives
(``log/``, ``notes/``, ``archive/``), so moving a file between folders is the whole status change.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import unicodedata
from dataclasses import dataclass, field, replace

from elfmem.clock import WALL, iso_seconds
from elfmem.errors import InvalidInput

RELATIONS: tuple[str, ...] = (
    "supports",
    "contradicts",
    "refines",
    "derived-from",
    "requires",
    "supersedes",
)
"""The six declared relations, closed on purpose (docs/format.md)."""

BLOCK_ID_RE = re.compile(r"^[0-9a-f]{16}$")
TAG_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./%:+-]*$")
CATEGORY_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
FIELD_KEY_RE = re.compile(r"^[a-z][a-z0-9_-]*$")
_ISO_WHEN = r"\d{4}(?:-\d{2}(?:-\d{2}(?:T\d{2}:\d{2}(?::\d{2})?)?)?)?"
WHEN_RE = re.compile(rf"^{_ISO_WHEN}(?:/{_ISO_WHEN})?$")
"""The stored form of the ``when:`` key: an ISO 8601 year, month, day or minute, no zone; or a
period, two of those as ISO 8601 writes an interval (``2023-05-08/2023-06-09``)."""
WHEN_KEY = "when"
CONTROL_RE = re.compile("[\x00\x1b\x9b]")
"""The control characters no field may hold: a NUL makes git treat the file as binary, and ESC
and U+009B (the one-byte CSI) start terminal escape sequences that rewrite a person's screen
when the file is shown. The others (a vertical tab, a form feed, C1 controls from Windows-1252
text decoded as Latin-1) are what real sources hold: stored as they came, and shown escaped on
a terminal (``TERMINAL_RE``)."""
TERMINAL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Control characters other than tab, LF and CR: stored, but escaped when printed to a
terminal, where they would move the cursor or vanish."""

TIER_LAMBDA: dict[str, float] = {
    "permanent": 0.00001,
    "durable": 0.001,
    "standard": 0.010,
    "ephemeral": 0.050,
}


@dataclass(frozen=True, slots=True)
class Relation:
    """A declared, typed edge written in the source block's file: ``supports:: [[target]]``."""

    kind: str
    target: str


@dataclass(frozen=True, slots=True)
class Block:
    """One memory block exactly as its file states it.

    ``extra`` keeps unknown frontmatter keys with their raw value text, in file order, and
    ``fields`` keeps unknown inline ``key:: value`` lines: both round-trip untouched.
    """

    id: str
    content: str
    cls: str = "knowledge"
    tags: tuple[str, ...] = ()
    pinned: bool = False
    created: str = ""
    cue: str = ""
    relations: tuple[Relation, ...] = ()
    fields: tuple[tuple[str, str], ...] = ()
    extra: tuple[tuple[str, str], ...] = field(default=())

    @property
    def tier(self) -> str:
        """The decay tier: an explicit ``tier:`` key wins, else derived from tags and category."""
        for key, value in self.extra:
            if key == "tier" and value in TIER_LAMBDA:
                return value
        return derive_tier(self.cls, self.tags)

    @property
    def when(self) -> str:
        """When the block was said or learned (``when:`` key, ISO 8601), or "" if not stated.

        A value that is not in the stored form counts as not stated: a hand edit cannot break
        recall, and the index keeps the key untouched in ``extra`` either way."""
        for key, value in self.extra:
            if key == WHEN_KEY and WHEN_RE.fullmatch(value):
                return value
        return ""

    @property
    def content_hash(self) -> str:
        return content_hash(self.content)

    def with_changes(self, **changes: object) -> Block:
        return replace(self, **changes)  # type: ignore[arg-type]


def derive_tier(cls: str, tags: tuple[str, ...]) -> str:
    """Constitutional → permanent; values, constraints, goals and minds → durable;
    observations → ephemeral; everything else standard. A ``tier:`` key overrides it."""
    if "self/constitutional" in tags:
        return "permanent"
    durable = ("self/value", "self/constraint", "self/goal")
    if cls in ("value", "constraint", "goal", "mind") or any(
        t in durable or t.startswith(("self/value/", "self/constraint/", "self/goal/", "mind/"))
        for t in tags
    ):
        return "durable"
    if cls == "observation" or "observation" in tags:
        return "ephemeral"
    return "standard"


def new_block_id() -> str:
    """A permanent, content-independent id: 64 random bits as 16 hex digits."""
    return secrets.token_hex(8)


def now_iso() -> str:
    """A ``created`` stamp from the wall clock (an open memory stamps from ``Core.clock``)."""
    return iso_seconds(WALL)


def normalise_content(text: str) -> str:
    """Stored form of content: LF line ends, no trailing spaces, no blank lines at either end."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def normalise_for_match(text: str) -> str:
    """What two texts must share to be the same statement: case, width and spacing folded."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.split())


def content_hash(text: str) -> str:
    """Hash of the normalised statement; equal hashes mean a true duplicate."""
    return hashlib.sha256(normalise_for_match(text).encode("utf-8")).hexdigest()[:32]


def refuse_control(field_name: str, value: str) -> None:
    """``InvalidInput`` naming the field and the code point when ``value`` holds NUL, ESC or
    U+009B (``CONTROL_RE``)."""
    found = CONTROL_RE.search(value)
    if found is not None:
        raise InvalidInput(
            f"{field_name} holds control character U+{ord(found[0]):04X} at position "
            f"{found.start() + 1}; NUL, ESC and U+009B are never stored",
            f"Remove the character from the {field_name} and try again.",
        )


def is_valid_tag(tag: str) -> bool:
    return bool(TAG_RE.fullmatch(tag))


def is_valid_category(cls: str) -> bool:
    return bool(CATEGORY_RE.fullmatch(cls))
