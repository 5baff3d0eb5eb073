"""What a key that owns nothing reads, as each scheme states it: the seam behind the analytic
null (:mod:`waterdrum_hf.scoring.analytic_null`).

Every value the metric reports is a weighted sum ``V = sum_p W_p term(p)`` over distinct
(context, token) pairs ``p``. A scheme that knows the exact law of its terms under a random key
gives :meth:`~waterdrum_hf.schemes.WatermarkScheme.null_moments`: a :class:`PairNull` with a
term's mean (so ``E V = mean * sum_p W_p``) and ``Var V`` for any weights
(:meth:`PairNull.sum_variance`). How pairs covary is the scheme's business: permutation schemes
(:class:`PositionMoments`) draw the tokens after one context without replacement; Synth-ID
(:class:`~waterdrum_hf.schemes.synthid.scheme.SynthIDNull`) shares one key residue per layer among
all pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


class PositionReader(Protocol):
    """What :meth:`PositionMoments.of` reads of a permutation scheme: its term per position."""

    def position_terms(self, positions: np.ndarray, vocab_size: int) -> np.ndarray: ...


class PairNull(Protocol):
    """A scheme's exact null moments of weighted sums of its distinct pairs' terms."""

    @property
    def mean(self) -> float:
        """A term's mean under a key that owns nothing (the null level of a score)."""
        ...

    @property
    def vocab_size(self) -> int:
        """The vocabulary the pairs' ids come from (``N``)."""
        ...

    def sum_variance(
        self, pair_weights: np.ndarray, contexts: np.ndarray, tokens: np.ndarray
    ) -> float:
        """``Var sum_p W_p term(p)`` under a key that owns nothing, for the distinct pairs
        ``(contexts[p], tokens[p])`` (``(P, n - 1)`` and ``(P,)``) with weights ``W``."""
        ...


@dataclass(frozen=True)
class PositionMoments:
    """A permutation scheme's null: the term at a uniformly random position in ``0..N-1``.

    Each context's permutation is uniform and independent of other contexts' (the key is
    random; numpy's ``RandomState`` taken as an ideal source). One pair's term has the mean and
    variance of the ``N`` positions' terms; two distinct tokens after one context take two
    distinct positions of one permutation (without replacement), so they covary by
    ``-variance / (N - 1)``; pairs of different contexts are independent. With ``C_c`` the
    weight of context ``c``, ``Var V = variance / (N - 1) * (N sum_p W_p^2 - sum_c C_c^2)``.
    """

    mean: float
    variance: float
    vocab_size: int

    @classmethod
    def of(cls, scheme: PositionReader, vocab_size: int) -> PositionMoments:
        """Exact averages over the ``N`` positions of ``scheme.position_terms``."""
        terms = scheme.position_terms(np.arange(vocab_size), vocab_size)
        mean = float(terms.mean())
        return cls(mean, float(np.mean((terms - mean) ** 2)), int(vocab_size))

    def sum_variance(
        self, pair_weights: np.ndarray, contexts: np.ndarray, tokens: np.ndarray
    ) -> float:
        contexts = np.asarray(contexts)
        if contexts.shape[1] == 1:
            _, context_of_pair = np.unique(contexts[:, 0], return_inverse=True)
        else:
            _, context_of_pair = np.unique(contexts, axis=0, return_inverse=True)
        context_weights = np.bincount(context_of_pair.ravel(), weights=pair_weights)
        n = self.vocab_size
        if n <= 1:
            return 0.0
        spread = n * float(pair_weights @ pair_weights) - float(context_weights @ context_weights)
        return self.variance * spread / (n - 1)
