"""The paper's experiments at small scale: separability, calibration, benchmark, resilience.

For every similarity setting and seed, a model is retrained on the retain side plus the first
k % of the forget set for every configured k (k = 0: the retrained model; k = 100 %: the
original). Each model is measured once (:meth:`Reproduction.measure`): WaterDrum per query
(sampled completions, pooled per query), the null-corrected WaterDrum (minus each query's mean
under random keys), ROUGE-L recall (greedy continuation against the text's next tokens) and
the Min-k% Prob MIA value (forget set vs holdout). D1 is the AUROC of per-query values on the
retrained model; D2 the R^2 of the forget value against k through the origin (and, the paper's
relaxation, after subtracting the retrained model's value).
"""

from __future__ import annotations

import math
import re
import time
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from waterdrum_hf._progress import logged_stage
from waterdrum_hf.experiments.reproduction.config import ReproductionConfig
from waterdrum_hf.experiments.reproduction.data import (
    SettingData,
    ax_settings,
    tofu_settings,
    toy_settings,
)
from waterdrum_hf.statistics import calibration_r2, separability_auroc

METRICS = ("waterdrum", "waterdrum_null_corrected", "rouge_l")
"""Per-query metrics (D1 and D2); ``mia`` is a set-level value and enters D2 only."""


