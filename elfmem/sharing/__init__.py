"""Memory that travels between clones: merging, syncing, peers, exchange, backup, migration.

Above identity and below care and the API (docs/architecture.md): it reads and writes through
the store, the index and the rhythms, and nothing below imports it.
"""
