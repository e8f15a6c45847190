"""Co-retrieval pairs staged toward edges, counted for ``status`` without reading every note.

A pair returned together is staged on both blocks' notes (rhythms/recall.py) and becomes an edge
once that has happened in ``CO_RETRIEVAL_SESSIONS`` sessions. Each note's count of staged pairs
is a pure function of its text, so the index keeps it by notes commit (index/pairstate.py) and
moves it along by the notes-tree diff from the commit it was counted at: a status after a recall
folds the few notes the recall changed, and one on an unchanged ledger folds none. Notes with
spooled events are folded with them on top, as every reader of the ledger does.
"""

from __future__ import annotations

from collections.abc import Iterable

import pygit2

from elfmem.index import IndexDB, pairstate
from elfmem.rhythms.adaptive import CO_RETRIEVAL_SESSIONS, LedgerView
from elfmem.store.ledger import BlockState as Folded
from elfmem.store.ledger import fold
from elfmem.store.notes import NotesLedger, anchor_for_block

COOCCUR = '"cooccur"'
"""A note without this text holds no co-retrieval event, so it is not decoded."""


def staged_in(folded: Folded) -> int:
    """Blocks recalled with this one, in too few sessions yet for an edge."""
    return sum(1 for s in folded.cooccur_sessions.values() if len(s) < CO_RETRIEVAL_SESSIONS)


def note_pairs(text: str) -> int:
    """``staged_in`` of a note's fold; a note that names no co-retrieval event is not folded."""
    return staged_in(fold(text.splitlines())) if COOCCUR in text else 0


def staged_on(ledger: LedgerView, db: IndexDB, block_ids: Iterable[str]) -> int:
    """Pairs staged on the notes of ``block_ids``, spooled events included (a pair of two of
    them sits on both notes and counts twice)."""
    tip, spooled = ledger.spooled()
    anchors = {anchor_for_block(b): b for b in block_ids}
    total = sum(
        n
        for anchor, n in by_note(ledger.store.ledger, db, tip or "").items()
        if anchor in anchors and anchor not in spooled
    )
    on_top = [block_id for anchor, block_id in anchors.items() if anchor in spooled]
    return total + sum(staged_in(f) for f in ledger.folded_many(on_top).values())


def by_note(notes: NotesLedger, db: IndexDB, tip: str) -> dict[str, int]:
    """Anchor → pairs staged at notes commit ``tip`` ("" = no notes), for each note staging any.

    The index's rows are moved to ``tip`` by refolding the notes changed since their commit; rows
    never counted, or counted at a commit this repository no longer has, are counted afresh from
    every note.
    """
    before, rows = pairstate.read(db)
    if before == tip:
        return rows
    changed = _changed(notes, before, tip)
    if changed is None:
        counts = {a: note_pairs(text) for a, text in (notes.read_all(tip) if tip else {}).items()}
        pairstate.advance(db, before, tip, counts, clear=True)
        return {a: n for a, n in counts.items() if n > 0}
    texts = notes.read_many(changed, tip) if tip and changed else {}
    counts = {a: note_pairs(texts.get(a, "")) for a in changed}
    pairstate.advance(db, before, tip, counts)
    rows.update(counts)
    return {a: n for a, n in rows.items() if n > 0}


def _changed(notes: NotesLedger, before: str | None, tip: str) -> set[str] | None:
    """Anchors whose notes differ between the rows' commit and ``tip``; None when unknowable."""
    if before is None:
        return None
    try:
        return notes.changed_anchors(before or None, tip or None)
    except (KeyError, ValueError, pygit2.GitError):  # a commit this repository lacks
        return None
