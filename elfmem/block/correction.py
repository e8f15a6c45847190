"""Whether a newer statement corrects an older one: the same subject, another value.

Agents and people correct in ordinary sentences: "the timeout was raised to 60 seconds", "the
cluster moved to eu-central-1 in June", "Dana Park now owns the billing service; Alice Chen
moved to the search team", "deploys on Fridays are no longer allowed after the incident review".
So the test compares what each statement says, not how it is worded:

- the words that carry content (``_content``: articles, auxiliaries, prepositions, pronouns and
  the words that announce a change, such as "now", "since", "raised", "moved", left out; light
  stemming, so "owned" meets "owns");
- **the same subject**: at least two of the older statement's content words are in the newer;
- **another value**, one of three ways:

  1. the words of the older statement missing from the newer form one stretch in its value
     place (after at least two content words, and followed by at most two, none of them a verb
     such as "is": "the [orders] table has 12 columns" names a subject, not a value; a state
     may come before the subject it is said of: "tracing stays [disabled] for the X"), they are
     values (number, unit, date, version, state, person or other name, identifier, path; or a
     word or two at the end or before a noun such as "team": "owned by the [payments] team"),
     and the newer statement states a value of the same family;
  2. nothing is missing, and one says "not" (or "no longer", "cannot", "never" against
     "always", ...) where the other does not;
  3. nothing is missing, the older value is named in the newer as the former one ("from 30 to
     60", "instead of the payments team", "Alice Chen moved to …", "since Lena left"), and the
     newer states another value of the same family.

Two statements about different subjects never pass 1 (the replaced stretch is the subject, in
front of the verb) unless the stretch holds no value and another value is shared, which is
refused too; two attributes of one subject differ in more than values. Pure: no model, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from elfmem.block import lexicon as lx
from elfmem.block.facts import Token, tokens

_STOP = frozenset(
    (
        "is are was were be been being am has have had having do does did can could might "
        "must shall should will would it its they their them this that these those we our us "
        "you your he she his her him i me my and or so then also there here which who whom "
        "what when where while with per to of in on at by for from into onto about as than "
        "very just only any some each every one's s"
    ).split()
) | (lx.PREPOSITIONS - {"not"})
_CUES = frozenset(
    (
        "now currently today longer anymore instead since until till going forward effective "
        "onwards onward moved move moves raised lowered increased decreased reduced extended "
        "shortened bumped changed updated switched replaced relaxed tightened pushed back took "
        "over new previous previously formerly former again later recently starting lives live "
        "runs run sits sit located hosted deployed resides happens happen occurs takes place "
        "left retired set due scheduled planned"
    ).split()
)
"""Words that announce a change or only place a subject: left out of what is compared."""
_UNNEGATED = frozenset(("always", "ever"))
"""What "never" negates: left out, so "deploy after the backup, always" against "…, never"
differs by a negation, as "is allowed" against "is not allowed" does."""
_DEMOTED_BEFORE = frozenset("from instead not formerly previously replaced replacing".split())
_DEMOTED_AFTER = frozenset("moved left retired replaced no longer".split())
_VERB_AFTER = frozenset(
    "is are was were be has have had can could must should will would may does do go goes "
    "get gets".split()
)
"""A verb after a replaced stretch: the stretch is the subject of the sentence, not a value."""
_CLASS_NOUNS = frozenset(
    "team teams squad group org department region zone cluster channel queue bucket database "
    "branch office datacenter account tier plan".split()
)
"""A noun a plain word names a value in front of: "the [payments] team", "the [eu] region"."""
_MEASURE = re.compile(r"\d")
_PATH = re.compile(
    r"^(?:/|~/|\./|\.\./)|\\|/.*/|^[\w.-]*\w\.(?:py|js|ts|md|json|ya?ml|toml|txt|cfg|ini|conf"
    r"|sh|rs|go|lock|log|csv|sql|env|lua|xml|db)$"
)
_IDENT = re.compile(r"[_@#$=]|::|\w\.\w|[a-z][A-Z]|[A-Za-z][-‐]?\d|\d[-‐]?[A-Za-z]")
_JOINED = re.compile(r"(?<=\w)-(?=\w)")
"""Hyphens inside a word: "eu-west-1" and "on-call" stay one word here."""


@dataclass(frozen=True, slots=True)
class _Word:
    key: str
    """As compared before stemming."""
    stem: str
    family: str
    """measure, path, name, state or word."""
    at: int
    """Position among the statement's tokens."""
    clause: int
    """Which clause of the statement (split at semicolons and sentence ends) holds it."""


