"""The parameters more than one area's tools take, worded once so the model reads them alike."""

from __future__ import annotations

from elfmem.mcp.spec import Param

CUE = Param("cue", str, "When a future agent should recall this: the situation, in one line.")
TAGS = Param("tags", list[str], 'Hierarchical tags such as "db/postgres".')
BLOCK_ID = Param(
    "block_id", str, "A block id from remember, recall or ls, or a unique prefix of 4+ characters."
)
