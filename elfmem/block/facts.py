"""Whether two look-alike texts carry the same information, and if not, what differs.

Embeddings cannot see that "restart the vesper router" and "restart the serac loader" are
different instructions (cosine above 0.9 with the static model), nor "100 req/min" against
"1000 req/min". So consolidation never trusts a cosine to call two blocks duplicates: they are
the same information only when they have the same words in the same order, up to case, spacing,
punctuation at word edges and the articles a/an/the. Every other difference keeps both blocks,
and is named (which tokens on each side, and their kind) so a person or an agent can review the
pair. Pure functions: no index, no model, no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from elfmem.block import lexicon as lx

KINDS = (
    "negation",
    "path",
    "identifier",
    "version",
    "date",
    "unit",
    "number",
    "antonym",
    "preposition",
    "state",
    "name",
    "word",
)
"""Every kind a difference can have, in the order a mixed difference is named by."""
SUBJECT_KINDS = frozenset({"name", "identifier", "path"})
"""A difference of these kinds means the two texts are about different things."""
VALUE_KINDS = frozenset({"number", "unit", "version", "date", "negation", "antonym", "state"})
"""A difference of these kinds means the same thing is said to have another value or state."""

_EDGE = "\"'`.,;:!?()[]{}<>«»“”‘’…*"
_EDGE_UNQUOTED = _EDGE.replace("`", "")
_CLOSERS = "\"')]}*”’»"
_HYPHENATED = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
_NUMBER = re.compile(r"^[+-]?\d+(?:[.,]\d+)*$")
_NUMBER_UNIT = re.compile(r"^([+-]?\d+(?:[.,]\d+)*)([^\d\s]+(?:/[^\d\s]+)?)$")
_VERSION = re.compile(r"^v\d+(?:\.\d+)*$|^\d+\.\d+\.\d+(?:[.-]\w+)*$", re.IGNORECASE)
_DATE = re.compile(r"^\d{4}-\d{2}(?:-\d{2})?(?:t[\d:]+z?)?$|^\d{1,2}:\d{2}(?::\d{2})?(?:am|pm)?$")
_FILE = re.compile(
    r"^[\w.-]*\w\.(py|js|ts|md|json|ya?ml|toml|txt|cfg|ini|conf|sh|rs|go|c|h|cpp|java|rb|lock"
    r"|log|csv|sql|html|css|env|lua|php|xml|db|sqlite)$"
)
_IDENT = re.compile(r"[_@#$=]|::|^-|\w\.\w|[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]")


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    """As written, edge punctuation removed."""
    key: str
    """What equality compares: NFKC, case folded."""
    opens_sentence: bool
    quoted: bool
    """Written inside backticks: code, so an identifier whatever it looks like."""


@dataclass(frozen=True, slots=True)
class Difference:
    """One stretch where the texts disagree: the tokens on each side, and what kind they are."""

    kind: str
    left: tuple[str, ...]
    right: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "left": list(self.left), "right": list(self.right)}


@dataclass(frozen=True, slots=True)
class Comparison:
    same_information: bool
    differences: tuple[Difference, ...]

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(d.kind for d in self.differences))

    @property
    def revision_like(self) -> bool:
        """Same subject, another value: no name, identifier or path differs, and at least one
        value does. Words may be added or dropped around it ("now", "since the upgrade"), but a
        word replaced by another word is a different statement and left for review, and so are
        two values replaced at once ("Service 0 … port 8000" / "Service 3 … port 8003": the
        first number may name the subject)."""
        kinds = set(self.kinds)
        if not kinds & VALUE_KINDS or kinds & SUBJECT_KINDS:
            return False
        replaced = [d for d in self.differences if d.left and d.right]
        if len(replaced) > 1:
            return False
        return all(d.kind in VALUE_KINDS or not (d.left and d.right) for d in self.differences)


@lru_cache(maxsize=8192)
def tokens(text: str) -> tuple[Token, ...]:
    """Words as compared: split on spacing and on hyphens between letters, edges trimmed,
    articles dropped (they never change what a statement says). Cached: review and dream
    compare one block with several twins."""
    out: list[Token] = []
    opens = True
    for chunk in unicodedata.normalize("NFKC", text).split():
        quoted = chunk.strip(_EDGE_UNQUOTED).startswith("`")
        ends = chunk.rstrip(_CLOSERS).endswith((".", "!", "?", ":"))
        for part in _HYPHENATED.split(chunk) if "-" in chunk else (chunk,):
            word = part.strip(_EDGE)
            if not word or word.casefold() in lx.ARTICLES:
                continue
            out.append(Token(word, word.casefold(), opens, quoted))
            opens = False
        opens = opens or ends
    return tuple(out)


@lru_cache(maxsize=1 << 17)
def _keys(text: str) -> str:
    """The compared words of ``text`` as one string (they never hold the separator: ``split``
    breaks on it). Cached apart from ``tokens`` and far larger, since a string is a tenth of
    a token tuple's memory: a dream of 100k blocks meets each text as a neighbour of several
    others, and ``tokens``' cache of 8,192 texts missed nearly every time."""
    return "\x1f".join(t.key for t in tokens(text))


