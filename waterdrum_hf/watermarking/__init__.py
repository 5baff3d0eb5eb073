"""The writer: watermarking owners' text with a scheme's perturbation while paraphrasing.

``WatermarkedDataset`` (a ``datasets.map`` function), its ``WatermarkingConfig`` and
``resumable_map`` for long runs; the paraphraser it writes with is generation's
(:mod:`waterdrum_hf.generation.paraphraser`). Names are
imported lazily, so that reading the config (the CLI does) does not load torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "WatermarkedDataset": "dataset",
    "WatermarkingConfig": "config",
    "resumable_map": "resumable",
}

__all__ = ["WatermarkedDataset", "WatermarkingConfig", "resumable_map"]

if TYPE_CHECKING:
    from waterdrum_hf.watermarking.config import WatermarkingConfig
    from waterdrum_hf.watermarking.dataset import WatermarkedDataset
    from waterdrum_hf.watermarking.resumable import resumable_map


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value
