"""Statistics over the reproduction's measurements: D1 (AUROC of per-query values on one
model), D2 (R^2 of the forget value against the share trained on), their summary over seeds,
the calibration curves and the MIA and duplicate summaries."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from waterdrum_hf.experiments.reproduction.data import SettingData
from waterdrum_hf.statistics import calibration_r2, separability_auroc

METRICS = (
    "waterdrum",
    "waterdrum_null_corrected",
    "rouge_l",
    "rouge_l_unwatermarked",
    "extraction",
    "extraction_unwatermarked",
    "truth_ratio",
    "truth_ratio_unwatermarked",
    "knowmem",
    "knowmem_unwatermarked",
)
"""Per-query metrics (D1 and D2): WaterDrum, ROUGE-L recall, extraction strength and, on the
built-in QA corpus, Truth Ratio and KnowMem. ``_unwatermarked``: read on the models of the
unwatermarked twin."""

MIA_METRICS = {"min_k": "mia", "loss": "mia_loss", "zlib": "mia_zlib",
               "min_k_plus_plus": "mia_min_k_plus_plus"}  # fmt: skip
"""Each membership attack of :func:`~waterdrum_hf.baselines.mia_scores` and the name of its
MIA value (``2 AUROC - 1``, forget set vs holdout) here; ``mia`` is the paper's (Min-k%)."""

RAW_TRUTH_RATIO = "truth_ratio_r"
"""Each question's Truth Ratio ``R`` itself (QA runs), kept for Forget Quality."""
SET_METRICS = tuple(
    f"{metric}{data}" for metric in MIA_METRICS.values() for data in ("", "_unwatermarked")
)
"""Set-level metrics (D2 only): the MIA values, on the watermarked data and the twin."""


def d1(measured: dict[str, Any], metric: str) -> float:
    """AUROC of per-query values on one model, retain queries positive (NaN left out)."""
    values, forget = measured[metric], measured["is_forget"]
    scored = ~np.isnan(values)
    return separability_auroc(values[~forget & scored], values[forget & scored])


def forget_value(measured: dict[str, Any], metric: str) -> float:
    """The forget set's value of ``metric`` on one model."""
    if metric in SET_METRICS:
        return float(measured[metric])
    return float(np.nanmean(measured[metric][measured["is_forget"]]))


def d2(calibration: dict[float, dict[str, Any]], metric: str) -> dict[str, float]:
    """R^2 of the forget value against the share trained on, through the origin, and the
    paper's relaxation: the same after subtracting the retrained model's value."""
    shares = [m["share"] for m in calibration.values()]
    values = np.array([forget_value(m, metric) for m in calibration.values()])
    fits = {}
    for name, ys in (("r2", values), ("r2_offset", values - values[0])):
        try:
            fits[name] = calibration_r2(shares, ys).r2
        except ValueError:  # all equal: R^2 undefined
            fits[name] = math.nan
    return fits


def measured_metrics(measured: dict[str, Any], metrics: Sequence[str]) -> list[str]:
    """Those of ``metrics`` that one model's measurement holds (the baselines, ROUGE-L and
    MIA, are measured only on request)."""
    return [metric for metric in metrics if metric in measured]


def calibrated_metrics(calibration: dict[float, dict[str, Any]]) -> list[str]:
    """Those of the metrics (and the MIA's) measured on every model of a calibration: D2's."""
    return [
        metric
        for metric in (*METRICS, *SET_METRICS)
        if all(metric in measured for measured in calibration.values())
    ]


def summarise(per_seed: dict[int, dict[float, dict[str, Any]]]) -> dict[str, Any]:
    """Mean and spread over seeds of each metric's AUROC (D1), R^2 and offset R^2 (D2), and
    on how many seeds each is defined (``<name>_seeds``: an R^2 of values that do not vary
    is not)."""
    table: dict[str, dict[str, list[float]]] = {"auroc": {}, "r2": {}, "r2_offset": {}}
    for calibration in per_seed.values():
        for metric in measured_metrics(calibration[0.0], METRICS):
            table["auroc"].setdefault(metric, []).append(d1(calibration[0.0], metric))
        for metric in calibrated_metrics(calibration):
            for name, fit in d2(calibration, metric).items():  # r2, r2_offset
                table[name].setdefault(metric, []).append(fit)
    summary: dict[str, Any] = {}
    for name, columns in table.items():
        stats = {m: mean_std(v) for m, v in columns.items()}
        summary[name] = {m: mean for m, (mean, _, _) in stats.items()}
        summary[f"{name}_std"] = {m: std for m, (_, std, _) in stats.items()}
        summary[f"{name}_seeds"] = {m: count for m, (_, _, count) in stats.items()}
    return summary