class Reproduction:
    """Runs every experiment of :class:`ReproductionConfig` and returns the results dict."""

    def __init__(self, config: ReproductionConfig, log: Callable[[str], None] = print) -> None:
        self.config = config
        self.log = log
        self.seconds: dict[str, float] = {}

    def run(self) -> dict[str, Any]:
        config = self.config
        start = time.perf_counter()
        settings = self.prepare()
        results: dict[str, Any] = {"settings": {}, "benchmark": {}, "mia": {}}
        measured = {}
        for data in settings:
            measured[data.name] = self.calibrate(data)
            results["settings"][data.name] = summarise(measured[data.name])
            results["mia"][data.name] = mia_summary(measured[data.name])
            with self._timed(
                f"benchmark/{data.name}",
                f"{data.name}: unlearning with {', '.join(config.methods)}",
            ):
                results["benchmark"][data.name] = self._benchmark(
                    data, measured[data.name][config.seeds[0]]
                )
        resilient = next((d for d in settings if d.name == "no_duplicate"), settings[0])
        with self._timed(
            "resilience", f"Resilience ({resilient.name}): decoy model and diluting watermark"
        ):
            results["resilience"] = self._resilience(
                resilient, measured[resilient.name][config.seeds[0]]
            )
        results["config"] = asdict(config)
        results["seconds"] = {**self.seconds, "total": round(time.perf_counter() - start, 1)}
        cache = self.pipeline.cache
        results["stages"] = {
            "built": cache.built,
            "reused": cache.reused,
            "reused_build_seconds": round(cache.reused_seconds, 1),
        }
        results["duplicate_similarity"] = {
            d.name: duplicate_similarity(d) for d in settings if d.duplicates
        }
        results["curves"] = {
            name: calibration_curves(measured[name], config.fractions) for name in measured
        }
        first = {name: per_seed[config.seeds[0]][0.0] for name, per_seed in measured.items()}
        results["roc"] = {
            name: {key: np.asarray(m[key]).tolist() for key in (*METRICS, "is_forget")}
            for name, m in first.items()
        }
        return results

    def prepare(self) -> list[SettingData]:
        """Load the models, open the cached pipeline and watermark (or load) every configured
        setting's data."""
        from waterdrum_hf.experiments.pipeline import CachedPipeline
        from waterdrum_hf.keys import random_keys

        config = self.config
        self.model, self.tokenizer, self.watermark_tokenizer = self._models()
        self.pipeline = CachedPipeline(
            self.model,
            self.tokenizer,
            Path(config.output_dir) / "cache",
            show_progress=config.show_progress,
        )
        with self._timed("data", "Watermarking the owners' data and its duplicates"):
            if config.dataset == "toy":
                keys = random_keys(config.owners, seed=0).tolist()  # secret, never shown
                return toy_settings(config, self.pipeline, keys)
            if config.dataset == "waterdrum-ax":
                return ax_settings(config, self.tokenizer)
            return tofu_settings(config, self.tokenizer)

    def calibrate(
        self, data: SettingData, *, baselines: bool = True
    ) -> dict[int, dict[float, dict[str, Any]]]:
        """Seed -> fraction -> measurement: every retrained model of one setting (D1 and D2)."""
        config = self.config
        with self._timed(
            f"calibration/{data.name}",
            f"{data.name}: retraining {len(config.fractions)} models x {len(config.seeds)} seeds and measuring them",
        ):
            return {
                seed: self._calibration_models(data, seed, baselines=baselines)
                for seed in config.seeds
            }

    # ---- models ----------------------------------------------------------------------------

    def _models(self) -> tuple[Any, Any, Any]:
        """The base model, its tokenizer, and the watermarking tokenizer."""
        import waterdrum_hf.tiny as tiny

        config = self.config
        if config.model is None:
            model, tokenizer = tiny.load(show_progress=config.show_progress)
        else:
            from transformers import AutoTokenizer

            from waterdrum_hf._torch_plumbing import load_causal_lm

            model = load_causal_lm(config.model)
            tokenizer = AutoTokenizer.from_pretrained(config.model)
        if config.watermark_tokenizer is None:
            return model, tokenizer, tokenizer
        from transformers import AutoTokenizer

        return model, tokenizer, AutoTokenizer.from_pretrained(config.watermark_tokenizer)

    def _calibration_models(
        self, data: SettingData, seed: int, *, baselines: bool = True
    ) -> dict[float, dict[str, Any]]:
        """Fraction -> measurement of the model retrained on retain + that share of forget."""
        config = self.config
        measured = {}
        for fraction in config.fractions:
            kept = round(fraction * len(data.forget))
            stage = self.pipeline.finetune(
                f"{data.name}-{kept}of{len(data.forget)}-seed{seed}",
                data.retain + data.forget[:kept],
                epochs=config.epochs,
                batch_size=config.batch_size,
                learning_rate=config.learning_rate,
                seed=seed,
            )
            measured[fraction] = {
                "stage": stage,
                "share": kept / len(data.forget),
                "kept": kept,
                **self.measure(stage, data, seed, baselines=baselines),
            }
        return measured

    # ---- one model -------------------------------------------------------------------------

    def measure(
        self,
        stage: Any,
        data: SettingData,
        seed: int,
        *,
        dilution: Any = None,
        baselines: bool = True,
    ) -> dict[str, Any]:
        """WaterDrum (raw and null-corrected) and, with ``baselines``, ROUGE-L and MIA of one
        model; per query, forget queries first. ``dilution``: the model owner's own logits
        processor, applied while sampling."""
        from waterdrum_hf.config import NullConfig, WaterDrumConfig
        from waterdrum_hf.experiments.baselines import mia_value, min_k_percent_prob, rouge_l_recall
        from waterdrum_hf.metric import waterdrum_result
        from waterdrum_hf.schemes import resolve_scheme

        config = self.config
        queries, references = data.queries, data.references
        keys = data.forget_keys + data.retain_keys
        processor_settings = None
        if dilution is not None:
            processor_settings = dilution.settings()
        completions = self.pipeline.completions(
            f"{data.name}-{stage.path.name}",
            stage,
            queries,
            num_samples=config.num_samples,
            max_new_tokens=config.max_new_tokens,
            seed=seed,
            logits_processor=[dilution] if dilution else None,
            processor_settings=processor_settings,
        )
        result = waterdrum_result(
            completions,
            keys,
            self.watermark_tokenizer,
            config=WaterDrumConfig(
                scheme=resolve_scheme(config.scheme),
                null=NullConfig("empirical", config.null_keys, seed=seed)
                if config.null_keys
                else None,
            ),
            forget_ids=sorted(set(data.forget_keys)),
            return_details=True,
        )
        values = np.array(result.query_values, dtype=float)
        measured = {
            "waterdrum": values,
            "waterdrum_null_corrected": values - np.array(result.query_null_means, dtype=float),
            "is_forget": np.arange(len(keys)) < len(data.forget),
            "summary": result.scalars(),
            "completions": completions,
        }
        if not baselines:
            return measured
        greedy = self.pipeline.completions(
            f"{data.name}-{stage.path.name}-greedy",
            stage,
            queries,
            num_samples=1,
            max_new_tokens=config.rouge_new_tokens,
            seed=seed,
            greedy=True,
        )
        measured["rouge_l"] = rouge_l_recall([g[0] for g in greedy], references)
        measured["mia"] = math.nan  # no held-out set (WaterDrum-TOFU): no MIA
        if data.holdout:
            model = self.pipeline.load(stage)
            members = min_k_percent_prob(model, self.tokenizer, data.forget, k=config.mia_k)
            holdout = min_k_percent_prob(model, self.tokenizer, data.holdout, k=config.mia_k)
            measured["mia"] = mia_value(members[~np.isnan(members)], holdout[~np.isnan(holdout)])
        return measured

    # ---- benchmark and resilience ----------------------------------------------------------

    def _benchmark(
        self, data: SettingData, calibration: dict[float, dict[str, Any]]
    ) -> dict[str, Any]:
        """Every configured method unlearning the forget set from the original model."""
        config = self.config
        seed = config.seeds[0]
        models = {"original": calibration[1.0]["summary"], "retrained": calibration[0.0]["summary"]}
        for method in config.methods:
            stage, _ = self.pipeline.unlearn(
                method,
                calibration[1.0]["stage"],
                data.forget,
                data.retain,
                steps=config.unlearn_steps,
                learning_rate=config.unlearn_learning_rate,
                batch_size=config.batch_size,
                seed=seed,
            )
            models[method] = self.measure(stage, data, seed, baselines=False)["summary"]
        return models

    def _resilience(
        self, data: SettingData, calibration: dict[float, dict[str, Any]]
    ) -> dict[str, Any]:
        """(a) a decoy model answering the most forget-like queries with unwatermarked text;
        (b) the model owner's own Waterfall watermark diluting the owners' watermarks."""
        from waterdrum_hf.config import WaterDrumConfig
        from waterdrum_hf.metric import waterdrum_result
        from waterdrum_hf.schemes import resolve_scheme
        from waterdrum_hf.schemes.waterfall.processor import WaterfallLogitsProcessor

        config = self.config
        seed = config.seeds[0]
        original = calibration[1.0]
        forget = original["is_forget"]
        forget_queries = data.queries[: len(data.forget)]
        base = self.pipeline.completions(
            f"{data.name}-base",
            self.pipeline.base_stage(),
            forget_queries,
            num_samples=config.num_samples,
            max_new_tokens=config.max_new_tokens,
            seed=seed,
        )
        replacement = np.array(
            waterdrum_result(
                base,
                data.forget_keys,
                self.watermark_tokenizer,
                config=WaterDrumConfig(scheme=resolve_scheme(config.scheme)),
                return_details=True,
            ).query_values,
            dtype=float,
        )
        similarity = [
            max(bag_of_words_cosine(" ".join(samples), text) for text in data.forget)
            for samples in original["completions"][: len(data.forget)]
        ]
        decoy = decoy_curve(original["waterdrum"][forget], replacement, np.array(similarity))

        processor = WaterfallLogitsProcessor(
            self.tokenizer.vocab_size, self.model_owner_key(data, seed), kappa=config.dilution_kappa
        )
        return {
            "decoy": decoy,
            "dilution": {
                "kappa": config.dilution_kappa,
                **self.dilution(data, calibration, {"waterfall": processor}, seed),
            },
        }

    def model_owner_key(self, data: SettingData, seed: int) -> int:
        """The model owner's own watermark key for the models of ``seed``: a random key that
        no data owner holds (secret like theirs)."""
        from waterdrum_hf.keys import random_keys

        exclude = data.forget_keys + data.retain_keys
        return int(random_keys(1, exclude=exclude, seed=10_000 + seed)[0])

    def dilution(
        self,
        data: SettingData,
        calibration: dict[float, dict[str, Any]],
        processors: Mapping[str, Any],
        seed: int,
    ) -> dict[str, dict[str, float]]:
        """D1 AUROC and D2 R^2 of WaterDrum when the models of ``calibration`` (those of
        ``seed``) watermark their own outputs with each of ``processors`` (by name: the model
        owner's logits processor, applied while sampling) and the data owners verify theirs;
        ``none``: no model owner's watermark."""
        auroc = {"none": d1(calibration[0.0], "waterdrum")}
        r2 = {"none": d2(calibration, "waterdrum").get("r2")}
        for name, processor in processors.items():
            diluted = {
                f: self.measure(m["stage"], data, seed, dilution=processor, baselines=False)
                for f, m in calibration.items()
            }
            for fraction, m in diluted.items():
                m["share"] = calibration[fraction]["share"]
            auroc[name] = d1(diluted[0.0], "waterdrum")
            r2[name] = d2(diluted, "waterdrum").get("r2")
        return {"auroc": auroc, "r2": r2}

    def _timed(self, key: str, title: str) -> Any:
        return logged_stage(self.log, self.seconds, key, title)


