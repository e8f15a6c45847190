"""Whether a newer statement corrects an older one: the same subject, another value.

Pure text, no model, no I/O.
"""

from __future__ import annotations

from elfmem.block.facts import compare


def corrects(old: str, new: str) -> bool:
    """True when ``new`` restates ``old``'s subject with another value."""
    return compare(old, new).revision_like
