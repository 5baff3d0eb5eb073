"""Waterfall's watermarking function: the definition both the reader and the writer need.

The verifier evaluates the function at each token's permuted position; the logits processor
adds ``kappa`` times the same function to the logits. Defined here once.
"""

from __future__ import annotations

import numbers

import numpy as np


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


def watermark_bias(vocab_size: int, k_p: int, kappa: float) -> np.ndarray:
    """The writer's ``(N,)`` logit bias at each permuted position: ``kappa`` times function
    ``k_p`` (what :class:`~waterdrum_hf.schemes.WaterfallScheme` and its logits processor add)."""
    return kappa * watermark_function(np.arange(vocab_size), k_p, vocab_size)
