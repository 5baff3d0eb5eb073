"""waterdrum-hf: the WaterDrum unlearning metric for the Hugging Face ecosystem.

Public names are imported lazily so that ``import waterdrum_hf`` stays cheap (scoring text
does not need torch loaded); ``from waterdrum_hf import X`` works for every name in
``__all__``.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

try:
    __version__ = version("waterdrum-hf")  # the one source: pyproject.toml, as installed
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

_EXPORTS = {
    "Verifier": "verification",
    "verify_texts": "verification",
    "null_reference": "verification",
    "NullReference": "verification",
    "separability_auroc": "statistics",
    "calibration_r2": "statistics",
    "CalibrationFit": "statistics",
    "load_metric": "metric",
    "compute_waterdrum": "metric",
    "completion_queries": "prompting",
    "qa_queries": "prompting",
    "generate": "generation",
    "WatermarkedDataset": "watermarking",
    "WatermarkingConfig": "watermarking_config",
    "WaterDrumCallback": "callbacks",
    "WaterfallLogitsProcessor": "perturbation",
    "key_from_secret": "keys",
    "verify_dataset": "dataset_verification",
    "resumable_map": "resumable",
}
_SUBMODULES = {"data", "tiny", "trainers", "metrics"}

__all__ = [
    "CalibrationFit",
    "NullReference",
    "Verifier",
    "WaterDrumCallback",
    "WatermarkedDataset",
    "WatermarkingConfig",
    "WaterfallLogitsProcessor",
    "__version__",
    "calibration_r2",
    "completion_queries",
    "compute_waterdrum",
    "data",
    "generate",
    "key_from_secret",
    "load_metric",
    "metrics",
    "null_reference",
    "qa_queries",
    "resumable_map",
    "separability_auroc",
    "tiny",
    "trainers",
    "verify_dataset",
    "verify_texts",
]

if TYPE_CHECKING:
    from . import data, tiny
    from .callbacks import WaterDrumCallback
    from .dataset_verification import verify_dataset
    from .generation import generate
    from .keys import key_from_secret
    from .metric import compute_waterdrum, load_metric
    from .perturbation import WaterfallLogitsProcessor
    from .prompting import completion_queries, qa_queries
    from .resumable import resumable_map
    from .statistics import CalibrationFit, calibration_r2, separability_auroc
    from .verification import NullReference, Verifier, null_reference, verify_texts
    from .watermarking import WatermarkedDataset
    from .watermarking_config import WatermarkingConfig


def __getattr__(name: str) -> Any:
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
