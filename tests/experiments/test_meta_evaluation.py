"""The meta-evaluation's measures (OpenUnlearning's protocol) on numbers with known answers:
faithfulness against scikit-learn's AUROC, R and Q at and beyond their cuts, and one seed's
scores from hand-made measurements."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from waterdrum_hf.experiments.reproduction.analysis import forget_value
from waterdrum_hf.experiments.reproduction.meta_evaluation import (
    HOLDING_SHARE,
    faithfulness,
    harmonic_mean,
    quantization_robustness,
    relearning_robustness,
    seed_scores,
    summarise_seeds,
    unit,
)


def test_faithfulness_is_the_auroc_of_holding_against_never_with_nan_left_out():
    holding, never = [0.9, 0.4, 0.7, math.nan, 0.4], [0.1, 0.4, 0.5]
    kept = [0.9, 0.4, 0.7, 0.4]
    expected = roc_auc_score([1] * 4 + [0] * 3, kept + never)
    assert faithfulness(holding, never) == pytest.approx(expected)
    assert faithfulness([0.2], [0.8]) == 0.0  # holding reads lower: 0, not 1
    assert math.isnan(faithfulness([math.nan], [0.1]))


@pytest.mark.parametrize(
    ("retrained", "unlearned", "expected"),
    [
        ((0.1, 0.3), (0.2, 0.6), 0.5),  # the unlearned model comes back twice as fast
        ((0.1, 0.5), (0.2, 0.4), 1.0),  # slower than the retrained: cut at 1
        ((0.3, 0.1), (0.2, 0.4), 0.0),  # the retrained model falls: cut at 0
        ((0.1, 0.3), (0.5, 0.5), 1.0),  # nothing came back: 1
        ((0.1, 0.3), (0.5, 0.4), 1.0),
    ],
)
def test_relearning_robustness(retrained, unlearned, expected):
    assert relearning_robustness(*retrained, *unlearned) == pytest.approx(expected)


def test_quantization_robustness_and_the_harmonic_mean():
    assert quantization_robustness(0.3, 0.6) == pytest.approx(0.5)
    assert quantization_robustness(0.6, 0.3) == 1.0  # quantization lowered it
    assert quantization_robustness(0.0, 0.2) == 0.0
    assert harmonic_mean(0.5, 1.0) == pytest.approx(2 / 3)
    assert harmonic_mean(0.0, 1.0) == 0.0
    assert math.isnan(harmonic_mean(math.nan, 1.0))


def test_signed_metrics_are_mapped_to_the_unit_interval():
    assert unit(-1.0, "waterdrum") == 0.0 and unit(0.5, "mia_zlib") == 0.75
    assert unit(0.5, "rouge_l") == 0.5 and unit(0.5, "extraction") == 0.5


def model(forget: float, mia: float) -> dict:
    """A measured model: two forget queries reading ``forget`` (and one retain query), and a
    set-level MIA value."""
    return {
        "waterdrum": np.array([forget, forget, 0.9]),
        "is_forget": np.array([True, True, False]),
        "mia": mia,
    }


def test_one_seeds_scores_from_hand_made_measurements():
    """Two settings; WaterDrum ranks every holding model above every retrained one but one
    (tie), and comes back under relearning at 0.4 of the retrained's pace on one method; the
    MIA rises under quantization."""
    calibrations = [
        {0.0: model(0.0, -0.2), 0.3: model(0.1, 0.0), HOLDING_SHARE: model(0.4, 0.2), 1.0: model(0.8, 0.6)},
        {0.0: model(0.4, -0.4), HOLDING_SHARE: model(0.4, 0.4), 1.0: model(0.9, 0.8)},
    ]  # fmt: skip
    perturbed = [
        {
            "retrained": {"before": model(0.0, 0.0), "relearned": model(0.2, 0.2)},
            "a": {"before": model(0.1, 0.0), "relearned": model(1.1, 0.2),
                  "quantized": model(0.1, 0.5)},
        },
        {
            "retrained": {"before": model(0.0, 0.0), "relearned": model(0.2, 0.2)},
            "b": {"before": model(0.1, 0.0), "relearned": model(0.2, 0.1),
                  "quantized": model(0.0, 0.0)},
        },
    ]  # fmt: skip
    scores = seed_scores(forget_value, calibrations, perturbed, "waterdrum")
    holding = [unit(v, "waterdrum") for v in (0.4, 0.8, 0.4, 0.9)]
    never = [unit(v, "waterdrum") for v in (0.0, 0.4)]
    assert scores["faithfulness"] == pytest.approx(
        roc_auc_score([1] * 4 + [0] * 2, holding + never)
    )
    # method a: dR = 0.2 / 2, dU = 1.0 / 2 on the unit scale: 0.2; method b: dU <= dR: 1
    assert scores["relearning"] == pytest.approx((0.2 + 1.0) / 2)
    assert scores["quantization"] == 1.0
    assert scores["robustness"] == pytest.approx(harmonic_mean(0.6, 1.0))
    mia = seed_scores(forget_value, calibrations, perturbed, "mia")
    # a: quantized 0.5 from 0.0 on [-1, 1]: 0.5 / 0.75 on [0, 1]; b: unchanged
    assert mia["quantization"] == pytest.approx((0.5 / 0.75 + 1.0) / 2)
    # a: dR 0.1, dU 0.1 on [0, 1]: 1; b: dU 0.05 under dR 0.1: 1
    assert mia["relearning"] == 1.0


def test_summaries_over_seeds_keep_each_seed_and_skip_nan():
    per_seed = [
        {"waterdrum": {"faithfulness": 1.0, "relearning": 0.5}},
        {"waterdrum": {"faithfulness": 0.5, "relearning": math.nan}},
    ]
    summary = summarise_seeds(per_seed)["waterdrum"]
    assert summary["faithfulness"] == {"per_seed": [1.0, 0.5], "mean": 0.75, "std": 0.25}
    assert summary["relearning"]["mean"] == 0.5 and summary["relearning"]["std"] == 0.0