def mean_std(values: Sequence[float]) -> tuple[float, float, int]:
    """Mean, standard deviation and count of the values that are not NaN; NaN for both without
    one (e.g. a metric that cannot be fitted on any seed), without numpy's empty-slice warning."""
    finite = np.asarray(values, dtype=float)
    finite = finite[~np.isnan(finite)]
    if not finite.size:
        return math.nan, math.nan, 0
    return float(finite.mean()), float(finite.std()), int(finite.size)


def calibration_curves(
    per_seed: dict[int, dict[float, dict[str, Any]]], fractions: Sequence[float]
) -> dict[str, Any]:
    """Forget value per share trained on: mean and spread over seeds, per metric."""
    curves: dict[str, Any] = {
        "share": [float(np.mean([c[f]["share"] for c in per_seed.values()])) for f in fractions]
    }
    for metric in calibrated_metrics(next(iter(per_seed.values()))):
        values = np.array(
            [[forget_value(c[f], metric) for f in fractions] for c in per_seed.values()]
        )
        curves[metric] = {"mean": values.mean(axis=0).tolist(), "std": values.std(axis=0).tolist()}
    with warnings.catch_warnings():  # no trained (k = 0) or untrained (k = 100 %) query: NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        split = np.array(
            [[trained_split(c[f], c[0.0]) for f in fractions] for c in per_seed.values()]
        )
        curves["waterdrum_split"] = {
            side: np.nanmean(split[..., i], axis=0).tolist()
            for i, side in enumerate(("trained", "untrained", "untrained_at_k0"))
        }
    return curves


def duplicate_similarity(data: SettingData) -> dict[str, float]:
    """Mean ROUGE-L recall of each duplicate against the forget text it duplicates, and against
    a retain owner's text. The paper's exact duplicates read 1.00 on the first in the
    unwatermarked data its main tables measure the baselines on (literal copies), its semantic
    duplicates 0.69 (WaterDrum-Ax, GPT-4's paraphrases)."""
    from waterdrum_hf.baselines import rouge_l_recall

    duplicates, forget, other = data.duplicate_pairs()
    if not duplicates:
        return {}
    return {
        "forget_text": float(np.mean(rouge_l_recall(duplicates, forget))),
        "other_owner": float(np.mean(rouge_l_recall(duplicates, other))),
    }


def trained_split(
    measured: dict[str, Any], retrained: dict[str, Any]
) -> tuple[float, float, float]:
    """WaterDrum's forget value over the forget queries whose passage the model was trained on
    (the first ``kept``), over the rest, and over the rest on the model retrained without the
    forget set (k = 0); NaN for an empty side. The rest reading above its k = 0 value means the
    model carried the watermark over from the trained passages to the others."""

    def mean(values: np.ndarray) -> float:
        return float(np.nanmean(values)) if values.size else math.nan

    kept = measured["kept"]
    values = np.asarray(measured["waterdrum"])[np.asarray(measured["is_forget"])]
    before = np.asarray(retrained["waterdrum"])[np.asarray(retrained["is_forget"])]
    return mean(values[:kept]), mean(values[kept:]), mean(before[kept:])


def forget_quality_runs(
    calibration: dict[float, dict[str, Any]], unlearned: dict[str, dict[str, Any]]
) -> dict[str, float]:
    """TOFU's Forget Quality of the original and each unlearned model of one training run:
    the KS-test p-value between its Truth Ratios ``R`` on the forget questions and the
    retrained model's (:func:`waterdrum_hf.baselines.forget_quality`); empty where the run
    read no Truth Ratio (passages, or unlearned models measured without baselines)."""
    from waterdrum_hf.baselines import forget_quality

    retrained = calibration[0.0]
    models = {"original": calibration[1.0], **unlearned}
    if any(RAW_TRUTH_RATIO not in m for m in (retrained, *models.values())):
        return {}
    forget = retrained["is_forget"]
    reference = retrained[RAW_TRUTH_RATIO][forget]
    return {
        name: forget_quality(model[RAW_TRUTH_RATIO][forget], reference)
        for name, model in models.items()
    }


def mia_summary(per_seed: dict[int, dict[float, dict[str, Any]]]) -> dict[str, float]:
    """The MIA value (2 AUROC - 1, forget vs holdout) on the original and retrained models."""
    summary: dict[str, float] = {}
    for model, share in (("original", 1.0), ("retrained", 0.0)):
        values = [c[share]["mia"] for c in per_seed.values()]
        summary |= {model: float(np.mean(values)), f"{model}_std": float(np.std(values))}
    return summary
