"""Memory that travels: peers, their mail and exchange bundles (DESIGN §8, above identity)."""
