"""Adapted KGW (Kirchenbauer et al., 2023) for many data owners: each owner's key seeds its own
green lists.

Construction. For watermark id ``id`` and previous token ``p`` the green list holds the tokens
whose position in ``RandomState((id, p)).permutation(N)`` is below ``G = floor(gamma * N)``:
a uniformly random set of ``G`` tokens per (owner, context), drawn with the exact permutation
kernel Waterfall uses, so ids have the same range, derivation (``key_from_secret``) and
privacy as Waterfall's. The writer adds ``delta`` to the logits of green tokens; the reader
asks, token by token, whether it is green.

Score. A token's term is ``(green - g) / sqrt(g (1 - g))`` with ``g = G / N`` the exact green
share, and a text's score is the mean of its counted tokens' terms: ``z / sqrt(T)``, where
``z`` is KGW's one-proportion z-score of the ``T`` counted tokens. Under a key that owns
nothing every token's position is uniform, so each term has mean 0 and variance 1: the score
reads 0 in expectation on text that does not carry the key and grows with the share of the
owner's green tokens, exactly as WaterDrum needs to pool and aggregate it like Waterfall's
(token-weighted over a query's samples, then averaged over queries). A single owner's
detector is ``sqrt(T) * score`` (:func:`kgw_z_score`).

Where this differs from the reference implementation (``lm-watermarking``): there one hash key
is mixed with the previous token to seed a ``torch`` generator and ``randperm(N)[:G]`` is the
green list; here every owner has its own key and the (key, previous token) pair seeds numpy's
MT19937 directly. Both draw a uniformly random green list of ``G`` tokens per context; the
pseudo-random generators differ, so green lists are not interchangeable with the reference's.
Repeated n-grams are counted every time, as Waterfall's score does.

Why it fits some settings better than Waterfall: one data owner who cares most about
calibration. Why not the overlap of many owners (the paper's desideratum): a token is either
green or not for each owner, so one text carries many owners' green lists only by diluting
each of them, where Waterfall's orthogonal functions overlap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from waterdrum_hf.schemes.base import PermutationScheme
from waterdrum_hf.utils.fields import flag


@dataclass(frozen=True)
class KGWScheme(PermutationScheme):
    """KGW's green lists, one per (owner key, previous token).

    Args:
        gamma: share of the vocabulary that is green in each context, ``0 < gamma < 1``.
            The writer's strength ``delta`` is a setting of :meth:`position_bias` /
            :meth:`logits_processor` (default 2.0).
        n_gram: as for every :class:`~waterdrum_hf.schemes.WatermarkScheme`.
        vocab_size: as for every :class:`~waterdrum_hf.schemes.WatermarkScheme`.
    """

    gamma: float = flag(0.5, "KGW's green share of the vocabulary (default 0.5).")
    name = "kgw"

    def __post_init__(self) -> None:
        if isinstance(self.gamma, bool) or not isinstance(self.gamma, (int, float)):
            raise TypeError(f"`gamma` must be a number, got {type(self.gamma).__name__}.")
        if not 0 < self.gamma < 1:
            raise ValueError(f"`gamma` must be in (0, 1) (the green share), got {self.gamma}.")
        object.__setattr__(self, "gamma", float(self.gamma))
        super().__post_init__()

    def green_size(self, vocab_size: int) -> int:
        """``G = floor(gamma * N)``: how many tokens are green in each context."""
        return math.floor(self.gamma * vocab_size)

    def check_vocab_size(self, vocab_size: int) -> None:
        if not 1 <= self.green_size(vocab_size) <= vocab_size - 1:
            raise ValueError(
                f"`gamma`={self.gamma} leaves no green or no red token in a vocabulary of "
                f"{vocab_size}: pick gamma so that 1 <= gamma * N < N."
            )

    def position_terms(self, positions: np.ndarray, vocab_size: int) -> np.ndarray:
        green_share = self.green_size(vocab_size) / vocab_size
        green = (np.asarray(positions) < self.green_size(vocab_size)).astype(np.float64)
        return (green - green_share) / math.sqrt(green_share * (1.0 - green_share))

    def position_bias(self, vocab_size: int, *, delta: float = 2.0) -> np.ndarray:
        if isinstance(delta, bool) or not math.isfinite(delta) or delta < 0:
            raise ValueError(f"`delta` must be a finite number >= 0, got {delta!r}.")
        return np.where(np.arange(vocab_size) < self.green_size(vocab_size), float(delta), 0.0)


def kgw_z_score(score: float, num_tokens: int) -> float:
    """KGW's z-score of a text from its :class:`KGWScheme` score and its counted tokens."""
    return float(score) * math.sqrt(num_tokens)
