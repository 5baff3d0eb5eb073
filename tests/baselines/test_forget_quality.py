"""TOFU's Forget Quality: the KS-test p-value of two models' Truth Ratios, against exact
p-values computed by hand and against TOFU's and open-unlearning's code on the same numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import ks_2samp

from waterdrum_hf.baselines import forget_quality


def test_forget_quality_is_the_exact_two_sided_ks_p_value():
    # Samples that do not overlap give D = 1; of the C(m + n, m) equally likely orderings
    # under the null, two (all of one sample first, or last) reach it: p = 2 / C(m + n, m).
    assert forget_quality([0.1, 0.2, 0.3], [0.4, 0.5, 0.6]) == pytest.approx(2 / math.comb(6, 3))
    assert forget_quality([4, 5, 6, 7], [0.5, 1, 2, 3]) == pytest.approx(2 / math.comb(8, 4))
    assert forget_quality([0.5, 1.0, 2.0], [0.5, 1.0, 2.0]) == pytest.approx(1.0)  # D = 0


def test_tofu_and_open_unlearning_orientations_give_the_same_p_value():
    rng = np.random.default_rng(2)
    unlearned = np.exp(rng.normal(0.2, 0.5, size=30))
    retrained = np.exp(rng.normal(0.0, 0.6, size=45))
    ours = forget_quality(unlearned, retrained)
    # open-unlearning src/evals/metrics/privacy.py, ks_test: the ratios themselves
    assert ours == pytest.approx(ks_2samp(unlearned, retrained).pvalue)
    # open-unlearning src/evals/metrics/utils.py, get_forget_quality: 1 / (tr + 1e-10)
    assert ours == pytest.approx(ks_2samp(1 / (unlearned + 1e-10), 1 / (retrained + 1e-10)).pvalue)
    # locuslab/tofu aggregate_eval_stat.py, get_forget_quality: exp(perturbed - paraphrased
    # loss), the reciprocal of the ratio
    assert ours == pytest.approx(ks_2samp(1 / unlearned, 1 / retrained).pvalue)


def test_forget_quality_refuses_bad_input():
    with pytest.raises(ValueError, match="`retrained_truth_ratios` is empty"):
        forget_quality([1.0], [])
    with pytest.raises(ValueError, match="`unlearned_truth_ratios` holds 1 NaN/inf"):
        forget_quality([1.0, math.inf], [1.0])
    with pytest.raises(ValueError, match="1-dimensional"):
        forget_quality([[1.0, 2.0]], [1.0])
