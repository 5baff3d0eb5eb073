"""The compiled kernels behind :mod:`waterdrum_hf.schemes.exp_edit`: the key's uniforms
(Philox4x64-10, numpy's ``Philox`` bit generator re-implemented exactly) and the edit-distance
alignment cost of Kuditipudi et al., minimised over the key's cyclic shifts, compiled with
numba (cached on disk, GIL released) and run over Python threads like :mod:`.mt19937`.

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

LANES = 32
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
def _costs(
    key0: np.uint64, tokens: np.ndarray, key_length: int, vocab_size: int, out: np.ndarray
) -> None:
    """``out[i, t] = log(1 - xi[t mod key_length, tokens[i]])`` for ``t < out.shape[1]``."""
    span = out.shape[1]
    for i in range(tokens.shape[0]):
        token = np.uint64(tokens[i])
        for j in range(min(key_length, span)):
            u = uniform(key0, np.uint64(DOMAIN), np.uint64(j) * np.uint64(vocab_size) + token)
            out[i, j] = np.log1p(-u)
        for t in range(key_length, span):
            out[i, t] = out[i, t - key_length]


@_jit
def _block_cost(
    costs: np.ndarray, start: int, block: int, key_length: int, gamma: float, rows: np.ndarray
) -> float:
    """Least alignment cost of tokens ``start .. start + block - 1`` against the key from
    each shift ``s`` (key positions ``s .. s + block - 1`` mod ``key_length``), over all
    shifts: Levenshtein with substitution cost ``costs[i, t]`` and ``gamma`` per insertion
    or deletion. ``rows`` is scratch of shape ``(2, block + 1, LANES)``."""
    best = np.inf
    for first in range(0, key_length, LANES):
        lanes = min(LANES, key_length - first)
        prev = rows[0]
        cur = rows[1]
        for jj in range(block + 1):
            for s in range(lanes):
                prev[jj, s] = jj * gamma
        for i in range(1, block + 1):
            line = costs[start + i - 1]
            for s in range(lanes):
                cur[0, s] = i * gamma
            for jj in range(1, block + 1):
                offset = first + jj - 1
                for s in range(lanes):
                    value = prev[jj - 1, s] + line[offset + s]
                    other = prev[jj, s] + gamma
                    if other < value:
                        value = other
                    other = cur[jj - 1, s] + gamma
                    if other < value:
                        value = other
                    cur[jj, s] = value
            prev, cur = cur, prev
        for s in range(lanes):
            if prev[block, s] < best:
                best = prev[block, s]
    return best


@_jit
def alignment_kernel(
    tokens: np.ndarray,
    bounds: np.ndarray,
    jobs: np.ndarray,
    key_length: int,
    vocab_size: int,
    block: int,
    gamma: float,
    out: np.ndarray,
    first: int,
    step: int,
) -> None:
    """For jobs ``q = first, first + step, ...``: ``out[q]`` is the least cost, over windows
    of ``block`` tokens of text ``t = jobs[q, 0]`` (``tokens[bounds[t]:bounds[t + 1]]``; the
    whole text when ``block`` is 0) and over the key's shifts, under key ``jobs[q, 1]``."""
    for q in range(first, jobs.shape[0], step):
        text = tokens[bounds[jobs[q, 0]] : bounds[jobs[q, 0] + 1]]
        size = block if block > 0 else text.shape[0]
        costs = np.empty((text.shape[0], key_length + size + LANES), dtype=np.float64)
        _costs(np.uint64(jobs[q, 1]), text, key_length, vocab_size, costs)
        rows = np.empty((2, size + 1, LANES), dtype=np.float64)
        best = np.inf
        for start in range(text.shape[0] - size + 1):
            cost = _block_cost(costs, start, size, key_length, gamma, rows)
            if cost < best:
                best = cost
        out[q] = best
