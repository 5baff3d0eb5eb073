from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import norm
from tokenizer_builders import word_texts, word_tokenizer

from waterdrum_hf import Verifier
from waterdrum_hf.schemes import KGWScheme, WaterfallScheme, WatermarkScheme
from waterdrum_hf.schemes.base import PermutationScheme
from waterdrum_hf.scoring.analytic_null import (
    AnalyticNull,
    PositionMoments,
    effective_pairs,
    normal_p_value,
)


@pytest.mark.parametrize(
    ("scheme", "vocab_size", "mean", "variance"),
    [
        (WaterfallScheme(1), 1000, 0.0, 0.5),
        (WaterfallScheme(7), 101, 0.0, 0.5),
        (WaterfallScheme(600), 1000, 0.0, 0.5),  # a sine: k_p beyond max_freq = 499
        (KGWScheme(0.5), 1000, 0.0, 1.0),
        (KGWScheme(0.1), 999, 0.0, 1.0),
    ],
)
def test_position_moments_are_the_averages_over_the_positions(scheme, vocab_size, mean, variance):
    moments = PositionMoments.of(scheme, vocab_size)
    terms = scheme.position_terms(np.arange(vocab_size), vocab_size)
    assert moments.mean == pytest.approx(terms.mean(), abs=1e-15)
    assert moments.variance == pytest.approx(terms.var(), rel=1e-12)
    assert moments.mean == pytest.approx(mean, abs=1e-12)
    assert moments.variance == pytest.approx(variance, rel=1e-12)


def test_a_scheme_without_permutations_is_refused():
    class Other(WatermarkScheme):
        name = "other"
        check_vocab_size = token_terms = logits_processor = settings = None

    with pytest.raises(
        TypeError, match=r"does not state them: use the empirical null \(null_keys=K\)"
    ):
        Other().null_moments(10)


def test_position_moments_of_a_term_with_a_nonzero_mean():
    """A term x / N on positions 0..4: mean 0.4, variance 0.08 (the variance is about the mean)."""

    class Ramp(PermutationScheme):
        name = "ramp"
        check_vocab_size = token_terms = logits_processor = settings = position_bias = None

        def position_terms(self, positions, vocab_size):
            return positions / vocab_size

    moments = PositionMoments.of(Ramp(), 5)
    assert (moments.mean, moments.variance, moments.vocab_size) == pytest.approx((0.4, 0.08, 5))


def exact_moments(contexts, tokens, weights, scheme, vocab_size):
    """Mean and variance of sum_m weights[m] f(perm_{contexts[m]}[tokens[m]]) by enumerating
    every permutation of every context (independent and uniform)."""
    terms = scheme.position_terms(np.arange(vocab_size), vocab_size)
    distinct = sorted(set(contexts))
    perms = np.array(list(itertools.permutations(range(vocab_size))))
    values = []
    for choice in itertools.product(range(len(perms)), repeat=len(distinct)):
        perm_of = {c: perms[i] for c, i in zip(distinct, choice, strict=True)}
        picked = zip(contexts, tokens, weights, strict=True)
        values.append(sum(w * terms[perm_of[c][t]] for c, t, w in picked))
    return np.mean(values), np.std(values)


@pytest.mark.parametrize("scheme", [WaterfallScheme(1), WaterfallScheme(2), KGWScheme(0.4)])
def test_mean_and_std_are_exact_by_enumeration(scheme):
    """N = 5: every permutation of both contexts enumerated. Repeats (one pair three times),
    distinct tokens after one context (drawn without replacement) and two contexts."""
    vocab_size = 5
    contexts = [0, 0, 0, 0, 3, 3, 0]
    tokens = [1, 2, 1, 4, 1, 0, 1]
    samples = [0, 0, 0, 1, 1, 2, 2]
    sample_weights = np.array([0.5, 0.2, 0.3])
    null = AnalyticNull(
        np.array(contexts)[:, None],
        np.array(tokens),
        np.array(samples),
        3,
        PositionMoments.of(scheme, vocab_size),
    )
    mean, std = null.mean_std(np.arange(3), sample_weights)
    want = exact_moments(contexts, tokens, sample_weights[samples], scheme, vocab_size)
    assert (mean, std) == pytest.approx(want, abs=1e-12)
    # A subset of the samples (an owner's queries) reads only its own pairs.
    mean, std = null.mean_std(np.array([2, 0]), np.array([1.0, 2.0]))
    keep = [m for m, s in enumerate(samples) if s != 1]
    weights = [{0: 2.0, 2: 1.0}[samples[m]] for m in keep]
    want = exact_moments(
        [contexts[m] for m in keep], [tokens[m] for m in keep], weights, scheme, vocab_size
    )
    assert (mean, std) == pytest.approx(want, abs=1e-12)


