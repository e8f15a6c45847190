"""elfmem: git-native adaptive memory for LLM agents.

Importing this package does no I/O and loads no model; ``MemorySystem`` is resolved on first use.
"""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False  # not typing's: `elfmem --version` loads nothing it does not print
if TYPE_CHECKING:
    from typing import Any

    from elfmem.api import MemorySystem

__all__ = ["MemorySystem", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "MemorySystem":
        from elfmem.api import MemorySystem

        return MemorySystem
    raise AttributeError(name)
