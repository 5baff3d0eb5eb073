"""The paper's experiments at small scale: separability, calibration, benchmark, resilience.

For every similarity setting and seed, a model is retrained on the retain side plus the first
k % of the forget set for every configured k (k = 0: the retrained model; k = 100 %: the
original). Each model is measured once (:meth:`Reproduction.measure`): WaterDrum per query
(sampled completions, pooled per query), the null-corrected WaterDrum (minus each query's mean
under random keys), ROUGE-L recall (greedy continuation against the text's next tokens) and
the Min-k% Prob MIA value (forget set vs holdout). D1 is the AUROC of per-query values on the
retrained model; D2 the R^2 of the forget value against k through the origin (and, the paper's
relaxation, after subtracting the retrained model's value). Where the data has an unwatermarked
twin (the built-in corpus), every model is also retrained on it and the baselines read there
(``rouge_l_unwatermarked``, ``mia_unwatermarked``): the paper's protocol for the baselines in
its main tables. The statistics are
:mod:`~waterdrum_hf.experiments.reproduction.analysis`'s, the resilience study is
:mod:`~waterdrum_hf.experiments.reproduction.resilience`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from waterdrum_hf.experiments.reproduction.analysis import (
    METRICS,
    MIA_METRICS,
    RAW_TRUTH_RATIO,
    calibration_curves,
    d1,
    d2,
    duplicate_similarity,
    forget_quality_runs,
    measured_metrics,
    mia_summary,
    summarise,
)
from waterdrum_hf.experiments.reproduction.config import BUILT_IN, ReproductionConfig
from waterdrum_hf.experiments.reproduction.data import (
    SettingData,
    ax_settings,
    tofu_settings,
    toy_qa_settings,
    toy_settings,
)
from waterdrum_hf.experiments.reproduction.resilience import (
    bag_of_words_cosine,
    decoy_curve,
    resilience,
)
from waterdrum_hf.experiments.training import TrainingSettings
from waterdrum_hf.utils.machine import machine_record
from waterdrum_hf.utils.progress import logged_stage

__all__ = [  # the statistics and the resilience study live in their own modules
    "Reproduction",
    "bag_of_words_cosine",
    "calibration_curves",
    "d1",
    "d2",
    "decoy_curve",
    "duplicate_similarity",
    "mia_summary",
    "summarise",
]


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
        results: dict[str, Any] = {
            "settings": {},
            "benchmark": {},
            "benchmark_runs": {},
            "mia": {},
        }
        measured, unlearned = {}, {}
        for data in settings:
            measured[data.name] = self.calibrate(data)
            results["settings"][data.name] = summarise(measured[data.name])
            results["mia"][data.name] = mia_summary(measured[data.name])
            with self._timed(
                f"benchmark/{data.name}",
                f"{data.name}: unlearning with {', '.join(config.methods)}",
            ):
                unlearned[data.name] = {
                    s: self._benchmark(data, measured[data.name][s], s) for s in config.seeds
                }
                runs = [
                    {
                        "original": measured[data.name][s][1.0]["summary"],
                        "retrained": measured[data.name][s][0.0]["summary"],
                        **{m: unlearned[data.name][s][m]["summary"] for m in config.methods},
                    }
                    for s in config.seeds
                ]
                results["benchmark"][data.name] = runs[0]
                results["benchmark_runs"][data.name] = {
                    model: [run[model] for run in runs] for model in runs[0]
                }
                quality = [
                    forget_quality_runs(measured[data.name][s], unlearned[data.name][s])
                    for s in config.seeds
                ]
                if quality[0]:
                    results.setdefault("forget_quality", {})[data.name] = {
                        model: [run[model] for run in quality] for model in quality[0]
                    }
        if config.meta_evaluation:
            with self._timed(
                "meta_evaluation",
                "Meta-evaluation: each metric's faithfulness and its robustness to relearning "
                "and quantization",
            ):
                results["meta_evaluation"] = self.meta_evaluate(settings, measured, unlearned)
        resilient = next((d for d in settings if d.name == "no_duplicate"), settings[0])
        with self._timed(
            "resilience", f"Resilience ({resilient.name}): decoy model and diluting watermark"
        ):
            results["resilience"] = resilience(
                self, resilient, measured[resilient.name][config.seeds[0]]
            )
        results["config"] = asdict(config)
        results["machine"] = machine_record()
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
        results["duplicate_similarity_unwatermarked"] = {
            d.name: duplicate_similarity(d.unwatermarked)
            for d in settings
            if d.duplicates and d.unwatermarked is not None
        }
        results["curves"] = {
            name: calibration_curves(measured[name], config.fractions) for name in measured
        }
        first = {name: per_seed[config.seeds[0]][0.0] for name, per_seed in measured.items()}
        results["roc"] = {
            name: {
                key: np.asarray(m[key]).tolist()
                for key in (*measured_metrics(m, METRICS), "is_forget")
            }
            for name, m in first.items()
        }
        return results

    def prepare(self) -> list[SettingData]:
        """Load the models, open the cached pipeline and watermark (or load) every configured
        setting's data."""
        from waterdrum_hf.keys import random_keys

        config = self.config
        self.open_pipeline()
        with self._timed("data", "Watermarking the owners' data and its duplicates"):
            if config.dataset_name in BUILT_IN:
                keys = random_keys(config.owners, seed=0).tolist()  # secret, never shown
                if config.dataset_name == "toy-qa":
                    return toy_qa_settings(config, self.pipeline, keys)
                return toy_settings(config, self.pipeline, keys)
            if config.dataset_name == "waterdrum-ax":
                return ax_settings(config, self.tokenizer)
            return tofu_settings(config, self.tokenizer)

    def open_pipeline(self) -> None:
        """Load the models and open the cached pipeline, without preparing any data: for
        calibrating another base model (``config.model_name_or_path``) on data :meth:`prepare` made."""
        from waterdrum_hf.experiments.pipeline import CachedPipeline

        self.model, self.tokenizer, self.watermark_tokenizer = self._models()
        self.pipeline = CachedPipeline(
            self.model,
            self.tokenizer,
            Path(self.config.output_dir) / "cache",
            show_progress=self.config.show_progress,
        )

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
        from transformers import AutoTokenizer

        import waterdrum_hf.tiny as tiny

        config = self.config
        if config.model_name_or_path is None:
            model, tokenizer = tiny.load(show_progress=config.show_progress)
        else:
            from waterdrum_hf.utils.progress import library_progress
            from waterdrum_hf.utils.torch_plumbing import load_causal_lm

            with library_progress(config.show_progress):
                model = load_causal_lm(config.model_name_or_path)
            tokenizer = AutoTokenizer.from_pretrained(config.model_name_or_path)
        if config.watermark_tokenizer is None:
            return model, tokenizer, tokenizer
        return model, tokenizer, AutoTokenizer.from_pretrained(config.watermark_tokenizer)

    def _calibration_models(
        self, data: SettingData, seed: int, *, baselines: bool = True
    ) -> dict[float, dict[str, Any]]:
        """Fraction -> measurement of the model retrained on retain + that share of forget."""
        config = self.config
        training = TrainingSettings(
            batch_size=config.batch_size, learning_rate=config.learning_rate, seed=seed
        )
        twin = data.unwatermarked if baselines else None
        measured = {}
        for fraction in config.fractions:
            kept = round(fraction * len(data.forget))
            stage = self.pipeline.finetune(
                f"{data.name}-{kept}of{len(data.forget)}-seed{seed}",
                data.retain + data.forget[:kept],
                epochs=config.epochs,
                training=training,
            )
            measured[fraction] = {
                "stage": stage,
                "share": kept / len(data.forget),
                "kept": kept,
                **self.measure(stage, data, seed, baselines=baselines),
            }
            if twin is not None:  # the same model on the original texts
                twin_stage = self.pipeline.finetune(
                    f"{data.name}-unwatermarked-{kept}of{len(twin.forget)}-seed{seed}",
                    twin.retain + twin.forget[:kept],
                    epochs=config.epochs,
                    training=training,
                )
                read = self._baselines(twin_stage, twin, seed)
                measured[fraction].update({f"{k}_unwatermarked": v for k, v in read.items()})
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
        null: bool = True,
    ) -> dict[str, Any]:
        """WaterDrum (raw and, with ``null``, null-corrected) and, with ``baselines``, ROUGE-L,
        extraction strength and the MIAs of one model; per query, forget queries first.
        ``dilution``: the model owner's own logits processor, applied while sampling."""
        measured = self._waterdrum(stage, data, seed, dilution, null=null)
        if baselines:
            measured.update(self._baselines(stage, data, seed))
        return measured

    def _waterdrum(
        self, stage: Any, data: SettingData, seed: int, dilution: Any, *, null: bool = True
    ) -> dict[str, Any]:
        """Sampled completions of every query, scored: WaterDrum per query, raw and (with
        ``null``) minus each query's mean under random keys, and the metric's summary."""
        from waterdrum_hf.config import WaterDrumConfig
        from waterdrum_hf.scoring import waterdrum_result

        config = self.config
        keys = data.forget_keys + data.retain_keys
        completions = self.pipeline.completions(
            f"{data.name}-{stage.path.name}",
            stage,
            data.queries,
            num_samples=config.num_samples,
            max_new_tokens=config.max_new_tokens,
            seed=seed,
            logits_processor=[dilution] if dilution else None,
            processor_settings=dilution.settings() if dilution is not None else None,
        )
        null_settings = (
            {"null": "empirical", "null_keys": config.null_keys, "null_seed": seed}
            if config.null_keys and null
            else {"null": "none"}
        )
        result = waterdrum_result(
            completions,
            keys,
            self.watermark_tokenizer,
            config=WaterDrumConfig.from_keywords({"scheme": config.scheme, **null_settings}),
            forget_ids=sorted(set(data.forget_keys)),
            return_details=True,
        )
        values = np.array(result.query_values, dtype=float)
        corrected = (
            {"waterdrum_null_corrected": values - np.array(result.query_null_means, dtype=float)}
            if null
            else {}
        )
        return {
            "waterdrum": values,
            **corrected,
            "is_forget": np.arange(len(keys)) < len(data.forget),
            "summary": result.scalars(),
            "completions": completions,
        }

    def _baselines(self, stage: Any, data: SettingData, seed: int) -> dict[str, Any]:
        """Per query, ROUGE-L recall of the greedy continuation and the extraction strength of
        the reference continuation; each MIA value of the model (forget set vs holdout; NaN
        without a held-out set)."""
        from waterdrum_hf.baselines import mia_scores, mia_value, model_extraction_strength

        config = self.config
        model = self.pipeline.load(stage)
        measured = {
            "rouge_l": self._rouge_l(stage, data, seed),
            "extraction": model_extraction_strength(
                model, self.tokenizer, data.queries, data.references
            ),
            # no held-out set (WaterDrum-TOFU): no MIA
            **dict.fromkeys(MIA_METRICS.values(), math.nan),
        }
        if data.answers is not None:
            measured.update(self._qa_baselines(model, data))
        if data.holdout:
            members = mia_scores(model, self.tokenizer, data.forget, k=config.mia_k)
            holdout = mia_scores(model, self.tokenizer, data.holdout, k=config.mia_k)
            for attack, metric in MIA_METRICS.items():
                member, held = members[attack], holdout[attack]
                measured[metric] = mia_value(member[~np.isnan(member)], held[~np.isnan(held)])
        return measured

    def _qa_baselines(self, model: Any, data: SettingData) -> dict[str, np.ndarray]:
        """Per question: TOFU's Truth Ratio as ``max(0, 1 - R)`` (its own aggregate for what
        a model should know, so higher means more of the data, as every value here), ``R``
        itself (for Forget Quality) and MUSE's KnowMem (ROUGE-L F1 of the greedy answer in
        MUSE's prompt against the gold answer)."""
        from waterdrum_hf.baselines import knowmem_answers, model_truth_ratio
        from waterdrum_hf.baselines.rouge import rouge_l_scores

        answers = data.answers
        assert answers is not None  # the built-in QA corpus's settings
        ratios = model_truth_ratio(
            model, self.tokenizer, data.queries, answers.paraphrased, answers.perturbed
        )
        predicted = knowmem_answers(model, self.tokenizer, answers.questions)
        scores = rouge_l_scores(predicted, answers.gold, stemmer=False)
        return {
            "truth_ratio": np.maximum(0.0, 1.0 - ratios),
            RAW_TRUTH_RATIO: ratios,
            "knowmem": np.array([score.fmeasure for score in scores]),
        }

    def _rouge_l(self, stage: Any, data: SettingData, seed: int) -> np.ndarray:
        """ROUGE-L recall of the greedy continuation of each query against its reference."""
        from waterdrum_hf.baselines import rouge_l_recall

        greedy = self.pipeline.completions(
            f"{data.name}-{stage.path.name}-greedy",
            stage,
            data.queries,
            num_samples=1,
            max_new_tokens=self.config.rouge_new_tokens,
            seed=seed,
            greedy=True,
        )
        return rouge_l_recall([g[0] for g in greedy], data.references)

    # ---- benchmark -------------------------------------------------------------------------

    def _benchmark(
        self, data: SettingData, calibration: dict[float, dict[str, Any]], seed: int
    ) -> dict[str, dict[str, Any]]:
        """Method -> measurement of every configured method unlearning the forget set from the
        original model of the training run of ``seed`` (its calibration's models); with the
        baselines where the meta-evaluation reads them."""
        config = self.config
        return {
            method: {
                "stage": (stage := self._unlearned(method, data, calibration, seed)),
                **self.measure(stage, data, seed, baselines=config.meta_evaluation),
            }
            for method in config.methods
        }

    def _unlearned(
        self, method: str, data: SettingData, calibration: dict[float, dict[str, Any]], seed: int
    ) -> Any:
        """The stage of the original model of ``calibration`` unlearnt with ``method``."""
        config = self.config
        stage, _ = self.pipeline.unlearn(
            method,
            calibration[1.0]["stage"],
            data.forget,
            data.retain,
            steps=config.unlearn_steps,
            training=TrainingSettings(
                batch_size=config.batch_size,
                learning_rate=config.unlearn_learning_rate,
                seed=seed,
            ),
        )
        return stage

    # ---- meta-evaluation -------------------------------------------------------------------

    def meta_evaluate(
        self,
        settings: list[SettingData],
        measured: dict[str, dict[int, Any]],
        unlearned: dict[str, dict[int, dict[str, Any]]],
    ) -> dict[str, Any]:
        """Every metric's faithfulness and robustness per seed
        (:mod:`~waterdrum_hf.experiments.reproduction.meta_evaluation`): the calibration's
        models, and each unlearned model of :meth:`_benchmark` (and the retrained one)
        relearned and quantized. The perturbed models are read without the empirical null
        (the meta-evaluation reads the raw value)."""
        from waterdrum_hf.audits import AuditConfig
        from waterdrum_hf.audits.relearning import relearning_slice
        from waterdrum_hf.experiments.reproduction.analysis import forget_value
        from waterdrum_hf.experiments.reproduction.meta_evaluation import (
            HOLDING_SHARE,
            META_METRICS,
            QUANTIZATION_BITS,
            seed_scores,
            summarise_seeds,
        )

        config = self.config
        per_seed = []
        for seed in config.seeds:
            audit = AuditConfig(seed=seed)
            calibrations, perturbed = [], []
            for data in settings:
                calibration = measured[data.name][seed]
                texts = relearning_slice(data.forget, audit.relearn_share)
                models: dict[str, dict[str, Any]] = {}
                befores = {"retrained": calibration[0.0], **unlearned[data.name][seed]}
                for name, before in befores.items():  # the retrained model is not quantized
                    stage = before["stage"]
                    models[name] = {
                        "before": before,
                        "relearned": self.measure(
                            self.pipeline.relearned(stage, texts, audit), data, seed, null=False
                        ),
                    }
                    if name != "retrained":
                        models[name]["quantized"] = self.measure(
                            self.pipeline.quantized(stage, QUANTIZATION_BITS),
                            data,
                            seed,
                            null=False,
                        )
                calibrations.append(calibration)
                perturbed.append(models)
            per_seed.append(
                {
                    m: seed_scores(forget_value, calibrations, perturbed, m)
                    for m in measured_metrics(calibrations[0][0.0], META_METRICS)
                }
            )
        return {
            "holding_share": HOLDING_SHARE,
            "quantization_bits": QUANTIZATION_BITS,
            "relearning": {
                "share": audit.relearn_share,
                "steps": audit.relearn_steps,
                "learning_rate": audit.relearn_learning_rate,
            },
            "methods": list(config.methods),
            "metrics": summarise_seeds(per_seed),
        }

    def _timed(self, key: str, title: str) -> Any:
        return logged_stage(self.log, self.seconds, key, title)
