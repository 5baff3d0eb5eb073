"""The compiled kernel behind :mod:`waterdrum_hf.schemes.permutation`: numpy's legacy
``RandomState(seed).permutation(N)`` re-implemented exactly (MT19937 ``init_by_array`` seeding,
624-word state refills, tempering, and the interval-rejection Fisher-Yates shuffle), compiled
with numba and cached on disk, with the threads that spread distinct seeds over cores.

Without numba the kernels stay plain (unused) Python functions and :data:`BACKEND` is
``"numpy"``; ``WATERDRUM_PERMUTATION_BACKEND=numpy|numba`` forces one (read at import).
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

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
BACKEND = "numba" if _numba is not None else "numpy"
"""The backend chosen at import: ``"numba"`` where numba imports (and is not refused)."""


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
def positions_kernel(
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
def full_kernel(keys: np.ndarray, out: np.ndarray, first: int, step: int) -> None:
    """Write the whole permutation for seed ``keys[u]`` into row ``out[u]``, u = first, ...."""
    mt = np.empty(_MT_N, dtype=np.uint32)
    block = np.empty(_MT_N, dtype=np.uint32)
    for u in range(first, keys.shape[0], step):
        _seed_state(keys[u], mt)
        _shuffle(out[u], mt, block, 1)


def thread_count(n_keys: int, vocab_size: int) -> int:
    """One thread per usable core (at most ``NUMBA_NUM_THREADS``), one for small work."""
    if _numba is None or n_keys * vocab_size < _MIN_PARALLEL_STEPS:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, int(_numba.config.NUMBA_NUM_THREADS), n_keys))


def run_spread(kernel: Callable[..., None], n_keys: int, vocab_size: int, *args: object) -> None:
    """Run ``kernel(*args, first, step)`` on interleaved shares of ``n_keys`` seeds in threads.

    Each share has its own buffers and writes disjoint outputs; the kernel releases the GIL.
    """
    threads = thread_count(n_keys, vocab_size)
    if threads == 1:
        kernel(*args, 0, 1)
        return
    with ThreadPoolExecutor(threads, thread_name_prefix="waterdrum-permutation") as pool:
        for done in [pool.submit(kernel, *args, first, threads) for first in range(threads)]:
            done.result()
