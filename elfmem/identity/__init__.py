"""Identity: the raw constitution, the seeded roles, profession templates and init."""
