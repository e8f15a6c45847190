"""Memory that travels between clones: merging, syncing, peers, exchange, backup, migration.

Above identity and below the adapters (DESIGN §8): it reads and writes through the store, the
index and the rhythms, and nothing below imports it.
"""
