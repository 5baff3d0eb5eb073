"""Positions under Waterfall's key-dependent permutations.

Waterfall permutes the vocabulary with ``np.random.RandomState(seed).permutation(N)`` where
``seed = (watermark id, previous token(s)...)``. Verification needs only ``perm[t]`` for the
tokens that actually occur, so :func:`permuted_positions` answers exactly that for many
(seed, token) pairs at once, expanding each distinct seed once; :func:`full_permutations`
returns whole permutations for the watermarking logits processor.

Two interchangeable backends give bit-identical results:

- ``numba``: an exact re-implementation of numpy's legacy path (MT19937 ``init_by_array``
  seeding, 624-word state refills, tempering, and the interval-rejection Fisher-Yates shuffle
  of ``RandomState.permutation``), compiled and cached on disk (:mod:`.mt19937`). For positions it stops each
  shuffle once the smallest needed position is final. Distinct seeds are spread over cores
  by Python threads running the GIL-free compiled kernel, not by numba's ``parallel=True``:
  its OpenMP layer makes forked children abort (``datasets.map(num_proc=...)`` forks) and its
  workqueue layer aborts on concurrent calls from two threads.
- ``numpy``: calls ``RandomState(seed).permutation(N)`` per distinct seed (the reference).

The numba backend is used when numba imports, else numpy; the environment variable
``WATERDRUM_PERMUTATION_BACKEND=numpy|numba`` forces one (read at import).
:func:`permutation_backend` says which is active.
"""

from __future__ import annotations

import numpy as np

from waterdrum_hf.keys import MAX_WATERMARK_ID as MAX_SEED  # a seed word has the id range
from waterdrum_hf.schemes.mt19937 import (
    BACKEND,
    BACKEND_ENV,
    MAX_VOCAB_SIZE,
    full_kernel,
    positions_kernel,
    run_spread,
)

__all__ = [
    "BACKEND_ENV",
    "MAX_VOCAB_SIZE",
    "full_permutations",
    "permutation_backend",
    "permuted_positions",
]

_BACKEND = BACKEND  # the dispatch below reads this name (tests switch it in-process)


def permutation_backend() -> str:
    """Return the active backend, ``"numba"`` or ``"numpy"``."""
    return _BACKEND


# ----------------------------------------------------------------------------------------
# Input checks and grouping (shared by both backends).


def _check_seeds(seeds: np.ndarray) -> np.ndarray:
    """Return ``seeds`` as a C-contiguous ``(M, K)`` int64 array, checked like numpy's seeding."""
    array = np.asarray(seeds)
    if array.ndim != 2:
        raise ValueError(
            f"`seeds` must be a 2-D (M, K) array of seed tuples, got shape {array.shape}."
        )
    if array.shape[1] == 0:
        raise ValueError("`seeds` rows are empty: a seed tuple needs at least one entry.")
    if array.dtype.kind not in "iu":
        raise TypeError(f"`seeds` must hold integers, got dtype {array.dtype}.")
    if array.size and (array.min() < 0 or array.max() > MAX_SEED):
        raise ValueError("`seeds` entries must be between 0 and 2**32 - 1 (numpy's seed range).")
    return np.ascontiguousarray(array, dtype=np.int64)


def _check_vocab_size(vocab_size: int) -> int:
    """Return ``vocab_size`` as an int in ``1..MAX_VOCAB_SIZE``."""
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, (int, np.integer)):
        raise TypeError(f"`vocab_size` must be an integer, got {type(vocab_size).__name__}.")
    if not 1 <= vocab_size <= MAX_VOCAB_SIZE:
        raise ValueError(f"`vocab_size` must be in 1..{MAX_VOCAB_SIZE}, got {vocab_size}.")
    return int(vocab_size)


def _check_tokens(tokens: np.ndarray, count: int, vocab_size: int) -> np.ndarray:
    """Return ``tokens`` as an int64 ``(count,)`` array of ids in ``0..vocab_size-1``."""
    array = np.asarray(tokens)
    if array.shape != (count,):
        raise ValueError(
            f"`tokens` must have shape ({count},) to match `seeds`, got {array.shape}."
        )
    if array.dtype.kind not in "iu":
        raise TypeError(f"`tokens` must hold integers, got dtype {array.dtype}.")
    if array.size and (array.min() < 0 or array.max() >= vocab_size):
        raise ValueError(f"`tokens` must be token ids in 0..{vocab_size - 1} (vocab_size - 1).")
    return array.astype(np.int64, copy=False)


