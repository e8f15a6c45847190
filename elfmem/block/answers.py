"""Whether a note on a fact's subject states anything of its own: pure text, no model.

"A review of the billing service's ownership is planned" is about the billing service and its
owner, as "The billing service is owned by the payments team" is, but answers nothing: it states
no value the fact does not. Ranking uses this to let a fact that outcomes confirmed stand above
such a note (``retrieval/confirmed.py``), never above a note that states a value of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from elfmem.block.correction import content_words

VALUE_FAMILIES = frozenset({"measure", "path", "name", "state"})
_MEASURED = frozenset({"measure", "path", "state"})
"""Values a note on the subject cannot be expected to repeat."""


@dataclass(frozen=True, slots=True)
class Gist:
    """What a text says, as the two tests below compare it."""

    stems: frozenset[str]
    values: frozenset[str]
    """Stems of the words that state a value (``VALUE_FAMILIES``)."""
    said: int
    """Distinct stems that are not measured values: what a note on the subject may repeat."""


@lru_cache(maxsize=8192)
def gist(text: str) -> Gist:
    words = content_words(text)
    return Gist(
        frozenset(s for s, _ in words),
        frozenset(s for s, f in words if f in VALUE_FAMILIES),
        len({s for s, f in words if f not in _MEASURED}),
    )


def same_subject(fact: Gist, note: Gist) -> bool:
    """The note holds at least half of the fact's content words, and two or more
    (``block/correction.py``'s words and stems): "the owner of the billing service" shares
    the billing service and its owner with the fact, "the search service is owned by …" only
    "service" and "owned"."""
    return len(fact.stems & note.stems) >= max(2, (fact.said + 1) // 2)


def states_nothing_more(note: Gist, fact: Gist) -> bool:
    """True when every value ``note`` states (number, date, version, path, name, state) is
    one ``fact`` states too: the note adds no answer of its own."""
    return note.values <= fact.stems
