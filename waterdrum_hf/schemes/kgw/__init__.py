"""Adapted KGW: green lists per (owner key, previous token); written through the shared
permutation processor."""