def _stem(key: str) -> str:
    word = key.removesuffix("'s").removesuffix("’s")
    if not word.isalpha() or len(word) < 4:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    else:
        for suffix in ("ing", "ed", "ers", "er", "s"):  # "owner" meets "owned" and "owns"
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                if suffix in ("ing", "ed") and word[-1] == word[-2] and word[-1] not in "lsz":
                    word = word[:-1]  # "pinned" meets "pin", "planned" meets "plan"
                break
    return word[:-1] if word.endswith("e") and len(word) >= 4 else word


def _family(t: Token, nxt: Token | None) -> str:
    w, k = t.text, t.key
    if t.quoted:
        return "name"
    if _PATH.search(w):
        return "path"
    if _MEASURE.search(k):
        return "name" if _IDENT.search(w) and not _is_measure(k) else "measure"
    if k in lx.MONTHS and w[:1].isupper() or k in lx.UNITS or k in lx.NUMBER_WORDS:
        return "measure"
    if k in lx.DAYS:
        return "measure"
    if k in lx.STATES:
        return "state"
    if w[:1].isupper() and (not t.opens_sentence or (nxt is not None and nxt.text[:1].isupper())):
        return "name"
    if _IDENT.search(w):
        return "name"
    return "word"


def _is_measure(key: str) -> bool:
    """A number, a version or a date, with or without a unit: "30", "3.12", "v2", "512mb"."""
    return bool(re.fullmatch(r"v?\d+(?:[.,:/-]\d+)*(?:[a-z%]{0,4}(?:/[a-z]+)?)?", key))


_LONGEST = 4
"""Most content words a replaced value has: "db.r5.large", "May 17", "Alice Chen"."""
_ARTICLE = re.compile(r"\b(?:the|a|an)\b", re.IGNORECASE)
_KEPT_ARTICLE = "\u2042"
"""Articles are kept as a mark, so "document the team" does not read as "document team"."""
_CLAUSES = re.compile(r";|(?<=[.!?])\s+")


@lru_cache(maxsize=1 << 16)
def _stems(text: str) -> frozenset[str]:
    return frozenset(w.stem for w in _content(text)[1])


@lru_cache(maxsize=1 << 14)
def _content(text: str) -> tuple[tuple[Token, ...], tuple[_Word, ...], int]:
    """The tokens, the content words in order, and how many negations the statement holds."""
    ts: list[Token] = []
    clause_of: list[int] = []
    for n, part in enumerate(_CLAUSES.split(_JOINED.sub("\u2010", text))):
        found = tokens(_ARTICLE.sub(_KEPT_ARTICLE, part))
        ts.extend(found)
        clause_of.extend([n] * len(found))
    words: list[_Word] = []
    negations = 0
    for i, t in enumerate(ts):
        k = t.key
        if k in lx.NEGATIONS or k in ("no", "cannot") or k.endswith(("n't", "n’t")):
            negations += k != "anymore"
            continue
        if k == "may" and t.text == "may":  # the modal, not the month
            continue
        if k in _STOP or k in _CUES or k in _UNNEGATED or k in lx.ARTICLES or k == _KEPT_ARTICLE:
            continue
        nxt = ts[i + 1] if i + 1 < len(ts) else None
        family = _family(t, nxt)
        if family == "state" and not _predicative(tuple(ts[i + 1 : i + 3])):
            family = "word"
        words.append(_Word(k, _stem(k), family, i, clause_of[i]))
    return tuple(ts), tuple(words), negations


