"""The resilience study (the paper's section 6): (a) a decoy model answering the most
forget-like queries with unwatermarked text; (b) the model owner's own Waterfall watermark
diluting the owners' watermarks while it samples."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np

from waterdrum_hf.experiments.reproduction.analysis import d1, d2
from waterdrum_hf.experiments.reproduction.data import SettingData

Reproduction = Any
"""The running :class:`~waterdrum_hf.experiments.reproduction.experiment.Reproduction` (its
config, pipeline, tokenizers and ``measure``); not imported, since it calls this module."""


def resilience(
    reproduction: Reproduction, data: SettingData, calibration: dict[float, dict[str, Any]]
) -> dict[str, Any]:
    """Both experiments on one setting's models of the first seed (``calibration``)."""
    return {
        "decoy": decoy(reproduction, data, calibration[1.0]),
        "dilution": dilution(reproduction, data, calibration),
    }


def decoy(
    reproduction: Reproduction, data: SettingData, original: dict[str, Any]
) -> dict[str, list[float]]:
    """The decoy curve of the original model: its forget queries ranked by how similar its
    output is to the forget set, answered in that order by the base model (no watermark)."""
    from waterdrum_hf.config import WaterDrumConfig
    from waterdrum_hf.schemes import resolve_scheme
    from waterdrum_hf.scoring import waterdrum_result

    config, pipeline = reproduction.config, reproduction.pipeline
    base = pipeline.completions(
        f"{data.name}-base",
        pipeline.base_stage(),
        data.queries[: len(data.forget)],
        num_samples=config.num_samples,
        max_new_tokens=config.max_new_tokens,
        seed=config.seeds[0],
    )
    replacement = np.array(
        waterdrum_result(
            base,
            data.forget_keys,
            reproduction.watermark_tokenizer,
            config=WaterDrumConfig(scheme=resolve_scheme(config.scheme)),
            return_details=True,
        ).query_values,
        dtype=float,
    )
    similarity = [
        max(bag_of_words_cosine(" ".join(samples), text) for text in data.forget)
        for samples in original["completions"][: len(data.forget)]
    ]
    forget = original["waterdrum"][original["is_forget"]]
    return decoy_curve(forget, replacement, np.array(similarity))


def dilution(
    reproduction: Reproduction, data: SettingData, calibration: dict[float, dict[str, Any]]
) -> dict[str, Any]:
    """D1 and D2 of WaterDrum with and without the model owner sampling through its own
    Waterfall watermark (a key no data owner holds), on the models of the first seed."""
    from waterdrum_hf.schemes.waterfall.processor import WaterfallLogitsProcessor

    config = reproduction.config
    seed = config.seeds[0]
    processor = WaterfallLogitsProcessor(
        reproduction.tokenizer.vocab_size,
        model_owner_key(data, seed),
        kappa=config.dilution_kappa,
    )
    found = diluted_values(reproduction, data, calibration, {"waterfall": processor}, seed)
    return {"kappa": config.dilution_kappa, **found}


def model_owner_key(data: SettingData, seed: int) -> int:
    """The model owner's own watermark key for the models of ``seed``: a random key that no
    data owner holds (secret like theirs)."""
    from waterdrum_hf.keys import random_keys

    return int(random_keys(1, exclude=data.forget_keys + data.retain_keys, seed=10_000 + seed)[0])


def diluted_values(
    reproduction: Reproduction,
    data: SettingData,
    calibration: dict[float, dict[str, Any]],
    processors: Mapping[str, Any],
    seed: int,
) -> dict[str, Mapping[str, float | None]]:
    """D1 AUROC and D2 R^2 of WaterDrum when the models of ``calibration`` (those of ``seed``)
    watermark their own outputs with each of ``processors`` (by name: the model owner's
    logits processor, applied while sampling) and the data owners verify theirs; ``none``:
    no model owner's watermark."""
    auroc = {"none": d1(calibration[0.0], "waterdrum")}
    r2 = {"none": d2(calibration, "waterdrum").get("r2")}
    for name, processor in processors.items():
        diluted = {
            f: reproduction.measure(m["stage"], data, seed, dilution=processor, baselines=False)
            for f, m in calibration.items()
        }
        for fraction, m in diluted.items():
            m["share"] = calibration[fraction]["share"]
        auroc[name] = d1(diluted[0.0], "waterdrum")
        r2[name] = d2(diluted, "waterdrum").get("r2")
    return {"auroc": auroc, "r2": r2}


def decoy_curve(
    values: np.ndarray, replacement: np.ndarray, similarity: np.ndarray, steps: int = 10
) -> dict[str, list[float]]:
    """Aggregate forget value when the ``p`` most forget-like queries are answered with
    unwatermarked text, for p = 0, 1/steps, ..., 1; scaled to 1 at p = 0."""
    order = np.argsort(-similarity, kind="stable")
    shares, raw = [], []
    for i in range(steps + 1):
        share = i / steps
        mixed = values.copy()
        replaced = order[: round(share * len(values))]
        mixed[replaced] = replacement[replaced]
        shares.append(share)
        raw.append(float(np.nanmean(mixed)))
    scaled = [v / raw[0] if raw[0] else math.nan for v in raw]
    return {"intercepted": shares, "forget_value": raw, "scaled": scaled}


_WORD = re.compile(r"\w+")


def bag_of_words_cosine(a: str, b: str) -> float:
    """Cosine similarity of two texts' word counts: the model owner's stand-in for STS."""
    x, y = Counter(_WORD.findall(a.lower())), Counter(_WORD.findall(b.lower()))
    dot = sum(count * y[word] for word, count in x.items())
    norm = math.sqrt(sum(c * c for c in x.values()) * sum(c * c for c in y.values()))
    return dot / norm if norm else 0.0
