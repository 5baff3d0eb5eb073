"""Positions under Waterfall's key-dependent permutations.

Waterfall permutes the vocabulary with ``np.random.RandomState(seed).permutation(N)`` where
``seed = (watermark id, previous token(s)...)``. Verification needs only ``perm[t]`` for the
tokens that actually occur, so :func:`permuted_positions` answers exactly that for many
(seed, token) pairs at once, expanding each distinct seed once; :func:`full_permutations`
returns whole permutations for the watermarking logits processor.

Two interchangeable backends give bit-identical results:

- ``numba``: an exact re-implementation of numpy's legacy path (MT19937 ``init_by_array``
  seeding, 624-word state refills, tempering, and the interval-rejection Fisher-Yates shuffle
  of ``RandomState.permutation``), compiled and cached on disk. For positions it stops each
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

import os
import types
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

from waterdrum_hf.keys import MAX_WATERMARK_ID as MAX_SEED  # a seed word has the id range

MAX_VOCAB_SIZE = 2**31 - 1  # positions are shuffled in int32 buffers
# Below this many shuffle steps (~1 ms) a call runs on the calling thread alone.
_MIN_PARALLEL_STEPS = 2**19
BACKEND_ENV = "WATERDRUM_PERMUTATION_BACKEND"

# MT19937 constants (state length, shift, twist matrix, masks, tempering).
_MT_N = 624
_MT_M = 397
_MATRIX_A = 0x9908B0DF
_UPPER = 0x80000000
_LOWER = 0x7FFFFFFF
_WORD = 0xFFFFFFFF


def _import_numba(choice: str) -> types.ModuleType | None:
    """Return the numba module when the chosen backend may use it, else ``None``."""
    if choice == "numpy":
        return None
    try:
        import numba
    except ImportError as error:
        if choice == "numba":
            raise ImportError(
                f"{BACKEND_ENV}=numba but numba cannot be imported ({error}); install numba "
                f"or unset {BACKEND_ENV}."
            ) from error
        return None
    return numba


_CHOICE = os.environ.get(BACKEND_ENV, "").strip().lower() or "auto"
if _CHOICE not in ("auto", "numpy", "numba"):
    raise ValueError(f"{BACKEND_ENV} must be 'numpy' or 'numba' (or unset), got {_CHOICE!r}.")
_numba = _import_numba(_CHOICE)
_BACKEND = "numba" if _numba is not None else "numpy"


def permutation_backend() -> str:
    """Return the active backend, ``"numba"`` or ``"numpy"``."""
    return _BACKEND


# ----------------------------------------------------------------------------------------
# Compiled kernel. Without numba these stay plain (unused) Python functions.


F = TypeVar("F", bound=Callable[..., object])


def _jit(function: F) -> F:
    """Compile with numba (cached on disk, GIL released) when available; identity otherwise."""
    if _numba is None:
        return function
    compiled: F = _numba.njit(cache=True, nogil=True)(function)  # called as the function is
    return compiled


@_jit
def _seed_state(key: np.ndarray, mt: np.ndarray) -> None:
    """Fill ``mt`` (624 uint32) as MT19937 ``init_by_array(key)`` does; ``key`` holds uint32."""
    s = np.int64(19650218)
    mt[0] = s
    for i in range(1, _MT_N):
        s = (1812433253 * (s ^ (s >> 30)) + i) & _WORD
        mt[i] = s
    length = key.shape[0]
    i = 1
    j = 0
    prev = np.int64(mt[0])
    for _ in range(max(_MT_N, length)):
        prev = (
            (np.int64(mt[i]) ^ ((prev ^ (prev >> 30)) * 1664525)) + np.int64(key[j]) + j
        ) & _WORD
        mt[i] = prev
        i += 1
        j += 1
        if i >= _MT_N:
            mt[0] = mt[_MT_N - 1]
            i = 1
        if j >= length:
            j = 0
    for _ in range(_MT_N - 1):  # prev still equals mt[i - 1]
        prev = ((np.int64(mt[i]) ^ ((prev ^ (prev >> 30)) * 1566083941)) - i) & _WORD
        mt[i] = prev
        i += 1
        if i >= _MT_N:
            mt[0] = mt[_MT_N - 1]
            i = 1
    mt[0] = _UPPER


@_jit
def _refill(mt: np.ndarray, out: np.ndarray) -> None:
    """Advance the MT19937 state ``mt`` by one block; write the 624 tempered outputs to ``out``.

    Plain loops over uint32 arrays with fixed offsets, so LLVM vectorises them.
    """
    for k in range(_MT_N - _MT_M):
        y = (mt[k] & _UPPER) | (mt[k + 1] & _LOWER)
        mt[k] = mt[k + _MT_M] ^ (y >> 1) ^ ((y & 1) * _MATRIX_A)
    for k in range(_MT_N - _MT_M, _MT_N - 1):
        y = (mt[k] & _UPPER) | (mt[k + 1] & _LOWER)
        mt[k] = mt[k + _MT_M - _MT_N] ^ (y >> 1) ^ ((y & 1) * _MATRIX_A)
    y = (mt[_MT_N - 1] & _UPPER) | (mt[0] & _LOWER)
    mt[_MT_N - 1] = mt[_MT_M - 1] ^ (y >> 1) ^ ((y & 1) * _MATRIX_A)
    for k in range(_MT_N):
        y = mt[k]
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        out[k] = y


@_jit
def _shuffle(a: np.ndarray, mt: np.ndarray, block: np.ndarray, stop: int) -> None:
    """Run ``RandomState.permutation``'s shuffle on ``a`` for steps ``len(a)-1`` down to ``stop``.

    ``a`` becomes ``arange(len(a))`` shuffled; positions ``>= stop`` are then final. ``mt`` must
    be freshly seeded (``init_by_array`` leaves the output buffer empty, so the first draw
    refills). Step i draws 32-bit outputs masked with the smallest all-ones mask >= i until one
    is <= i, then swaps a[i] with a[draw]. Here a rejected draw swaps a[i] with itself and
    keeps i, which removes the unpredictable branch; the mask is constant over each
    power-of-two stretch of i, and every draw of a block runs in one fixed-length loop.
    """
    n = a.shape[0]
    for k in range(n):
        a[k] = k
    stop = max(stop, 1)
    i = np.int64(n - 1)
    pos = _MT_N
    while i >= stop:
        mask = i
        mask |= mask >> 1
        mask |= mask >> 2
        mask |= mask >> 4
        mask |= mask >> 8
        mask |= mask >> 16
        low = max((mask >> 1) + 1, stop)
        while i >= low:
            if pos == _MT_N:
                _refill(mt, block)
                pos = 0
            # Each draw lowers i by at most one, so this many draws all stay in the stretch.
            count = min(_MT_N - pos, i - low + 1)
            for p in range(pos, pos + count):
                r = np.int64(block[np.uint64(p)]) & mask
                accept = r <= i
                # Unsigned indices: numba then emits no negative-index wraparound (~30 % faster).
                ui = np.uint64(i)
                uj = np.uint64(r if accept else i)
                held = a[ui]
                a[ui] = a[uj]
                a[uj] = held
                i -= accept
            pos += count


@_jit
def _positions_kernel(
    keys: np.ndarray,
    bounds: np.ndarray,
    tokens: np.ndarray,
    vocab_size: int,
    out: np.ndarray,
    first: int,
    step: int,
) -> None:
    """For seeds ``keys[u]``, u = first, first + step, ...: ``out[k] = perm[tokens[k]]``.

    Group u is ``bounds[u]:bounds[u + 1]``; its shuffle stops at the group's smallest token.
    """
    a = np.empty(vocab_size, dtype=np.int32)
    mt = np.empty(_MT_N, dtype=np.uint32)
    block = np.empty(_MT_N, dtype=np.uint32)
    for u in range(first, keys.shape[0], step):
        start = bounds[u]
        end = bounds[u + 1]
        stop = vocab_size
        for k in range(start, end):
            stop = min(stop, tokens[k])
        _seed_state(keys[u], mt)
        _shuffle(a, mt, block, stop)
        for k in range(start, end):
            out[k] = a[tokens[k]]


@_jit
def _full_kernel(keys: np.ndarray, out: np.ndarray, first: int, step: int) -> None:
    """Write the whole permutation for seed ``keys[u]`` into row ``out[u]``, u = first, ...."""
    mt = np.empty(_MT_N, dtype=np.uint32)
    block = np.empty(_MT_N, dtype=np.uint32)
    for u in range(first, keys.shape[0], step):
        _seed_state(keys[u], mt)
        _shuffle(out[u], mt, block, 1)


def _thread_count(n_keys: int, vocab_size: int) -> int:
    """One thread per usable core (at most ``NUMBA_NUM_THREADS``), one for small work."""
    if _numba is None or n_keys * vocab_size < _MIN_PARALLEL_STEPS:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, int(_numba.config.NUMBA_NUM_THREADS), n_keys))


def _run_spread(kernel: Callable[..., None], n_keys: int, vocab_size: int, *args: object) -> None:
    """Run ``kernel(*args, first, step)`` on interleaved shares of ``n_keys`` seeds in threads.

    Each share has its own buffers and writes disjoint outputs; the kernel releases the GIL.
    """
    threads = _thread_count(n_keys, vocab_size)
    if threads == 1:
        kernel(*args, 0, 1)
        return
    with ThreadPoolExecutor(threads, thread_name_prefix="waterdrum-permutation") as pool:
        for done in [pool.submit(kernel, *args, first, threads) for first in range(threads)]:
            done.result()


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
    _run_spread(
        _positions_kernel,
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
    _run_spread(_full_kernel, len(unique), vocab_size, unique.astype(np.uint32), out)
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