def same_information(a: str, b: str) -> bool:
    return _keys(a) == _keys(b)


def keys(text: str) -> list[str]:
    """The compared words of ``text`` (``Token.key`` of each of ``tokens``), from the large
    cache: what an alignment that names no kinds needs."""
    joined = _keys(text)
    return joined.split("\x1f") if joined else []


def replaced_stretches(a: Sequence[str], b: Sequence[str], stop: int = 2) -> int:
    """How many stretches ``compare`` would report replaced (words on both sides), counting no
    further than ``stop``.

    The same alignment as ``SequenceMatcher(None, a, b, autojunk=False)``: the longest common
    run (earliest in ``a``, then in ``b``) splits the pair and each side is aligned alone, so a
    stretch is replaced exactly when a part with words on both sides shares none. Counting
    alone, without building the opcodes, and stopping at ``stop``, it refuses most of a dream's
    near pairs (``lookalike_edges.revision_like``) at a fraction of the matcher's cost.
    """
    where: dict[str, list[int]] = {}
    for j, word in enumerate(b):
        where.setdefault(word, []).append(j)
    found = 0
    parts = [(0, len(a), 0, len(b))]
    while parts:
        alo, ahi, blo, bhi = parts.pop()
        besti, bestj, size = _longest_run(a, where, alo, ahi, blo, bhi)
        if not size:
            found += int(alo < ahi and blo < bhi)  # words on one side only: added or dropped
            if found >= stop:
                return found
            continue
        if alo < besti and blo < bestj:
            parts.append((alo, besti, blo, bestj))
        if besti + size < ahi and bestj + size < bhi:
            parts.append((besti + size, ahi, bestj + size, bhi))
    return found


def _longest_run(
    a: Sequence[str], where: dict[str, list[int]], alo: int, ahi: int, blo: int, bhi: int
) -> tuple[int, int, int]:
    """``SequenceMatcher.find_longest_match`` with no junk: the longest run common to
    ``a[alo:ahi]`` and ``b[blo:bhi]`` (``where``: each word's places in ``b``, ascending),
    earliest in ``a``, then in ``b``; size 0 when they share no word."""
    besti, bestj, size = alo, blo, 0
    runs: dict[int, int] = {}
    for i in range(alo, ahi):
        longer: dict[int, int] = {}
        for j in where.get(a[i], ()):
            if j < blo:
                continue
            if j >= bhi:
                break
            k = longer[j] = runs.get(j - 1, 0) + 1
            if k > size:
                besti, bestj, size = i - k + 1, j - k + 1, k
        runs = longer
    return besti, bestj, size


