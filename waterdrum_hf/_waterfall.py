"""Waterfall's definitions that both the reader and the writer of a watermark need.

The verifier (:mod:`waterdrum_hf.verification`) evaluates the watermarking function at each
token's permuted position; the perturbation (:mod:`waterdrum_hf.perturbation`) adds ``kappa``
times the same function to the logits. The function, the key range and the drawing of random
keys that own nothing (null references, demo owners) are defined here once.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable

import numpy as np

MAX_WATERMARK_ID = 2**32 - 1
"""Largest watermark id: Waterfall seeds numpy's MT19937 with 32-bit words."""


def watermark_function_terms(k_p: int, vocab_size: int) -> tuple[str, int]:
    """Return ``("cos" | "sin", frequency)`` of Waterfall's Fourier function number ``k_p``.

    With ``max_freq = N//2 - 1`` (N even) or ``N//2`` (N odd), ``k_p <= max_freq`` is
    ``cos(2 pi k_p x / N)`` and ``max_freq < k_p <= 2 max_freq`` is
    ``sin(2 pi (k_p - max_freq) x / N)`` (waterfall 0.3.x).
    """
    if isinstance(k_p, bool) or not isinstance(k_p, numbers.Integral):
        raise TypeError(f"`k_p` must be an integer, got {type(k_p).__name__}.")
    max_freq = vocab_size // 2 - 1 if vocab_size % 2 == 0 else vocab_size // 2
    if not 1 <= k_p <= 2 * max_freq:
        raise ValueError(
            f"`k_p` must be in 1..{2 * max_freq} for a vocabulary of {vocab_size} tokens "
            f"(1..{max_freq} cosine, {max_freq + 1}..{2 * max_freq} sine), got {k_p}."
        )
    return ("cos", int(k_p)) if k_p <= max_freq else ("sin", int(k_p) - max_freq)


def watermark_function(positions: np.ndarray, k_p: int, vocab_size: int) -> np.ndarray:
    """Waterfall's function ``k_p`` at permuted ``positions`` in ``0..N-1`` (float64, in [-1, 1])."""
    function, frequency = watermark_function_terms(k_p, vocab_size)
    angle = np.asarray(positions, dtype=np.float64) * (2.0 * np.pi * frequency / vocab_size)
    return np.cos(angle) if function == "cos" else np.sin(angle)


def random_keys(num_keys: int, *, exclude: Iterable[int] = (), seed: int = 0) -> np.ndarray:
    """``num_keys`` distinct pseudo-random watermark ids, none of them in ``exclude``.

    Deterministic in ``seed``. Used for null references (keys that own nothing) and for
    owners who need a private key (the demo).
    """
    rng = np.random.default_rng(seed)
    excluded = {int(i) for i in exclude}
    keys: dict[int, None] = {}  # insertion-ordered set
    while len(keys) < num_keys:
        for key in rng.integers(0, MAX_WATERMARK_ID, size=num_keys, endpoint=True).tolist():
            if key not in excluded and len(keys) < num_keys:
                keys[key] = None
    return np.array(list(keys), dtype=np.int64)
