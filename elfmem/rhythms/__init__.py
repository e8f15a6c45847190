"""The rhythms: capture, consolidation, recall, feedback, connections, sessions and undo."""