def _predicative(following: tuple[Token, ...]) -> bool:
    """A state word states a value unless it describes the noun after it ("retries a [failed]
    request") or is a passive verb with its agent ("[approved] by Marco Rossi")."""
    if not following:
        return True
    nxt = following[0].key
    if nxt == "by":
        after = following[1:]
        return not after or not (after[0].key == _KEPT_ARTICLE or after[0].text[:1].isupper())
    plain = nxt.isalpha() and following[0].text.islower()
    left_out = nxt in _STOP or nxt in _CUES or nxt in lx.NEGATIONS or nxt == _KEPT_ARTICLE
    return not plain or left_out


def content_words(text: str) -> tuple[tuple[str, str], ...]:
    """(stem, family) of each content word of ``text``, in order: what is compared."""
    return tuple((w.stem, w.family) for w in _content(text)[1])


def corrects(old: str, new: str) -> bool:
    """True when ``new`` states ``old``'s subject with another value (see the module)."""
    if len(_stems(old) - _stems(new)) > _LONGEST:
        return False  # the cheap refusal that most near pairs of a large dream meet
    old_tokens, was, old_neg = _content(old)
    new_tokens, now, new_neg = _content(new)
    said = {w.stem for w in now}
    before = {w.stem for w in was}
    shared = [w for w in was if w.stem in said]
    if len({w.stem for w in shared}) < min(2, len(was) - 2):
        return False  # a one-word subject only in a statement of three content words or fewer
    removed = [w for w in was if w.stem not in said]
    restating = {w.clause for w in now if w.stem in before and w.stem not in _CLASS_NOUNS}
    added = [w for w in now if w.stem not in before and w.clause in restating]
    if not removed:
        if (old_neg % 2) != (new_neg % 2):
            return True
        return _former_value_named(old_tokens, new_tokens, was, now, added)
    return _value_replaced(old_tokens, was, now, removed, added, shared)


def _value_replaced(
    old_tokens: tuple[Token, ...],
    was: tuple[_Word, ...],
    now: tuple[_Word, ...],
    removed: list[_Word],
    added: list[_Word],
    shared: list[_Word],
) -> bool:
    """Case 1: the words missing from the newer statement are the older one's value, and the
    newer statement states another value of their family."""
    after = _value_place(old_tokens, was, removed)
    if after is None:
        return False
    families = {w.family for w in removed}
    if len(families) > 1:
        return False  # "Python 3.10" against an owner: the attribute went with the value
    if families & {"measure", "path", "state"} == set() and any(
        w.family == "path" or (w.family == "measure" and any(c.isdigit() for c in w.stem))
        for w in shared
    ):
        return False  # the value stayed; what changed names the subject
    if "name" in families and after and after[0].stem not in _CLASS_NOUNS:
        return False  # a name inside a statement ("in Brittany with my sister") is not its value
    if "word" in families:  # a plain word is a value only in front of "team", "region", ...
        if len(removed) > 1 or not after or after[0].stem not in _CLASS_NOUNS:
            return False
        if any(w.stem in _CLASS_NOUNS for w in removed):
            return False
        noun = after[0].stem  # the new word must stand in front of the same noun
        fronts = {  # right in front: "the search team", not "document the team"
            w.stem
            for w, n in zip(now[:-1], now[1:], strict=True)
            if n.stem == noun and n.at == w.at + 1 and _names_one(w)
        }
        return any(a.stem in fronts for a in added)
    return bool(families & {w.family for w in added})


