"""The analytic null: what a key that owns nothing reads on given texts, from pair counts alone.

Every scheme that states its exact null moments (:meth:`~waterdrum_hf.schemes.WatermarkScheme.
null_moments`: a term's mean and the variance of any weighted sum of distinct pairs' terms,
:mod:`waterdrum_hf.schemes.null_moments`) has one: the permutation schemes as derived below,
Synth-ID through its hash residues (:mod:`waterdrum_hf.schemes.synthid.scheme`). A scheme that
does not (EXP-edit) is refused with the advice to use the empirical null (``null_keys=K``).

Setting (permutation schemes). A scheme built on the permutation kernel (:class:`~waterdrum_hf.schemes.base.
PermutationScheme`: Waterfall with any ``k_p``, KGW with any ``gamma``) reads token ``t`` after
context ``c`` (the previous ``n - 1`` tokens) under key ``id`` as ``f(pi_c(t))``, where
``pi_c = RandomState((id, *c)).permutation(N)`` and ``f`` is the scheme's
:meth:`~waterdrum_hf.schemes.base.PermutationScheme.position_terms` on ``0..N-1``. Every value
the metric reports is linear in these terms: a sample's token sum is ``sum_j f(pi_{c_j}(t_j))``
over its counted tokens, a query pools its samples' sums with weights ``a_s`` (token pooling:
``a_s = 1 / T_q``, ``T_q`` the counted tokens of the query's samples; mean pooling:
``a_s = 1 / (S_q T_s)`` over the ``S_q`` scored samples), and a set (or an owner) averages its
``R`` scored queries. Collecting equal pairs,

    V = sum_p W_p f(pi_{c_p}(t_p)),    W_p = sum over occurrences of pair p of a_s / R,

where ``p`` runs over the distinct (context, token) pairs of the set's samples: a pair that
repeats, in one text or across texts, has one term whose weights add *before* squaring.

The null. Under a key that owns nothing, each context's permutation is a uniformly random
permutation of ``0..N-1`` (the key is random; the kernel is exact numpy, and numpy's
``RandomState`` is treated as an ideal random source), and permutations of different contexts
are independent (different seeds). Hence, exactly, not asymptotically:

* one pair: ``pi_c(t)`` is uniform on ``0..N-1``, so ``E f = mu = (1/N) sum_x f(x)`` and
  ``Var f = s2 = (1/N) sum_x (f(x) - mu)^2``: averages over the N positions, computed per
  scheme through the seam (Waterfall's cosine/sine of a frequency in ``1..max_freq`` has
  ``mu = 0``, ``s2 = 1/2``; KGW's standardised green indicator ``mu = 0``, ``s2 = 1``);
* two distinct tokens after the same context take two distinct positions of one permutation,
  a draw without replacement: ``Cov = -s2 / (N - 1)``;
* pairs with different contexts are independent.

So with ``C_c = sum_{p in c} W_p`` (the weight of context ``c``),

    E V   = mu * sum_p W_p                     (= mu for a set or owner value: sum_p W_p = 1),
    Var V = s2 * sum_c [ sum_{p in c} W_p^2 - (C_c^2 - sum_{p in c} W_p^2) / (N - 1) ]
          = s2 / (N - 1) * ( N sum_p W_p^2 - sum_c C_c^2 ).

This is what :class:`AnalyticNull` computes, for any pooling and any set of queries; it needs
the pair counts only, no permutation, so it costs a sort of the pairs.

The p-value. The exact null distribution of ``V`` is a sum of many small dependent bounded
terms; we use its first two moments and the normal approximation,
``p = P(Z >= (V - E V) / sd V)`` (:func:`normal_p_value`). It holds when no few pairs carry
most of the weight (Lindeberg: ``max_p W_p`` small against ``sd V``). It breaks when a set has
few distinct pairs (very short sets) or when a few pairs repeat very often (a model that
repeats one phrase): there ``V`` is close to a sum of a handful of terms, whose law is far
from normal (Waterfall's cosine of a uniform position is arcsine-distributed: bounded, so the
normal tail is too heavy and p too large; KGW's term with a small ``gamma`` is skewed right,
so the normal tail is too light and p too small). :func:`effective_pairs` (the Kish
effective number of terms, ``(sum W)^2 / sum W^2``) says how many terms a value really has;
``benchmarks/null_agreement.py`` measures the agreement with the empirical null. Where it is
small, or for p-values far below 0.001, use the empirical null (``null_keys=K``), whose
p-value is exact at the cost of about one scoring pass per key.
"""

