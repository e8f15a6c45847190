"""Identity: the raw constitution, seeded roles and templates, init, review and amendments,
and models of other minds."""
