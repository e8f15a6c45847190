"""Care of a memory: health checks (doctor, the secret audit), status, git hooks and the staged
check they run, inspection, the graph page and index maintenance.

None of it is a rhythm of the memory itself; each looks after a memory the rhythms made, and
``operations.py`` holds their half of ``MemorySystem``.
"""
