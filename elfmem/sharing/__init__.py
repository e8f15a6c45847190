"""Memory that travels between clones: sync through git remotes, and the plain-git glue."""
