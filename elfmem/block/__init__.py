"""The block layer: the data model, where blocks live, and the Markdown file format.

Pure and free of I/O: everything above it (store, index, retrieval) reads and writes memory files
only through ``parse_*`` and ``render_*`` here.
"""

from elfmem.block.layout import (
    BUCKET_LIMIT,
    DIR_STATUS,
    MEMORY_DIR,
    SELF_FILE,
    STATUS_DIRS,
    BucketKey,
    month_of,
    parse_bucket_path,
)
from elfmem.block.model import (
    BLOCK_ID_RE,
    CATEGORY_RE,
    FIELD_KEY_RE,
    RELATIONS,
    TAG_RE,
    TIER_LAMBDA,
    Block,
    Relation,
    content_hash,
    derive_tier,
    is_valid_category,
    is_valid_tag,
    new_block_id,
    normalise_content,
    normalise_for_match,
    now_iso,
)
from elfmem.block.parse import (
    CUE_KEY,
    FRONTMATTER_KEYS,
    FRONTMATTER_OPEN,
    HEADING_PREFIX,
    parse_bytes,
    parse_file,
    parse_located,
)
from elfmem.block.render import render_block, render_file, validate_block
from elfmem.block.text import EMPTY_PREVIEW, plain_text, preview

__all__ = [
    "BLOCK_ID_RE",
    "BUCKET_LIMIT",
    "CATEGORY_RE",
    "CUE_KEY",
    "DIR_STATUS",
    "EMPTY_PREVIEW",
    "FIELD_KEY_RE",
    "FRONTMATTER_KEYS",
    "FRONTMATTER_OPEN",
    "HEADING_PREFIX",
    "MEMORY_DIR",
    "RELATIONS",
    "SELF_FILE",
    "STATUS_DIRS",
    "TAG_RE",
    "TIER_LAMBDA",
    "Block",
    "BucketKey",
    "Relation",
    "content_hash",
    "derive_tier",
    "is_valid_category",
    "is_valid_tag",
    "month_of",
    "new_block_id",
    "normalise_content",
    "normalise_for_match",
    "now_iso",
    "parse_bucket_path",
    "parse_bytes",
    "parse_file",
    "parse_located",
    "plain_text",
    "preview",
    "render_block",
    "render_file",
    "validate_block",
]
