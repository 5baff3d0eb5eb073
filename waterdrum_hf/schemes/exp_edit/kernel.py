"""The compiled kernels behind :mod:`waterdrum_hf.schemes.exp_edit.scheme`: the key's uniforms
(Philox4x64-10, numpy's ``Philox`` bit generator re-implemented exactly) and the edit-distance
alignment cost of Kuditipudi et al., minimised over the key's cyclic shifts, compiled with
numba (cached on disk, GIL released) and run over Python threads like :mod:`waterdrum_hf.schemes.mt19937`.

The key's uniform ``xi[j, v]`` (``j < key_length``, ``v < N``) is draw ``e = j * N + v`` of
``numpy.random.Generator(numpy.random.Philox(key=id + 2**64 * DOMAIN)).random(...)``: Philox
block ``e // 4 + 1`` (numpy increments its counter before the first block), 64-bit lane
``e % 4``, as a double ``(word >> 11) * 2**-53``. Being counter-based, any entry is computed
on its own, so a reader expands only the columns of the tokens a text holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

import numba
import numpy as np

DOMAIN = int.from_bytes(b"exp-edit", "big")
"""The second 64-bit word of the Philox key: keeps EXP-edit's stream apart from any other use
of a watermark id (the first word)."""

LANES = 128
"""Shifts of the key aligned at once: the DP's innermost loop runs over them (SIMD)."""

_M0 = np.uint64(0xD2E7470EE14C6C93)
_M1 = np.uint64(0xCA5A826395121157)
_W0 = np.uint64(0x9E3779B97F4A7C15)
_W1 = np.uint64(0xBB67AE8584CAA73B)
_LOW = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_S11 = np.uint64(11)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


F = TypeVar("F", bound=Callable[..., object])


def _jit(function: F) -> F:
    """Compile with numba, cached on disk, GIL released."""
    return cast(F, numba.njit(cache=True, nogil=True)(function))  # called as the function is


@_jit
def _mulhilo(a: np.uint64, b: np.uint64) -> tuple[np.uint64, np.uint64]:
    """High and low 64-bit words of the 128-bit product ``a * b`` (from 32-bit halves)."""
    a_lo = a & _LOW
    a_hi = a >> _S32
    b_lo = b & _LOW
    b_hi = b >> _S32
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    cross = (lo_lo >> _S32) + (hi_lo & _LOW) + lo_hi
    high = a_hi * b_hi + (hi_lo >> _S32) + (cross >> _S32)
    low = (cross << _S32) | (lo_lo & _LOW)
    return high, low


@_jit
def uniform(key0: np.uint64, key1: np.uint64, draw: np.uint64) -> float:
    """Draw number ``draw`` (a double in [0, 1)) of numpy's ``Philox(key=key0 + 2**64 key1)``."""
    c0 = draw // np.uint64(4) + np.uint64(1)
    c1 = np.uint64(0)
    c2 = np.uint64(0)
    c3 = np.uint64(0)
    k0 = key0
    k1 = key1
    for r in range(10):
        if r > 0:
            k0 = k0 + _W0
            k1 = k1 + _W1
        hi0, lo0 = _mulhilo(_M0, c0)
        hi1, lo1 = _mulhilo(_M1, c2)
        c0 = hi1 ^ c1 ^ k0
        c1 = lo1
        c2 = hi0 ^ c3 ^ k1
        c3 = lo0
    lane = draw % np.uint64(4)
    word = c0 if lane == 0 else c1 if lane == 1 else c2 if lane == 2 else c3
    return float(word >> _S11) * _TO_UNIT


@_jit
def key_rows(key0: np.uint64, rows: np.ndarray, vocab_size: int, out: np.ndarray) -> None:
    """``out[r, v] = xi[rows[r], v]`` for every token ``v`` (the writer's rows of the key)."""
    for r in range(rows.shape[0]):
        base = np.uint64(rows[r]) * np.uint64(vocab_size)
        for v in range(vocab_size):
            out[r, v] = uniform(key0, np.uint64(DOMAIN), base + np.uint64(v))


