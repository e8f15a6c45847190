"""How long operations report progress, without knowing who is watching.

Library code calls ``progress(stage, done, total)``; the CLI turns the calls into a bar on stderr,
the MCP server and the API ignore them by default. A leaf module like ``errors`` so every layer may
import it.
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str, int, int], None]
"""``(stage, done, total)``: ``stage`` names the step ("parse", "embed", "dream", ...)."""


def silent(stage: str, done: int, total: int) -> None:
    """The default: report nothing."""


class Stop(Exception):  # noqa: N818 - a request, not an error
    """Raised by a progress callback to stop between items (Ctrl-C at the command line).

    An operation that honours it keeps and commits the items done so far and says it stopped;
    one that cannot stop part-way lets it pass and finishes.
    """