from __future__ import annotations

import math

import numpy as np

from waterdrum_hf.schemes.null_moments import PairNull, PositionMoments

__all__ = ["AnalyticNull", "PairNull", "PositionMoments", "effective_pairs", "normal_p_value"]


class AnalyticNull:
    """Null mean and standard deviation of weighted sums of samples' token sums.

    Args:
        contexts: ``(M, n - 1)`` context ids of every counted token occurrence.
        tokens: ``(M,)`` token ids.
        sample_of: ``(M,)`` index of the sample each occurrence belongs to, non-decreasing
            (what :meth:`waterdrum_hf.Verifier.countable_pairs` gives).
        num_samples: how many samples there are.
        moments: the scheme's null moments (``scheme.null_moments(N)``, a
            :class:`~waterdrum_hf.schemes.null_moments.PairNull`).
    """

    def __init__(
        self,
        contexts: np.ndarray,
        tokens: np.ndarray,
        sample_of: np.ndarray,
        num_samples: int,
        moments: PairNull,
    ) -> None:
        if len(sample_of) and np.any(np.diff(sample_of) < 0):
            raise ValueError("`sample_of` must be non-decreasing (occurrences grouped by sample).")
        self.moments = moments
        contexts = np.asarray(contexts, dtype=np.int64)
        if contexts.shape[1] == 1:  # n_gram = 2: the previous token is the context's id
            context_id = contexts[:, 0]
            self._context_rows = None
        else:
            rows, inverse = np.unique(contexts, axis=0, return_inverse=True)
            context_id, self._context_rows = inverse.reshape(-1), rows
        # A pair's id: its context's id times N plus its token (< 2**63 for N < 2**31).
        self._pair_id = context_id * moments.vocab_size + np.asarray(tokens, np.int64)
        counts = np.bincount(np.asarray(sample_of, np.int64), minlength=num_samples)
        self._ends = np.cumsum(counts)
        self._starts = self._ends - counts

    def pair_weights(
        self, samples: np.ndarray, weights: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``W_p`` of every distinct pair of ``samples`` (each sample's occurrences weighted by
        its entry of ``weights``) and the context id of each such pair."""
        pair_weights, pairs = self._distinct_pairs(samples, weights)
        return pair_weights, pairs // self.moments.vocab_size

    def mean_std(self, samples: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
        """Null mean and standard deviation of ``sum_s weights[s] * token_sum(samples[s])``."""
        pair_weights, pairs = self._distinct_pairs(samples, weights)
        context_id, tokens = np.divmod(pairs, self.moments.vocab_size)
        if self._context_rows is None:
            contexts = context_id[:, None]
        else:
            contexts = self._context_rows[context_id]
        variance = self.moments.sum_variance(pair_weights, contexts, tokens) if len(pairs) else 0.0
        return self.moments.mean * float(pair_weights.sum()), math.sqrt(max(variance, 0.0))

    def _distinct_pairs(
        self, samples: np.ndarray, weights: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``W_p`` and the id of every distinct pair of ``samples``."""
        samples = np.asarray(samples, dtype=np.int64)
        lengths = self._ends[samples] - self._starts[samples]
        occurrences = np.repeat(self._starts[samples] - np.cumsum(lengths) + lengths, lengths)
        occurrences += np.arange(lengths.sum())
        pairs, which = np.unique(self._pair_id[occurrences], return_inverse=True)
        pair_weights = np.bincount(which.reshape(-1), weights=np.repeat(weights, lengths))
        return pair_weights, pairs


def effective_pairs(pair_weights: np.ndarray) -> float:
    """Kish's effective number of terms ``(sum W)^2 / sum W^2``: how many equal-weight pairs a
    value is worth. The normal approximation needs it large (hundreds)."""
    return float(pair_weights.sum() ** 2 / (pair_weights @ pair_weights))


def normal_p_value(value: float, mean: float, std: float) -> float:
    """One-sided p-value of "no watermark" under the normal approximation:
    ``P(Z >= (value - mean) / std)`` for a standard normal ``Z`` (``std`` > 0)."""
    if not std > 0:
        raise ValueError(f"`std` must be > 0, got {std!r}.")
    return 0.5 * math.erfc((value - mean) / std / math.sqrt(2.0))