def _group_rows(seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group equal rows of ``seeds`` (M, K).

    Returns ``(unique, order, bounds)``: rows ``order[bounds[u]:bounds[u + 1]]`` of ``seeds``
    all equal ``unique[u]``.
    """
    if seeds.shape[1] == 2:  # the usual n_gram = 2 case: one 64-bit key per row
        packed = (seeds[:, 0].astype(np.uint64) << np.uint64(32)) | seeds[:, 1].astype(np.uint64)
        order = np.argsort(packed, kind="stable")
        ordered = packed[order]
        changes = ordered[1:] != ordered[:-1]
    else:
        order = np.lexsort(seeds.T[::-1])
        ordered = seeds[order]
        changes = np.any(ordered[1:] != ordered[:-1], axis=1)
    bounds = np.concatenate(([0], np.flatnonzero(changes) + 1, [len(seeds)])).astype(np.int64)
    return seeds[order[bounds[:-1]]], order, bounds


# ----------------------------------------------------------------------------------------
# Backends. A GPU backend would plug in beside these two (and in the dispatch of the public
# functions below): the work is many independent seeds, each one sequential shuffle, so one
# GPU thread per distinct seed running _seed_state and _shuffle on its own row of a (U, N)
# buffer, then a gather of the needed positions.


def _positions_numpy(seeds: np.ndarray, tokens: np.ndarray, vocab_size: int) -> np.ndarray:
    """Reference: one ``RandomState(seed).permutation(N)`` per distinct seed."""
    unique, order, bounds = _group_rows(seeds)
    out = np.empty(len(tokens), dtype=np.int64)
    for u, seed in enumerate(unique):
        members = order[bounds[u] : bounds[u + 1]]
        perm = np.random.RandomState(tuple(int(s) for s in seed)).permutation(vocab_size)
        out[members] = perm[tokens[members]]
    return out


def _positions_numba(seeds: np.ndarray, tokens: np.ndarray, vocab_size: int) -> np.ndarray:
    """Compiled path: expand each distinct seed once, in parallel, stopping early."""
    unique, order, bounds = _group_rows(seeds)
    grouped = np.empty(len(tokens), dtype=np.int64)
    run_spread(
        positions_kernel,
        len(unique),
        vocab_size,
        unique.astype(np.uint32),
        bounds,
        tokens[order],
        vocab_size,
        grouped,
    )
    out = np.empty_like(grouped)
    out[order] = grouped
    return out


def _full_numpy(unique: np.ndarray, vocab_size: int) -> np.ndarray:
    """Reference: stack ``RandomState(seed).permutation(N)`` for each row."""
    out = np.empty((len(unique), vocab_size), dtype=np.int64)
    for u, seed in enumerate(unique):
        out[u] = np.random.RandomState(tuple(int(s) for s in seed)).permutation(vocab_size)
    return out


def _full_numba(unique: np.ndarray, vocab_size: int) -> np.ndarray:
    """Compiled path: one whole shuffle per row, rows in parallel."""
    out = np.empty((len(unique), vocab_size), dtype=np.int64)
    run_spread(full_kernel, len(unique), vocab_size, unique.astype(np.uint32), out)
    return out


def permuted_positions(seeds: np.ndarray, tokens: np.ndarray, vocab_size: int) -> np.ndarray:
    """Return ``RandomState(tuple(seeds[m])).permutation(vocab_size)[tokens[m]]`` for every m.

    Args:
        seeds: ``(M, K)`` integer array; row m is the seed tuple of pair m, every entry in
            ``0..2**32-1``. Rows may repeat: each distinct row is expanded once.
        tokens: ``(M,)`` integer array of token ids in ``0..vocab_size-1``.
        vocab_size: the permutation length N.

    Returns:
        ``(M,)`` int64 array of positions.

    Raises:
        ValueError: on mismatched shapes, or seeds / tokens out of range.
        TypeError: on non-integer input.
    """
    vocab_size = _check_vocab_size(vocab_size)
    seeds = _check_seeds(seeds)
    tokens = _check_tokens(tokens, len(seeds), vocab_size)
    if len(tokens) == 0:
        return np.empty(0, dtype=np.int64)
    if _BACKEND == "numba":
        return _positions_numba(seeds, tokens, vocab_size)
    return _positions_numpy(seeds, tokens, vocab_size)


def full_permutations(seeds: np.ndarray, vocab_size: int) -> np.ndarray:
    """Return ``RandomState(tuple(seeds[m])).permutation(vocab_size)`` stacked over m.

    Args:
        seeds: ``(M, K)`` integer array of seed tuples, entries in ``0..2**32-1``.
        vocab_size: the permutation length N.

    Returns:
        ``(M, vocab_size)`` int64 array; row m is the permutation for seed m (repeated seeds
        are computed once).
    """
    vocab_size = _check_vocab_size(vocab_size)
    seeds = _check_seeds(seeds)
    if len(seeds) == 0:
        return np.empty((0, vocab_size), dtype=np.int64)
    unique, order, bounds = _group_rows(seeds)
    full = _full_numba if _BACKEND == "numba" else _full_numpy
    perms = full(unique, vocab_size)
    inverse = np.empty(len(seeds), dtype=np.int64)
    inverse[order] = np.repeat(np.arange(len(unique)), np.diff(bounds))
    return perms[inverse]
