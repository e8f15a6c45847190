"""Co-retrieval pairs staged toward edges, counted for ``status`` without reading every note.

A pair returned together is staged on both blocks' notes (rhythms/recall.py) and becomes an edge
once that has happened in ``CO_RETRIEVAL_SESSIONS`` sessions. Each note's count of staged pairs
is a pure function of its text, so the index keeps it by notes commit (index/pairstate.py) and
moves it along by the notes-tree diff from the commit it was counted at. Notes with spooled
events are folded with them on top, as every reader of the ledger does.

Writing to the index costs a process two syncs to disk (the first write and the checkpoint at
close), more than folding a few notes. So ``status`` folds the notes changed since the rows'
commit without saving them, unless there were many; and a process that wrote the index anyway
moves both copies of the ledger folds (these rows and index/ledgerstate.py's) to the notes tip
as it closes (``keep_up``), so the next process, a status in particular, finds them current.
"""

from __future__ import annotations

from collections.abc import Iterable

import pygit2

from elfmem.index import IndexDB, ledgerstate, pairstate
from elfmem.rhythms.adaptive import CO_RETRIEVAL_SESSIONS, LedgerView, retrieval_numbers
from elfmem.store.ledger import BlockState as Folded
from elfmem.store.ledger import fold
from elfmem.store.notes import NotesLedger, anchor_for_block, clock_anchor

COOCCUR = '"cooccur"'
"""A note without this text holds no co-retrieval event, so it is not decoded."""
KEEP_UP = 64
"""Changed notes a status folds without saving the rows, and a closing process refolds at most."""


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

    The index's rows are moved to ``tip`` by refolding the notes changed since their commit, and
    saved when that was more than ``KEEP_UP`` notes; rows never counted, or counted at a commit
    this repository no longer has, are counted afresh from every note and saved.
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
    if len(changed) > KEEP_UP:
        pairstate.advance(db, before, tip, counts)
    rows.update(counts)
    return {a: n for a, n in rows.items() if n > 0}


def keep_up(notes: NotesLedger, db: IndexDB) -> None:
    """Move both copies of the ledger folds in the index to the notes tip, folding each changed
    note once, when at most ``KEEP_UP`` notes changed since their commit (rows never keyed are
    left to the readers). For a process that wrote the index: its next write costs no sync."""
    try:
        _keep_up(notes, db)
    except (KeyError, ValueError, pygit2.GitError):  # a damaged ledger: the readers will say
        return


def _keep_up(notes: NotesLedger, db: IndexDB) -> None:
    tip = notes.tip() or ""
    kept = {"numbers": ledgerstate.stored_tip(db), "pairs": pairstate.stored_tip(db)}
    changes = {k: _changed(notes, b, tip) for k, b in kept.items() if b is not None and b != tip}
    due = {k: c for k, c in changes.items() if c is not None and len(c) <= KEEP_UP}
    if not due:
        return
    anchors = set().union(*due.values()) - {clock_anchor()}  # the clock is no block's note
    texts = notes.read_many(anchors, tip) if tip else {}
    folds: dict[str, Folded] = {}

    def folded(anchor: str) -> Folded:
        if anchor not in folds:
            folds[anchor] = fold((texts.get(anchor) or "").splitlines())
        return folds[anchor]

    if "numbers" in due:
        numbers = {a: retrieval_numbers(folded(a)) for a in due["numbers"] & anchors}
        ledgerstate.advance(db, kept["numbers"], tip, numbers)
    if "pairs" in due:
        pairs = {
            a: staged_in(folded(a)) if COOCCUR in texts.get(a, "") else 0 for a in due["pairs"]
        }
        pairstate.advance(db, kept["pairs"], tip, pairs)


def _changed(notes: NotesLedger, before: str | None, tip: str) -> set[str] | None:
    """Anchors whose notes differ between the rows' commit and ``tip``; None when unknowable."""
    if before is None:
        return None
    try:
        return notes.changed_anchors(before or None, tip or None)
    except (KeyError, ValueError, pygit2.GitError):  # a commit this repository lacks
        return None
