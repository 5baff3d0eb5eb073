"""TOFU's Forget Quality (Maini et al., 2024): how alike the unlearned model's and the
retrained model's Truth Ratios on the forget set are distributed.

It is the p-value of a two-sample Kolmogorov-Smirnov test (``scipy.stats.ks_2samp``, two-sided,
scipy's default method) between the two models' per-question Truth Ratios
(:func:`waterdrum_hf.baselines.truth_ratio.truth_ratio`): high (towards 1) when unlearning
looks like retraining, tiny when the distributions differ. TOFU (``locuslab/tofu``
``aggregate_eval_stat.py``, ``get_forget_quality``) tests the reciprocal ratios and
open-unlearning (``src/evals/metrics/privacy.py``, ``ks_test``) the ratios themselves; the
two-sided KS statistic only compares orderings, so both give this p-value.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import ks_2samp

from waterdrum_hf.baselines.inputs import finite_array


def forget_quality(
    unlearned_truth_ratios: Sequence[float] | np.ndarray,
    retrained_truth_ratios: Sequence[float] | np.ndarray,
) -> float:
    """The KS-test p-value between the unlearned and the retrained model's Truth Ratios on
    the forget set (one per question; the two sets of questions may differ in size)."""
    unlearned = finite_array(unlearned_truth_ratios, "unlearned_truth_ratios")
    retrained = finite_array(retrained_truth_ratios, "retrained_truth_ratios")
    return float(ks_2samp(unlearned, retrained).pvalue)
