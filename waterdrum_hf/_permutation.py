"""Positions under Waterfall's key-dependent permutations.

Waterfall permutes the vocabulary with ``np.random.RandomState(seed).permutation(N)`` where
``seed = (watermark id, previous token(s)...)``. Verification needs only ``perm[t]`` for the
tokens that actually occur, so this module answers exactly that for many (seed, token) pairs
at once, expanding each distinct seed once.

This file holds the reference (pure numpy) path.
"""

from __future__ import annotations

import numpy as np

MAX_SEED = 2**32 - 1


def permuted_positions(seeds: np.ndarray, tokens: np.ndarray, vocab_size: int) -> np.ndarray:
    """Return ``RandomState(tuple(seeds[m])).permutation(vocab_size)[tokens[m]]`` for every m.

    Args:
        seeds: ``(M, K)`` integer array; row m is the seed tuple of pair m, every entry in
            ``0..2**32-1``.
        tokens: ``(M,)`` integer array of token ids in ``0..vocab_size-1``.
        vocab_size: the permutation length N.

    Returns:
        ``(M,)`` int64 array of positions.
    """
    seeds = np.asarray(seeds, dtype=np.int64)
    tokens = np.asarray(tokens, dtype=np.int64)
    out = np.empty(len(tokens), dtype=np.int64)
    if len(tokens) == 0:
        return out
    unique_seeds, inverse = np.unique(seeds, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(unique_seeds) + 1))
    for u, seed in enumerate(unique_seeds):
        members = order[bounds[u] : bounds[u + 1]]
        perm = np.random.RandomState(tuple(int(s) for s in seed)).permutation(vocab_size)
        out[members] = perm[tokens[members]]
    return out
