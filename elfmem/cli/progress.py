"""Progress bars for long commands: on stderr, only for a person watching, only when worth it.

stdout carries the data (and ``--json``), so a bar never goes there. A bar appears only when stderr
is a terminal, ``--json`` is off and a stage has at least ``MIN_TOTAL`` steps: a five-block dream
or a ten-line batch should print nothing extra.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

import click

from elfmem.progress import Progress

MIN_TOTAL = 50
"""Below this many steps the work is over before a bar could help."""

LABELS = {
    "check": "Checking",
    "parse": "Parsing files",
    "embed": "Embedding",
    "tokens": "Storing tokens",
    "dream": "Dreaming",
}


class StderrBar:
    """A ``Progress`` callback drawing one click bar per stage; a stage that restarts redraws."""

    def __init__(self, stream: TextIO, min_total: int = MIN_TOTAL) -> None:
        self._stream = stream
        self._min_total = min_total
        self._bar: Any = None
        self._key: tuple[str, int] | None = None
        self._done = 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if total < self._min_total:
            return
        if self._key != (stage, total) or done < self._done:
            self.close()
            label = LABELS.get(stage, stage.capitalize())
            self._bar = click.progressbar(length=total, label=label, file=self._stream)
            self._bar.__enter__()
            self._key, self._done = (stage, total), 0
        self._bar.update(done - self._done)
        self._done = done

    def close(self) -> None:
        """Finish the bar on screen (its last line stays; the next output starts below it)."""
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
        self._bar, self._key, self._done = None, None, 0


def wanted(json_: bool, stream: TextIO) -> bool:
    """A bar only helps a person at a terminal; scripts and ``--json`` readers get none."""
    isatty = getattr(stream, "isatty", None)
    return not json_ and callable(isatty) and bool(isatty())


@contextmanager
def progress_bar(json_: bool) -> Iterator[Progress | None]:
    """The callback a command passes to the API: a stderr bar, or None when none is wanted."""
    stream = sys.stderr
    if not wanted(json_, stream):
        yield None
        return
    bar = StderrBar(stream)
    try:
        yield bar
    finally:
        bar.close()
