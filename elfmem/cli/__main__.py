"""``python -m elfmem.cli``: the same command as ``elfmem``."""

from elfmem.launch import main

main()
