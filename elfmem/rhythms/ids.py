"""Block ids the way git takes commit ids: any unique prefix of at least four characters.

Resolved once here, at the top of every operation that takes an id, so the CLI, the API and the
MCP tools all accept ``649f`` for ``649f0c2e8a1b3d57`` without each command knowing about it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from elfmem.block.model import BLOCK_ID_RE
from elfmem.block.text import preview
from elfmem.errors import InvalidInput
from elfmem.index import queries
from elfmem.rhythms.core import Core

if TYPE_CHECKING:  # the graph layer loads recall; a remember that names a block needs neither
    from elfmem.rhythms.graph import ConnectSpec

MIN_PREFIX = 4
"""git's own minimum: shorter prefixes match too much to be worth typing."""
SHOWN = 10
"""Candidates an ambiguous prefix lists; more would bury the point (type more characters)."""


def resolve(core: Core, ref: str) -> str:
    """The full block id ``ref`` stands for.

    A full id is returned as given, without a lookup, so every operation keeps its own
    "no block has id" error; so is a prefix nothing matches. A prefix shorter than
    ``MIN_PREFIX`` or shared by several blocks is refused, listing the candidates.
    """
    text = ref.strip()
    if BLOCK_ID_RE.match(text):
        return text
    if len(text) < MIN_PREFIX:
        raise InvalidInput(
            f"Block id {ref!r} is too short: give at least {MIN_PREFIX} characters of it.",
            "Copy more of the id from `elfmem ls` or a recall result.",
        )
    prefix = text.lower()
    core.sync()
    found = queries.ids_with_prefix(core.db(), prefix, limit=SHOWN + 1)
    if not found:
        return text
    if len(found) == 1:
        return found[0][0]
    listed = "; ".join(f"{block_id} {preview(content)}" for block_id, content in found[:SHOWN])
    more = ", and more" if len(found) > SHOWN else ""
    raise InvalidInput(
        f"Block id prefix {ref!r} is ambiguous: it matches {listed}{more}.",
        "Give more characters of the id, enough to match one block.",
    )


def resolve_all(core: Core, refs: Sequence[str]) -> list[str]:
    """Each of ``refs`` resolved, in order (``resolve``)."""
    return [resolve(core, ref) for ref in refs]


def resolve_specs(core: Core, specs: Sequence[ConnectSpec]) -> list[ConnectSpec]:
    """Links with both ends resolved (``resolve``)."""
    from elfmem.rhythms.graph import ConnectSpec

    return [
        ConnectSpec(resolve(core, s.source), resolve(core, s.target), s.relation) for s in specs
    ]
