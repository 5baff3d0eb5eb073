"""The paper's comparison of watermark schemes (its Table 5) at small scale.

Every scheme of ``config.schemes`` runs the reproduction's own D1 and D2
(:meth:`Reproduction.prepare` and :meth:`Reproduction.calibrate`, no fork of them) on the same
owners (the same keys and texts), with the same model recipe, seeds and fractions; only the
watermark differs: the toy corpus is paraphrased under each owner's key with that scheme and
the samples are verified with it. ROUGE-L and the MIA do not depend on the watermark, so they
are left out; the benchmark of unlearning methods and the resilience experiments are not part
of the comparison. Beside D1 and D2 each scheme gets its verification time per text (scoring
the original model's samples under their owners' keys) and its watermark's strength on the
corpus (the mean score of the watermarked texts under their owners' keys).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

import numpy as np

from waterdrum_hf.experiments.reproduction.analysis import calibration_curves, summarise
from waterdrum_hf.experiments.reproduction.config import ReproductionConfig
from waterdrum_hf.experiments.reproduction.data import SettingData
from waterdrum_hf.experiments.reproduction.experiment import Reproduction
from waterdrum_hf.utils.machine import machine_record

TIMING_REPEATS = 3
"""Verification is timed this often (after one warm-up); the fastest run counts."""


def compare_schemes(
    config: ReproductionConfig, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Run D1 and D2 for every scheme of ``config.schemes``; returns the results dict
    (``schemes``: scheme -> setting -> D1/D2 summary, the forget curve, the metric's flat
    result on the original and the retrained model of the first seed, the verification time
    per text, the watermark's strength on the corpus and what D1 is made of)."""
    if len(config.schemes) < 2:
        raise ValueError("`schemes` must name at least two schemes to compare.")
    start = time.perf_counter()
    results: dict[str, Any] = {"schemes": {}, "seconds": {}}
    stages = {"built": 0, "reused": 0, "reused_build_seconds": 0.0}
    for scheme in config.schemes:
        log(f"== scheme {scheme} ==")
        scheme_start = time.perf_counter()
        one = replace(config, scheme=scheme, schemes=())  # names checked by config
        reproduction = Reproduction(one, log)
        per_setting = {}
        for data in reproduction.prepare():
            measured = reproduction.calibrate(data, baselines=False)
            first = measured[config.seeds[0]]
            per_setting[data.name] = {
                **summarise(measured),
                "models": {"original": first[1.0]["summary"], "retrained": first[0.0]["summary"]},
                "curve": calibration_curves(measured, config.fractions),
                "verify_seconds_per_text": verification_seconds(
                    reproduction, data, first[1.0]["completions"]
                ),
                "watermark_strength": watermark_strength(reproduction, data),
                "separation": separation(measured),
            }
        results["schemes"][scheme] = per_setting
        results["seconds"][scheme] = round(time.perf_counter() - scheme_start, 1)
        cache = reproduction.pipeline.cache
        stages["built"] += cache.built
        stages["reused"] += cache.reused
        stages["reused_build_seconds"] += round(cache.reused_seconds, 1)
    results["seconds"]["total"] = round(time.perf_counter() - start, 1)
    results["stages"] = stages
    results["config"] = asdict(config)
    results["machine"] = machine_record()
    return results


def verification_seconds(
    reproduction: Reproduction, data: SettingData, completions: list[list[str]]
) -> float:
    """Seconds to verify one sampled text under its owner's key (tokenising included), the
    fastest of :data:`TIMING_REPEATS` passes over the samples of ``completions`` that have a
    token to score."""
    from waterdrum_hf.scoring.verification import Verifier

    verifier = Verifier(reproduction.watermark_tokenizer, scheme=reproduction.config.scheme)
    keys = data.forget_keys + data.retain_keys
    samples = [(t, key) for key, texts in zip(keys, completions, strict=True) for t in texts]
    token_ids = verifier.token_ids([t for t, _ in samples])
    scorable = [
        pair for pair, ids in zip(samples, token_ids, strict=True) if len(ids) >= verifier.n_gram
    ]
    texts, owners = [t for t, _ in scorable], [k for _, k in scorable]  # else: warnings
    verifier.verify(texts[:2], owners[:2])  # warm-up: the kernel compiles on first use
    best = float("inf")
    for _ in range(TIMING_REPEATS):
        started = time.perf_counter()
        verifier.verify(texts, owners)
        best = min(best, time.perf_counter() - started)
    return best / len(texts)


def separation(measured: dict[int, dict[float, dict[str, Any]]]) -> dict[str, float]:
    """What D1's AUROC is made of, on the retrained models (pooled over seeds): the mean and
    spread of the per-query values of retain and forget queries, and the gap between the means
    in pooled standard deviations (for normal values, AUROC = Phi(gap / sqrt 2))."""
    values = np.concatenate([m[0.0]["waterdrum"] for m in measured.values()])
    forget = np.concatenate([m[0.0]["is_forget"] for m in measured.values()])
    retain_values, forget_values = values[~forget], values[forget]
    retain_values, forget_values = (v[~np.isnan(v)] for v in (retain_values, forget_values))
    pooled = np.sqrt((retain_values.var() + forget_values.var()) / 2)
    return {
        "retain_mean": float(retain_values.mean()),
        "retain_std": float(retain_values.std()),
        "forget_mean": float(forget_values.mean()),
        "forget_std": float(forget_values.std()),
        "gap_in_sd": float((retain_values.mean() - forget_values.mean()) / pooled),
    }


def watermark_strength(reproduction: Reproduction, data: SettingData) -> dict[str, float]:
    """Mean and standard deviation of the watermarked training texts' scores under their
    owners' keys: how strongly the paraphrase carries each scheme's watermark."""
    from waterdrum_hf.scoring.verification import verify_texts

    texts = data.forget + data.retain
    scores = verify_texts(
        texts,
        data.forget_keys + data.retain_keys,
        reproduction.watermark_tokenizer,
        scheme=reproduction.config.scheme,
    )
    return {"mean": float(np.nanmean(scores)), "std": float(np.nanstd(scores))}