def test_longer_contexts_are_told_apart():
    """n_gram = 3: (1, 2) and (2, 1) are different contexts, so independent permutations."""
    moments = PositionMoments.of(WaterfallScheme(1), 5)
    tokens, samples = np.array([3, 4]), np.array([0, 0])
    same = AnalyticNull(np.array([[1, 2], [1, 2]]), tokens, samples, 1, moments)
    other = AnalyticNull(np.array([[1, 2], [2, 1]]), tokens, samples, 1, moments)
    assert same.mean_std(np.array([0]), np.array([1.0]))[1] == pytest.approx(
        np.sqrt(0.5 * (2 - 2 / 4))
    )
    assert other.mean_std(np.array([0]), np.array([1.0]))[1] == pytest.approx(np.sqrt(0.5 * 2))
    # (1, 2) and (1, 3) share their first token only: still two contexts.
    shared_first = AnalyticNull(np.array([[1, 2], [1, 3]]), tokens, samples, 1, moments)
    assert shared_first.mean_std(np.array([0]), np.array([1.0]))[1] == pytest.approx(1.0)


def test_mean_scales_with_the_total_weight_and_tiny_vocabularies_are_exact():
    """A term with mean 0.25: the null mean is 0.25 times the weights' sum. N = 2: two
    contexts, one pair each, independent (variance 0.5 + 0.5); N = 1: one position, no spread."""
    two = AnalyticNull(
        np.array([[0], [1]]), np.array([0, 1]), np.array([0, 1]), 2, PositionMoments(0.25, 0.5, 2)
    )
    assert two.mean_std(np.array([0, 1]), np.array([1.0, 1.0])) == pytest.approx((0.5, 1.0))
    one = AnalyticNull(
        np.array([[0]]), np.array([0]), np.array([0]), 1, PositionMoments(0.25, 0.5, 1)
    )
    assert one.mean_std(np.array([0]), np.array([2.0])) == (0.5, 0.0)
    assert two.mean_std([], []) == (0.0, 0.0)  # no samples: no pairs


def test_trailing_samples_without_pairs_read_nothing():
    """The last sample has no countable pair (a query's unscored sample): selecting it adds
    nothing."""
    moments = PositionMoments(0.25, 0.5, 5)
    null = AnalyticNull(np.array([[0], [1]]), np.array([2, 3]), np.array([0, 1]), 3, moments)
    with_empty = null.mean_std(np.array([0, 1, 2]), np.array([1.0, 1.0, 0.0]))
    assert with_empty == null.mean_std(np.array([0, 1]), np.array([1.0, 1.0]))
    assert with_empty == pytest.approx((0.5, 1.0))


def test_pair_ids_of_a_large_vocabulary_do_not_wrap_around():
    """Contexts given as uint32 (a tokenizer's dtype): with N = 2**17 the context 2**15 + 1
    times N passes 2**32; a pair id computed in uint32 would fall onto context 1's."""
    moments = PositionMoments(0.0, 0.5, 2**17)
    contexts = np.array([[2**15 + 1], [1]], dtype=np.uint32)
    null = AnalyticNull(contexts, np.array([0, 0]), np.array([0, 1]), 2, moments)
    assert null.mean_std(np.array([0, 1]), np.array([1.0, 1.0]))[1] == pytest.approx(1.0)
    _, pair_contexts = null.pair_weights(np.array([0, 1]), np.array([1.0, 1.0]))
    assert sorted(pair_contexts) == [1, 2**15 + 1]