def compare(a: str, b: str) -> Comparison:
    """Same information, or the differences named: pure, deterministic, symmetric in kind."""
    ta, tb = tokens(a), tokens(b)
    ka, kb = [t.key for t in ta], [t.key for t in tb]
    if ka == kb:
        return Comparison(True, ())
    diffs: list[Difference] = []
    matcher = SequenceMatcher(None, ka, kb, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        left, right = ta[i1:i2], tb[j1:j2]
        before = ka[i1 - 1] if i1 else ""
        diffs.append(
            Difference(
                _kind(left, right, before),
                tuple(t.text for t in left),
                tuple(t.text for t in right),
            )
        )
    return Comparison(False, tuple(diffs))


def differences(a: str, b: str) -> list[dict[str, object]]:
    """The named differences as a result or ledger event carries them (``[]``: same info)."""
    return [d.as_dict() for d in compare(a, b).differences]


def _kind(left: Sequence[Token], right: Sequence[Token], before: str) -> str:
    """The first kind in ``KINDS`` that any token of the stretch has."""
    return _stretch_kind(tuple(left), tuple(right), before in lx.VERSION_CUES)


@lru_cache(maxsize=1 << 16)
def _stretch_kind(
    left: tuple[Token, ...], right: tuple[Token, ...], after_version_cue: bool
) -> str:
    """``_kind``, cached: a dream names the differences of 10⁵ look-alike pairs, and most are
    the same few replaced words (the word before matters only as a version cue)."""
    found = {k for t in (*left, *right) for k in _kinds_of(t, after_version_cue)}
    ll, rr = {t.key for t in left}, {t.key for t in right}
    if (ll & lx.NEGATIONS) != (rr & lx.NEGATIONS) or _contracted(ll) != _contracted(rr):
        found.add("negation")
    if _antonyms(ll, rr):
        found.add("antonym")
    if _units_only(left, right):
        found.add("unit")
        found.discard("number")
    if found <= {"preposition", "word"} and (ll | rr) & lx.PREPOSITIONS:
        found.discard("word")
    return next((k for k in KINDS if k in found), "word")


@lru_cache(maxsize=1 << 16)
def _kinds_of(t: Token, after_version_cue: bool) -> frozenset[str]:
    """A token's kinds; cached, since a dream names the differences of 10⁵ pairs whose words
    mostly repeat (the word before matters only as a version cue)."""
    return frozenset(_uncached_kinds(t, after_version_cue))


def _uncached_kinds(t: Token, after_version_cue: bool) -> set[str]:
    w, k = t.text, t.key
    if t.quoted:
        return {"identifier"}
    if w.startswith(("/", "~/", "./", "../")) or "\\" in w or w.count("/") >= 2 or _FILE.match(k):
        return {"path"}
    value = _value_kind(k, after_version_cue)
    if value:
        return {value}
    if _NUMBER_UNIT.match(k) or k in lx.UNITS or _unit_ratio(k):
        return {"unit"}
    if _IDENT.search(w):
        return {"identifier"}
    kinds: set[str] = set()
    if k in lx.PREPOSITIONS:
        kinds.add("preposition")
    if k in lx.STATES:
        kinds.add("state")
    if w[:1].isupper() and not t.opens_sentence:
        kinds.add("name")
    return kinds or {"word"}


def _value_kind(k: str, after_version_cue: bool) -> str:
    """Date, version or number, or "" for none of them."""
    numeric = bool(_NUMBER.match(k)) or k in lx.NUMBER_WORDS
    if _DATE.match(k) or k in lx.MONTHS or k in lx.DAYS:
        return "date"
    if _VERSION.match(k) or (numeric and after_version_cue):
        return "version"
    return "number" if numeric else ""


def _unit_ratio(key: str) -> bool:
    parts = key.split("/")
    return len(parts) == 2 and all(p in lx.UNITS for p in parts)


def _units_only(left: Sequence[Token], right: Sequence[Token]) -> bool:
    """Same numbers on both sides, another unit: "100 ms" against "100 s", "5GB" against "5MB"."""

    def split(ts: Sequence[Token]) -> tuple[list[str], list[str]]:
        nums, units = [], []
        for t in ts:
            m = _NUMBER_UNIT.match(t.key)
            if m:
                nums.append(m.group(1))
                units.append(m.group(2))
            elif _NUMBER.match(t.key):
                nums.append(t.key)
            elif t.key in lx.UNITS or _unit_ratio(t.key):
                units.append(t.key)
            else:
                return [], []
        return nums, units

    (ln, lu), (rn, ru) = split(left), split(right)
    return bool(lu or ru) and ln == rn and lu != ru


def _contracted(keys: set[str]) -> bool:
    return any(k.endswith(("n't", "n’t")) for k in keys)


def _antonyms(left: set[str], right: set[str]) -> bool:
    """A word on one side is the other's antonym: a listed pair, or one is the other with a
    negating prefix ("stable" / "unstable")."""
    return any(not _opposites(a).isdisjoint(right) for a in left)


@lru_cache(maxsize=1 << 16)
def _opposites(word: str) -> frozenset[str]:
    """Every word ``_antonyms`` pairs with ``word``."""
    listed = {b for pair in lx.ANTONYMS if word in pair for b in pair if b != word}
    prefixed = {p + word for p in lx.ANTONYM_PREFIXES}
    stripped = {word[len(p) :] for p in lx.ANTONYM_PREFIXES if word.startswith(p)}
    return frozenset(listed | prefixed | (stripped - {""}))
