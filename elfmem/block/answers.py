"""Whether a note on a fact's subject states anything of its own: pure text, no model.

"A review of the billing service's ownership is planned" is about the billing service and its
owner, as "The billing service is owned by the payments team" is, but answers nothing: it states
no value the fact does not. Ranking uses this to let a fact that outcomes confirmed stand above
such a note (``retrieval/confirmed.py``), never above a note that states a value of its own.
"""

from __future__ import annotations

from elfmem.block.correction import content_words

VALUE_FAMILIES = frozenset({"measure", "path", "name", "state"})
_MEASURED = frozenset({"measure", "path", "state"})
"""Values a note on the subject cannot be expected to repeat."""


def same_subject(fact: str, note: str) -> bool:
    """The note holds at least half of the fact's content words, and two or more
    (``block/correction.py``'s words and stems): "the owner of the billing service" shares
    the billing service and its owner with the fact, "the search service is owned by …" only
    "service" and "owned"."""
    stems = _stems(fact)
    said = {stem for stem, family in content_words(fact) if family not in _MEASURED}
    return len(stems & _stems(note)) >= max(2, (len(said) + 1) // 2)


def states_nothing_more(note: str, fact: str) -> bool:
    """True when every value ``note`` states (number, date, version, path, name, state) is
    one ``fact`` states too: the note adds no answer of its own."""
    known = _stems(fact)
    return all(stem in known for stem, family in content_words(note) if family in VALUE_FAMILIES)


def _stems(text: str) -> set[str]:
    return {stem for stem, _ in content_words(text)}
