"""The metrics' own meta-evaluation, OpenUnlearning's protocol (Dorna et al., 2025), on the
reproduction's models: how faithfully and how robustly WaterDrum and each baseline read the
forget set.

* **Faithfulness**: the AUROC with which a metric's forget value ranks models that hold the
  forget data (trained on at least :data:`HOLDING_SHARE` of it) above models that never saw it
  (retrained without it), pooled over the similarity settings of one seed.
* **Robustness to relearning**: ``R = min(dR / dU, 1)``, where ``dR`` and ``dU`` are how much
  the forget value of the retrained and of an unlearned model rise when each is fine-tuned on
  the forget set (the relearning audit's fine-tune): a metric that read an unlearned model as
  clean while the data could be brought back at once scores below 1.
* **Robustness to quantization**: ``Q = min(before / after, 1)`` on an unlearned model whose
  Linear weights are quantized to :data:`QUANTIZATION_BITS` bits: a value that rises under
  quantization had read the unlearning as deeper than it was.
* **Robustness**: the harmonic mean of the two.

The ratios assume values in [0, 1], more meaning more of the forget data, as OpenUnlearning's
metrics are; WaterDrum's value and the MIA's ``2 AUROC - 1`` range over [-1, 1] and are mapped
to [0, 1] first (:func:`unit`). ``R`` is 1 where relearning raises nothing the metric had
missed (``dU <= 0``), ``Q`` is 1 where quantization does not raise the value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from waterdrum_hf.experiments.reproduction.analysis import mean_std
from waterdrum_hf.statistics import separability_auroc

META_METRICS = (
    "waterdrum",
    "rouge_l",
    "extraction",
    "mia",
    "mia_loss",
    "mia_zlib",
    "mia_min_k_plus_plus",
    "truth_ratio",
    "knowmem",
)
"""The metrics meta-evaluated (where measured: Truth Ratio and KnowMem on questions only), on
the models fine-tuned on the watermarked data."""

SIGNED = ("waterdrum", "mia", "mia_loss", "mia_zlib", "mia_min_k_plus_plus")
"""Metrics whose values range over [-1, 1] (the rest over [0, 1])."""

HOLDING_SHARE = 0.5
"""A model "holds" the forget data when trained on at least this share of it."""

QUANTIZATION_BITS = 4
"""The bits of the quantization robustness (OpenUnlearning's 4-bit)."""


def unit(value: float, metric: str) -> float:
    """``value`` of ``metric`` on [0, 1]: ``(value + 1) / 2`` for a signed metric."""
    return (value + 1.0) / 2.0 if metric in SIGNED else value


def faithfulness(holding: Sequence[float], never: Sequence[float]) -> float:
    """P(a model holding the forget data reads higher than one that never saw it), ties one
    half, NaN values left out."""
    hold, none = np.asarray(holding, dtype=float), np.asarray(never, dtype=float)
    hold, none = hold[~np.isnan(hold)], none[~np.isnan(none)]
    if not hold.size or not none.size:  # e.g. an MIA without a held-out set
        return math.nan
    return separability_auroc(hold, none)


def relearning_robustness(
    retrained_before: float, retrained_after: float, unlearned_before: float, unlearned_after: float
) -> float:
    """``min(dR / dU, 1)`` on values in [0, 1], cut below at 0; 1 when ``dU <= 0``."""
    unlearned_rise = unlearned_after - unlearned_before
    if unlearned_rise <= 0:
        return 1.0
    return float(np.clip((retrained_after - retrained_before) / unlearned_rise, 0.0, 1.0))


def quantization_robustness(before: float, after: float) -> float:
    """``min(before / after, 1)`` on values in [0, 1]; 1 when ``after <= before``."""
    if after <= before:
        return 1.0
    return float(max(before, 0.0) / after)


def harmonic_mean(first: float, second: float) -> float:
    """The harmonic mean of two values in [0, 1] (0 when either is 0; NaN with a NaN)."""
    if math.isnan(first) or math.isnan(second):
        return math.nan
    return 0.0 if first + second == 0 else 2.0 * first * second / (first + second)


def seed_scores(
    forget_value: Callable[[Any, str], float],
    calibrations: Sequence[Mapping[float, Mapping[str, Any]]],
    perturbed: Sequence[Mapping[str, Mapping[str, Any]]],
    metric: str,
) -> dict[str, float]:
    """One seed's faithfulness, R, Q and robustness of ``metric``.

    Args:
        forget_value: a measured model's forget value of a metric.
        calibrations: per setting, share -> measured model (the share 0 model retrained).
        perturbed: per setting (the same order), per unlearned model name, its measurements
            ``"before"``, ``"relearned"`` and ``"quantized"``; the name ``"retrained"`` holds
            the retrained model's ``"before"`` and ``"relearned"``.
    """

    def value(measured: Mapping[str, Any]) -> float:
        return unit(forget_value(measured, metric), metric)

    holding = [value(m) for c in calibrations for share, m in c.items() if share >= HOLDING_SHARE]
    never = [value(c[0.0]) for c in calibrations]
    relearning, quantization = [], []
    for models in perturbed:
        retrained = models["retrained"]
        before, after = value(retrained["before"]), value(retrained["relearned"])
        for name, measured in models.items():
            if name == "retrained":
                continue
            unlearned = value(measured["before"])
            relearning.append(
                relearning_robustness(before, after, unlearned, value(measured["relearned"]))
            )
            quantization.append(quantization_robustness(unlearned, value(measured["quantized"])))
    r, q = mean_std(relearning)[0], mean_std(quantization)[0]
    return {
        "faithfulness": faithfulness(holding, never),
        "relearning": r,
        "quantization": q,
        "robustness": harmonic_mean(r, q),
    }


def summarise_seeds(per_seed: Sequence[Mapping[str, Mapping[str, float]]]) -> dict[str, Any]:
    """Per metric and measure: the per-seed values, their mean and population sd (ddof 0, as
    the reproduction's other summaries keep it)."""
    summary: dict[str, Any] = {}
    for metric in per_seed[0]:
        summary[metric] = {}
        for measure in per_seed[0][metric]:
            values = [seed[metric][measure] for seed in per_seed]
            mean, std, _ = mean_std(values)
            summary[metric][measure] = {"per_seed": values, "mean": mean, "std": std}
    return summary
