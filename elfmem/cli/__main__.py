"""``python -m elfmem.cli``: the same command as ``elfmem``."""

from elfmem.cli import main

main()