def _value_place(
    old_tokens: tuple[Token, ...], was: tuple[_Word, ...], removed: list[_Word]
) -> tuple[_Word, ...] | None:
    """The content words after ``removed`` when it stands where a value stands, else None: one
    short stretch, after the subject, not before a verb, not inside a narrated event."""
    if len(removed) > _LONGEST:
        return None
    where = [was.index(w) for w in removed]
    if where != list(range(where[0], where[0] + len(where))):
        return None  # more than one stretch: another attribute, or another subject too
    if any(t.key in _LINKING for t in old_tokens[removed[0].at + 1 : removed[-1].at]):
        return None  # "the region of Project [Quillon is us-east-1]": the subject and its value
    after = was[where[-1] + 1 :]
    families = {w.family for w in removed}
    ends = not after and families <= {"measure", "path", "state"}
    lead = 1 if ends or _verb_between(old_tokens, was, where[0]) else 2
    if where[0] < lead:
        return None  # a value follows the subject: "[Alice Chen] owns …" names the subject
    if len(after) > 2 and families != {"state"}:
        return None  # a state said of the subject named after it is still its value:
        # "tracing stays [disabled] for the sable importer in production"
    if any(t.key in _VERB_AFTER for t in old_tokens[removed[-1].at + 1 :]):
        return None  # "the [orders] table has 12 columns": the stretch is the subject
    if _narrates(old_tokens[: removed[0].at]):
        return None  # "I went sailing in [Brittany]": another trip, not a correction
    return after


_LINKING = _VERB_AFTER | frozenset(
    "runs run lives live sits sit resides located hosted deployed takes".split()
)
"""Verbs left out of what is compared that join a subject to its value."""


def _verb_between(ts: tuple[Token, ...], was: tuple[_Word, ...], at: int) -> bool:
    """A verb left out of the comparison stands between the content word before ``was[at]``
    and it: "the [builder_7] runs [4] replicas" has a one-word subject and a value."""
    if at < 1:
        return False
    return any(t.key in _LINKING for t in ts[was[at - 1].at + 1 : was[at].at])


def _former_value_named(
    old_tokens: tuple[Token, ...],
    new_tokens: tuple[Token, ...],
    was: tuple[_Word, ...],
    now: tuple[_Word, ...],
    added: list[_Word],
) -> bool:
    """Case 3: an old value is named in the new statement as the former one, and the new
    statement states another value of its family."""
    wanted = {w.family for w in added}
    for w in was:
        if w.family not in wanted:
            continue
        if w.family == "word" and not _before_class_noun(was, w):
            continue
        there = next((n for n in now if n.stem == w.stem), None)
        if there is None:
            continue
        if _demoted(new_tokens, there.at) and not _demoted(old_tokens, w.at):
            return True
    return False


_PAST = frozenset(
    "went did saw met got made took came gave bought ran told said found left wrote "
    "spent flew drove".split()
)
"""Simple past forms that tell of an event. Not "read": it is spelt as its present, and in
"runs with read replica enabled" it names a thing."""
_PASSIVE = frozenset("is are be been being has have had was were get gets got".split())


def _narrates(ts: tuple[Token, ...]) -> bool:
    """A verb in the simple past before the value: the statement tells of an event, and
    another event is not a correction of it ("owned by" after "is" is a state)."""
    for i, t in enumerate(ts):
        past = t.key in _PAST or (t.key.endswith("ed") and len(t.key) > 4)
        if past and t.key not in lx.STATES and (i == 0 or ts[i - 1].key not in _PASSIVE):
            return True
    return False


_DESCRIBING = frozenset(
    "same other whole entire right wrong responsible relevant current next previous owning "
    "operating on‐call core main".split()
)


def _names_one(w: _Word) -> bool:
    """A word that names one team, region or queue ("payments"), not one that describes the
    noun ("the operating team", "the responsible team")."""
    return w.key not in _DESCRIBING and not w.key.endswith(("ing", "ed", "ible", "able"))


def _before_class_noun(was: tuple[_Word, ...], w: _Word) -> bool:
    i = was.index(w)
    return i + 1 < len(was) and was[i + 1].stem in _CLASS_NOUNS


def _demoted(ts: tuple[Token, ...], at: int) -> bool:
    """A word said to be the former value: "from X", "instead of X", "X moved", "X left"."""
    before = {t.key for t in ts[max(0, at - 3) : at]}
    nxt = at + 1
    while nxt < len(ts) and (ts[nxt].text[:1].isupper() or ts[nxt].key in _CLASS_NOUNS):
        nxt += 1  # past the rest of a name: "Alice Chen moved", "the payments team left"
    after = {t.key for t in ts[nxt : nxt + 2]}
    return bool(before & _DEMOTED_BEFORE) or bool(after & _DEMOTED_AFTER)
