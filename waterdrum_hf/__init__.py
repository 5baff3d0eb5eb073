"""waterdrum-hf: the WaterDrum unlearning metric for the Hugging Face ecosystem.

Public names are imported lazily so that ``import waterdrum_hf`` stays cheap (scoring text
does not need torch loaded); ``from waterdrum_hf import X`` works for every name in
``__all__``. The import also registers the WaterDrum module in evaluate's module cache, so that
``evaluate.load("waterdrum")`` finds it (:mod:`waterdrum_hf.metrics.loading`; a stat when
current, silent, and never an error), and drops the lines torchao prints when transformers
imports it (:func:`waterdrum_hf.utils.backend_logs.drop_torchao_import_lines`).
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from waterdrum_hf._version import library_version
from waterdrum_hf.metrics.loading import register_metric_quietly
from waterdrum_hf.utils.backend_logs import drop_torchao_import_lines

__version__ = library_version()
drop_torchao_import_lines()
register_metric_quietly()

_EXPORTS = {
    "WaterDrumConfig": "config",
    "NullConfig": "config",
    "IntervalConfig": "config",
    "WaterDrumArguments": "callbacks.arguments",
    "SamplingConfig": "generation.sampling",
    "CallbackPlan": "callbacks.plan",
    "AuditQueries": "audits",
    "KGWScheme": "schemes",
    "EXPEditScheme": "schemes",
    "SynthIDScheme": "schemes",
    "Verifier": "scoring.verification",
    "verify_texts": "scoring.verification",
    "null_reference": "scoring.verification",
    "NullReference": "scoring.verification",
    "AnalyticNull": "scoring.analytic_null",
    "separability_auroc": "statistics",
    "calibration_r2": "statistics",
    "CalibrationFit": "statistics",
    "holm_adjusted": "statistics",
    "compare_seeds": "scoring.seed_comparison",
    "seed_interval": "scoring.seed_comparison",
    "difference_interval": "scoring.seed_comparison",
    "moments_interval": "scoring.seed_comparison",
    "welch_interval": "scoring.seed_comparison",
    "SeedComparison": "scoring.seed_comparison",
    "SeedValue": "scoring.seed_comparison",
    "ClosestMethods": "scoring.seed_comparison",
    "Interval": "bootstrap",
    "bootstrap_replicates": "bootstrap",
    "percentile_interval": "bootstrap",
    "load_metric": "metrics.loading",
    "register_metric": "metrics.loading",
    "waterdrum_metrics": "scoring",
    "waterdrum_result": "scoring",
    "WaterDrumResult": "scoring",
    "SetValue": "scoring",
    "OwnerValue": "scoring",
    "completion_queries": "generation.prompting",
    "qa_queries": "generation.prompting",
    "generate": "generation.engine",
    "CompletionServer": "generation.server",
    "ServerError": "generation.server",
    "VLLMEngine": "generation.vllm_engine",
    "auto_batch_size": "generation.engine",
    "WatermarkedDataset": "watermarking",
    "WatermarkingConfig": "watermarking",
    "WatermarkScheme": "schemes",
    "WaterfallScheme": "schemes",
    "WaterDrumCallback": "callbacks.callback",
    "BoundCallback": "bound_callback",
    "WaterfallLogitsProcessor": "schemes.waterfall.processor",
    "key_from_secret": "keys",
    "verify_dataset": "scoring.dataset_verification",
    "resumable_map": "watermarking",
    "AuditConfig": "audits",
    "AuditResults": "audits",
    "run_audits": "audits",
    "TokenView": "report.token_view",
    "token_view": "report.token_view",
    "write_token_views": "report.token_view_render",
    "HubResultsConfig": "hub_results.config",
    "write_hub_results": "hub_results.publish",
    "push_hub_results": "hub_results.publish",
    "rouge_l_recall": "baselines.rouge",
    "loss_score": "baselines.mia",
    "zlib_score": "baselines.mia",
    "min_k_percent_score": "baselines.mia",
    "min_k_plus_plus_score": "baselines.mia",
    "loss_mia": "baselines.mia",
    "zlib_mia": "baselines.mia",
    "min_k_percent_prob": "baselines.mia",
    "min_k_plus_plus_prob": "baselines.mia",
    "mia_value": "baselines.mia",
    "mia_scores": "baselines.mia",
    "truth_ratio": "baselines.truth_ratio",
    "aggregate_truth_ratios": "baselines.truth_ratio",
    "model_truth_ratio": "baselines.truth_ratio",
    "forget_quality": "baselines.forget_quality",
    "knowmem": "baselines.knowmem",
    "knowmem_answers": "baselines.knowmem",
    "model_knowmem": "baselines.knowmem",
    "extraction_strength": "baselines.extraction",
    "model_extraction_strength": "baselines.extraction",
}
_RENAMED = {"compute_waterdrum": "waterdrum_metrics", "EvaluationPlan": "CallbackPlan"}
"""Public names renamed in 0.2 (old -> new): the old name still works, with a FutureWarning,
until 0.3."""

_SUBMODULES = {"attacks", "audits", "data", "tiny", "trainers", "metrics", "lm_eval_tasks"}

__all__ = [
    "AnalyticNull",
    "AuditConfig",
    "AuditQueries",
    "CallbackPlan",
    "IntervalConfig",
    "KGWScheme",
    "EXPEditScheme",
    "NullConfig",
    "SynthIDScheme",
    "SamplingConfig",
    "WaterDrumArguments",
    "WaterDrumConfig",
    "AuditResults",
    "BoundCallback",
    "CalibrationFit",
    "ClosestMethods",
    "CompletionServer",
    "ServerError",
    "HubResultsConfig",
    "SeedComparison",
    "SeedValue",
    "compare_seeds",
    "difference_interval",
    "moments_interval",
    "seed_interval",
    "welch_interval",
    "Interval",
    "NullReference",
    "OwnerValue",
    "SetValue",
    "TokenView",
    "Verifier",
    "VLLMEngine",
    "WaterDrumCallback",
    "WaterDrumResult",
    "WatermarkScheme",
    "WatermarkedDataset",
    "WatermarkingConfig",
    "WaterfallLogitsProcessor",
    "WaterfallScheme",
    "__version__",
    "aggregate_truth_ratios",
    "attacks",
    "audits",
    "auto_batch_size",
    "bootstrap_replicates",
    "calibration_r2",
    "completion_queries",
    "waterdrum_metrics",
    "data",
    "extraction_strength",
    "forget_quality",
    "generate",
    "holm_adjusted",
    "key_from_secret",
    "knowmem",
    "knowmem_answers",
    "lm_eval_tasks",
    "load_metric",
    "loss_mia",
    "loss_score",
    "metrics",
    "mia_scores",
    "mia_value",
    "min_k_percent_prob",
    "min_k_percent_score",
    "min_k_plus_plus_prob",
    "min_k_plus_plus_score",
    "model_extraction_strength",
    "model_knowmem",
    "model_truth_ratio",
    "null_reference",
    "percentile_interval",
    "push_hub_results",
    "qa_queries",
    "register_metric",
    "resumable_map",
    "rouge_l_recall",
    "run_audits",
    "separability_auroc",
    "tiny",
    "token_view",
    "trainers",
    "truth_ratio",
    "verify_dataset",
    "verify_texts",
    "waterdrum_result",
    "write_hub_results",
    "write_token_views",
    "zlib_mia",
    "zlib_score",
]

if TYPE_CHECKING:
    from waterdrum_hf import attacks, audits, data, lm_eval_tasks, tiny
    from waterdrum_hf.audits import AuditConfig, AuditQueries, AuditResults, run_audits
    from waterdrum_hf.baselines.extraction import extraction_strength, model_extraction_strength
    from waterdrum_hf.baselines.forget_quality import forget_quality
    from waterdrum_hf.baselines.knowmem import knowmem, knowmem_answers, model_knowmem
    from waterdrum_hf.baselines.mia import (
        loss_mia,
        loss_score,
        mia_scores,
        mia_value,
        min_k_percent_prob,
        min_k_percent_score,
        min_k_plus_plus_prob,
        min_k_plus_plus_score,
        zlib_mia,
        zlib_score,
    )
    from waterdrum_hf.baselines.rouge import rouge_l_recall
    from waterdrum_hf.baselines.truth_ratio import (
        aggregate_truth_ratios,
        model_truth_ratio,
        truth_ratio,
    )
    from waterdrum_hf.bootstrap import Interval, bootstrap_replicates, percentile_interval
    from waterdrum_hf.bound_callback import BoundCallback
    from waterdrum_hf.callbacks.arguments import WaterDrumArguments
    from waterdrum_hf.callbacks.callback import WaterDrumCallback
    from waterdrum_hf.callbacks.plan import CallbackPlan
    from waterdrum_hf.config import IntervalConfig, NullConfig, WaterDrumConfig
    from waterdrum_hf.generation.engine import auto_batch_size, generate
    from waterdrum_hf.generation.prompting import completion_queries, qa_queries
    from waterdrum_hf.generation.sampling import SamplingConfig
    from waterdrum_hf.generation.server import CompletionServer, ServerError
    from waterdrum_hf.generation.vllm_engine import VLLMEngine
    from waterdrum_hf.hub_results.config import HubResultsConfig
    from waterdrum_hf.hub_results.publish import push_hub_results, write_hub_results
    from waterdrum_hf.keys import key_from_secret
    from waterdrum_hf.metrics.loading import load_metric, register_metric
    from waterdrum_hf.report.token_view import TokenView, token_view
    from waterdrum_hf.report.token_view_render import write_token_views
    from waterdrum_hf.schemes import (
        EXPEditScheme,
        KGWScheme,
        SynthIDScheme,
        WaterfallScheme,
        WatermarkScheme,
    )
    from waterdrum_hf.schemes.waterfall.processor import WaterfallLogitsProcessor
    from waterdrum_hf.scoring import (
        OwnerValue,
        SetValue,
        WaterDrumResult,
        waterdrum_metrics,
        waterdrum_result,
    )
    from waterdrum_hf.scoring.analytic_null import AnalyticNull
    from waterdrum_hf.scoring.dataset_verification import verify_dataset
    from waterdrum_hf.scoring.seed_comparison import (
        ClosestMethods,
        SeedComparison,
        SeedValue,
        compare_seeds,
        difference_interval,
        moments_interval,
        seed_interval,
        welch_interval,
    )
    from waterdrum_hf.scoring.verification import (
        NullReference,
        Verifier,
        null_reference,
        verify_texts,
    )
    from waterdrum_hf.statistics import (
        CalibrationFit,
        calibration_r2,
        holm_adjusted,
        separability_auroc,
    )
    from waterdrum_hf.watermarking import WatermarkedDataset, WatermarkingConfig, resumable_map


def __getattr__(name: str) -> Any:
    if name in _RENAMED:  # not cached: every use of an old name warns
        new = _RENAMED[name]
        warnings.warn(
            f"`waterdrum_hf.{name}` is renamed `waterdrum_hf.{new}`; the old name will be "
            "removed in 0.3",
            FutureWarning,
            stacklevel=2,
        )
        return __getattr__(new)
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'waterdrum_hf' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