@pytest.mark.parametrize("scheme", ["waterfall", "kgw"])
def test_agrees_with_the_empirical_null_over_many_keys(scheme):
    """Texts with many repeated pairs (Zipf ids, exponent 2): the spread of the set mean over 2,000 random
    keys is the analytic one to within its sampling error (~1.6 %)."""
    vocab_size = 64
    tok = word_tokenizer(vocab_size)
    verifier = Verifier(tok, scheme=scheme)
    token_ids = verifier.token_ids(word_texts(vocab_size, 12, 30, seed=4, zipf=2.0))
    null = verifier.null_reference_of_token_ids(token_ids, 2000, seed=1)
    key_means = null.scores.mean(axis=0)
    analytic = AnalyticNull(
        *verifier.countable_pairs(token_ids),
        len(token_ids),
        verifier.scheme.null_moments(vocab_size),
    )
    weights = 1.0 / (len(token_ids) * null.counts)
    mean, std = analytic.mean_std(np.arange(len(token_ids)), weights)
    assert key_means.std() == pytest.approx(std, rel=0.06)
    assert abs(key_means.mean() - mean) < 4 * std / np.sqrt(2000)
    pair_weights, _ = analytic.pair_weights(np.arange(len(token_ids)), weights)
    assert pair_weights.sum() == pytest.approx(1.0)
    # Ignoring that pairs repeat would understate the spread by much more than that.
    naive = np.sqrt(0.5 * np.sum(np.repeat(weights, null.counts) ** 2))
    assert naive < 0.8 * std


def test_effective_pairs_counts_equal_weights_and_discounts_unequal_ones():
    assert effective_pairs(np.full(50, 0.02)) == pytest.approx(50)
    assert effective_pairs(np.full(4, 1.0)) == pytest.approx(4)  # any scale
    assert effective_pairs(np.array([0.9] + [0.001] * 100)) < 1.3


def test_normal_p_value_is_the_normal_tail():
    for value in (-1.0, 0.0, 0.3, 2.5):
        assert normal_p_value(value, 0.1, 0.4) == pytest.approx(norm.sf(value, 0.1, 0.4))
    with pytest.raises(ValueError, match="`std` must be > 0"):
        normal_p_value(1.0, 0.0, 0.0)


def test_samples_must_come_grouped():
    moments = PositionMoments.of(WaterfallScheme(1), 5)
    with pytest.raises(ValueError, match="non-decreasing"):
        AnalyticNull(np.zeros((2, 1), int), np.array([1, 2]), np.array([1, 0]), 2, moments)


@pytest.mark.parametrize("dtype", [np.uint64, np.uint32, np.int32])
def test_ids_of_any_integer_dtype_give_the_same_null(dtype):
    """Tokens and sample indices as uint64 (or any integer dtype) are the int64 ones: int64
    context ids plus uint64 tokens would promote the pair ids to float64, whose contexts then
    index nothing."""
    moments = PositionMoments.of(WaterfallScheme(1), 5)
    contexts = np.array([[1, 2], [1, 2], [2, 1]])
    tokens, samples = np.array([3, 4, 3]), np.array([0, 0, 1])
    want = AnalyticNull(contexts, tokens, samples, 2, moments)
    null = AnalyticNull(contexts, tokens.astype(dtype), samples.astype(dtype), 2, moments)
    chosen, weights = np.array([0, 1]), np.array([1.0, 0.5])
    pair_weights, pair_contexts = null.pair_weights(chosen, weights)
    want_weights, want_contexts = want.pair_weights(chosen, weights)
    assert pair_contexts.dtype == np.int64 and pair_contexts.tolist() == want_contexts.tolist()
    np.testing.assert_array_equal(pair_weights, want_weights)
    assert null.mean_std(chosen, weights) == want.mean_std(chosen, weights)
    # Two tokens after context (1, 2), one after (2, 1): 0.5 (2 - 2/4) + 0.25 * 0.5.
    assert want.mean_std(chosen, weights)[1] == pytest.approx(np.sqrt(0.75 + 0.125))