@_jit
def _cost_table(
    key0: np.uint64, tokens: np.ndarray, key_length: int, vocab_size: int, span: int
) -> np.ndarray:
    """``out[d, t] = log(1 - xi[t mod key_length, tokens[d]])`` for ``t < span`` (float32,
    as the authors' Levenshtein): with ``span = key_length + block + LANES`` every shift's key
    positions lie in one row without a modulo."""
    out = np.empty((tokens.shape[0], span), dtype=np.float32)
    for d in range(tokens.shape[0]):
        token = np.uint64(tokens[d])
        row = out[d]
        for j in range(key_length):
            u = uniform(key0, np.uint64(DOMAIN), np.uint64(j) * np.uint64(vocab_size) + token)
            row[j] = np.log1p(-u)
        for t in range(key_length, span):
            row[t] = row[t - key_length]
    return out


@numba.njit(cache=True, nogil=True, fastmath={"nnan", "ninf", "nsz"})
def _block_cost(
    table: np.ndarray,
    rows_of: np.ndarray,
    block: int,
    key_length: int,
    gamma: np.float32,
    scratch: np.ndarray,
) -> float:
    """Least alignment cost of the ``block`` tokens whose cost rows are ``table[rows_of]``
    against the key from each shift ``s`` (key positions ``s .. s + block - 1`` mod
    ``key_length``), over all shifts: Levenshtein with substitution cost ``table[., t]`` and
    ``gamma`` per insertion or deletion.

    ``LANES`` shifts run at once: the innermost loop is over them, with no dependency
    between iterations, so it compiles to SIMD (the reason for the separate ``left`` row and
    the row slices). ``scratch`` is ``(2, block + 1, LANES)``.
    """
    best = np.inf
    left = np.empty(LANES, dtype=np.float32)
    for first in range(0, key_length, LANES):
        prev = scratch[0]
        cur = scratch[1]
        for jj in range(block + 1):
            for s in range(LANES):
                prev[jj, s] = jj * gamma
        for i in range(1, block + 1):
            line = table[rows_of[i - 1], first:]
            for s in range(LANES):
                left[s] = i * gamma
                cur[0, s] = i * gamma
            for jj in range(1, block + 1):
                diagonal = prev[jj - 1]
                above = prev[jj]
                out = cur[jj]
                costs = line[jj - 1 : jj - 1 + LANES]
                for s in range(LANES):
                    value = min(diagonal[s] + costs[s], above[s] + gamma)
                    value = min(value, left[s] + gamma)
                    left[s] = value
                    out[s] = value
            prev, cur = cur, prev
        for s in range(min(LANES, key_length - first)):
            best = min(best, prev[block, s])
    return best


@_jit
def alignment_kernel(
    distinct: np.ndarray,
    distinct_bounds: np.ndarray,
    inverse: np.ndarray,
    bounds: np.ndarray,
    jobs: np.ndarray,
    sizes: np.ndarray,
    gamma: float,
    out: np.ndarray,
    first: int,
    step: int,
) -> None:
    """For jobs ``q = first, first + step, ...``: ``out[q]`` is the least cost, over windows
    of ``block`` tokens of text ``t = jobs[q, 0]`` (the whole text when ``block`` is 0) and
    over the key's shifts, under key ``jobs[q, 1]``.

    Text ``t`` is ``distinct[distinct_bounds[t]:][inverse[bounds[t]:bounds[t + 1]]]``: each
    distinct token's key costs are computed once. ``sizes`` is ``(key_length, vocab_size,
    block)``.
    """
    key_length, vocab_size, block = sizes[0], sizes[1], sizes[2]
    for q in range(first, jobs.shape[0], step):
        text = jobs[q, 0]
        rows_of = inverse[bounds[text] : bounds[text + 1]]
        size = block if block > 0 else rows_of.shape[0]
        tokens = distinct[distinct_bounds[text] : distinct_bounds[text + 1]]
        span = key_length + size + LANES
        table = _cost_table(np.uint64(jobs[q, 1]), tokens, key_length, vocab_size, span)
        scratch = np.empty((2, size + 1, LANES), dtype=np.float32)
        best = np.inf
        for start in range(rows_of.shape[0] - size + 1):
            cost = _block_cost(
                table, rows_of[start : start + size], size, key_length, np.float32(gamma), scratch
            )
            best = min(best, cost)
        out[q] = best
