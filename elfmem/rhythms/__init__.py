"""The rhythms: capture, consolidation, retrieval, feedback and care of the memory."""
