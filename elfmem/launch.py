"""The ``elfmem`` and ``git-elfmem`` console scripts: start the command line, Ctrl-C included.

A console script imports its entry point and runs a line of its own before any command runs,
so a Ctrl-C while the command line loads (click, the command table, the API a command imports)
surfaced as a ``KeyboardInterrupt`` traceback. Being the process's entry is this module's whole
job, so importing it takes SIGINT (unless the process ignores it, as under ``nohup``): until the
command line has loaded, Ctrl-C exits 130 with one line and no traceback. ``main`` then gives
SIGINT back, and a running command handles Ctrl-C in its own words (``elfmem.cli.contract``).
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

EXIT_INTERRUPTED = 130
"""128 + SIGINT, as shells report a program stopped by Ctrl-C (``elfmem.errors`` says the same)."""

STARTING = "elfmem: interrupted (Ctrl-C) while starting; nothing was done.\n"
RUNNING = "Error: interrupted (Ctrl-C).\nRecovery: Run `elfmem status` to see what was committed.\n"


def _stop_starting(signum: int, frame: FrameType | None) -> None:
    sys.stderr.write(STARTING)
    raise SystemExit(EXIT_INTERRUPTED)


_PREVIOUS = signal.getsignal(signal.SIGINT)
if _PREVIOUS is signal.default_int_handler:
    signal.signal(signal.SIGINT, _stop_starting)


def main() -> None:
    if sys.argv[1:] == ["--version"]:  # what scripts ask most often: no need to load click
        from elfmem import __version__

        sys.stdout.write(f"elfmem, version {__version__}\n")
        return
    try:
        from elfmem.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write(STARTING)
        sys.exit(EXIT_INTERRUPTED)
    if signal.getsignal(signal.SIGINT) is _stop_starting:
        signal.signal(signal.SIGINT, _PREVIOUS)
    try:
        cli_main()
    except KeyboardInterrupt:  # past click's own handling, e.g. while an error is printed
        sys.stderr.write(RUNNING)
        sys.exit(EXIT_INTERRUPTED)