# ---- statistics over the measurements --------------------------------------------------------


def d1(measured: dict[str, Any], metric: str) -> float:
    """AUROC of per-query values on one model, retain queries positive (NaN left out)."""
    values, forget = measured[metric], measured["is_forget"]
    scored = ~np.isnan(values)
    return separability_auroc(values[~forget & scored], values[forget & scored])


def forget_value(measured: dict[str, Any], metric: str) -> float:
    """The forget set's value of ``metric`` on one model."""
    if metric == "mia":
        return float(measured["mia"])
    values = measured[metric][measured["is_forget"]]
    return float(np.nanmean(values))


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


def summarise(per_seed: dict[int, dict[float, dict[str, Any]]]) -> dict[str, Any]:
    """Mean and spread over seeds of each metric's AUROC (D1), R^2 and offset R^2 (D2)."""
    table: dict[str, dict[str, list[float]]] = {"auroc": {}, "r2": {}, "r2_offset": {}}
    for calibration in per_seed.values():
        for metric in measured_metrics(calibration[0.0], METRICS):
            table["auroc"].setdefault(metric, []).append(d1(calibration[0.0], metric))
        for metric in measured_metrics(calibration[0.0], (*METRICS, "mia")):
            fits = d2(calibration, metric)
            table["r2"].setdefault(metric, []).append(fits["r2"])
            table["r2_offset"].setdefault(metric, []).append(fits["r2_offset"])
    summary: dict[str, Any] = {}
    for name, columns in table.items():
        summary[name] = {m: float(np.nanmean(v)) for m, v in columns.items()}
        summary[f"{name}_std"] = {m: float(np.nanstd(v)) for m, v in columns.items()}
    return summary


def calibration_curves(
    per_seed: dict[int, dict[float, dict[str, Any]]], fractions: Sequence[float]
) -> dict[str, Any]:
    """Forget value per share trained on: mean and spread over seeds, per metric."""
    curves: dict[str, Any] = {
        "share": [float(np.mean([c[f]["share"] for c in per_seed.values()])) for f in fractions]
    }
    first = next(iter(per_seed.values()))[fractions[0]]
    for metric in measured_metrics(first, (*METRICS, "mia")):
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
    a retain owner's text: the paper's duplicates (faithful paraphrases, which defeat ROUGE-L)
    read near 1 on the first and far above the second."""
    from waterdrum_hf.experiments.baselines import rouge_l_recall

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


def mia_summary(per_seed: dict[int, dict[float, dict[str, Any]]]) -> dict[str, float]:
    """The MIA value (2 AUROC - 1, forget vs holdout) on the original and retrained models."""
    original = [c[1.0]["mia"] for c in per_seed.values()]
    retrained = [c[0.0]["mia"] for c in per_seed.values()]
    return {
        "original": float(np.mean(original)),
        "original_std": float(np.std(original)),
        "retrained": float(np.mean(retrained)),
        "retrained_std": float(np.std(retrained)),
    }


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
