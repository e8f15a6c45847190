"""Adapters to the outside: embedding models (and LLMs), each behind a small Protocol."""
