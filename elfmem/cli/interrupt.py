"""Ctrl-C during a long write: stop between items and commit what was done, and say so.

A Ctrl-C that raised ``KeyboardInterrupt`` wherever a dream happened to be would throw away the
items it had finished, or leave the user guessing whether the commit was made. ``stopping``
takes SIGINT for the length of the command instead: it says at once what will happen, and the
progress callback it hands out raises ``Stop`` at the next item boundary, which the operation
honours by committing the items done so far.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import click

from elfmem.progress import Progress, Stop


class Stopping:
    """A progress callback (wrapping an optional bar) that raises ``Stop`` once Ctrl-C came."""

    def __init__(self, inner: Progress | None) -> None:
        self.inner = inner
        self.requested = threading.Event()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.inner is not None:
            self.inner(stage, done, total)
        if self.requested.is_set():
            raise Stop(stage)

    def interrupt(self, signum: int, frame: FrameType | None) -> None:
        again = self.requested.is_set()
        self.requested.set()
        click.echo(
            "\nelfmem: still finishing: the commit in progress is completed, not torn."
            if again
            else "\nelfmem: Ctrl-C: stopping after the current block; what is done will be "
            "committed.",
            err=True,
        )


@contextmanager
def stopping(inner: Progress | None) -> Iterator[Stopping]:
    """SIGINT sets the stop flag for the duration (main thread only; elsewhere, nothing)."""
    callback = Stopping(inner)
    if threading.current_thread() is not threading.main_thread():
        yield callback
        return
    previous = signal.signal(signal.SIGINT, callback.interrupt)
    try:
        yield callback
    finally:
        signal.signal(signal.SIGINT, previous)
