"""Memory that travels: backup and restore, migration between formats, and switching from upstream.

This layer sits above the rhythms (DESIGN §8): it moves whole memories between places and
formats, through the store's writer and transport, and never touches git objects itself.
"""
