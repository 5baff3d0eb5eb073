"""The reader: WaterDrum values from generated text, one concern per module.

:mod:`~waterdrum_hf.scoring.inputs` checks and groups the inputs, :mod:`~.pooling` pools each
query's samples, :mod:`~.nulls` reads what keys that own nothing read, :mod:`~.intervals` adds
bootstrap intervals, :mod:`~.results` holds the typed result and its flat dict, and
:mod:`~.compute` puts them together (:func:`waterdrum_result`, :func:`compute_waterdrum`).
How values are read is one :class:`~waterdrum_hf.WaterDrumConfig`.
"""

from waterdrum_hf.scoring.compute import compute_waterdrum, waterdrum_result
from waterdrum_hf.scoring.inputs import owner_display_names
from waterdrum_hf.scoring.loading import load_metric, metric_path
from waterdrum_hf.scoring.results import OwnerValue, SetValue, WaterDrumResult

__all__ = [
    "OwnerValue",
    "SetValue",
    "WaterDrumResult",
    "compute_waterdrum",
    "load_metric",
    "metric_path",
    "owner_display_names",
    "waterdrum_result",
]
