"""Which of two near blocks is a candidate revision of the other, without an LLM.

A revision needs three things: the same subject, a changed value of any kind, and an order in
time. The text decides the first two (``block/correction.py``: the older statement's subject is
kept and its value replaced, negated, or named as the former one; surrounding words allowed).
The model's cosine only keeps unrelated pairs out: the pair must sit above the model's floor for
a restatement (``RESTATED``, on the reference scale), far below the look-alike cut, because a
correction in ordinary words ("Dana Park now maintains the billing service; Alice Chen moved to
the search team") sits well below the sentence it corrects.

"Newer" is ``when:`` where both blocks have one, else ``created``, then the ``birth`` stamp in
the ledger for two captured in the same second by different commits. Two blocks of one batch
(one commit, even when its capture crossed a second), or with the same ``when:``, are a tie, and
a tie is never a revision: their order inside a batch says nothing about which is right.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from elfmem.block.correction import corrects
from elfmem.block.model import Block
from elfmem.index.calibration import Cuts

RESTATED = 0.60
"""Cosine, on the reference scale (``Cuts.scaled``), below which two texts are not taken to
restate one subject whatever their words say (0.507 for the embedded model)."""

Birth = Callable[[str], tuple[str, str]]
"""A block id → (the commit that captured it, the birth event's stamp); ("", "") if unknown."""


def _no_birth(_: str) -> tuple[str, str]:
    return ("", "")


def order_in_time(a: Block, b: Block, birth: Birth = _no_birth) -> tuple[Block, Block] | None:
    """(older, newer), or None for a tie: same ``when:``, or the same commit or second."""
    if a.when and b.when:  # ISO 8601 sorts as text; "2026-06" holds "2026-06-15": a tie
        wa, wb = a.when.split("/")[0], b.when.split("/")[0]
        if wa.startswith(wb) or wb.startswith(wa):
            return None
        return (a, b) if wa < wb else (b, a)
    (ca, ta), (cb, tb) = birth(a.id), birth(b.id)
    if ca and ca == cb:
        return None  # one commit is one batch, whichever second each block was stamped in
    if a.created != b.created:
        return (a, b) if a.created < b.created else (b, a)
    if not ca or not cb or not ta or not tb or ta == tb:
        return None
    return (a, b) if ta < tb else (b, a)


def revision_of(
    a: Block, b: Block, cosine: float, cuts: Cuts, birth: Birth = _no_birth
) -> tuple[Block, Block] | None:
    """(newer, older) when the newer block is a candidate revision of the older, else None."""
    if cosine < cuts.scaled(RESTATED):
        return None
    if not (corrects(a.content, b.content) or corrects(b.content, a.content)):
        return None  # the text first: births cost a read
    ordered = order_in_time(a, b, birth)
    if ordered is None:
        return None
    older, newer = ordered
    if not corrects(older.content, newer.content):
        return None
    return (newer, older)


def ledger_birth(lines: Callable[[str], list[str]]) -> Birth:
    """A ``Birth`` that reads each block's ``birth`` event from its ledger note once."""
    known: dict[str, tuple[str, str]] = {}

    def birth(block_id: str) -> tuple[str, str]:
        if block_id not in known:
            found = ("", "")
            for line in lines(block_id):
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict) and event.get("kind") == "birth":
                    stamp = (str(event.get("commit") or ""), str(event.get("ts") or ""))
                    if not found[1] or stamp[1] < found[1]:
                        found = stamp
            known[block_id] = found
        return known[block_id]

    return birth
