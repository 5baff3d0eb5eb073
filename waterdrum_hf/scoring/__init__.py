"""The reader, whole: from generated text to WaterDrum values, one concern per module.

:mod:`~.verification` scores texts under keys (the one scoring core; :mod:`~.dataset_verification`
maps it over a ``datasets.Dataset``), :mod:`~.inputs` checks and groups the inputs,
:mod:`~.pooling` pools each query's samples, :mod:`~.nulls` reads what keys that own nothing
read (:mod:`~.analytic_null` without scoring them), :mod:`~.intervals` adds bootstrap
intervals, :mod:`~.results` holds the typed result and its flat dict, :mod:`~.compute` puts
them together (:func:`waterdrum_result`, :func:`waterdrum_metrics`) and
:mod:`~.seed_comparison` compares results over seeds. How values are read is one
:class:`~waterdrum_hf.WaterDrumConfig`.
"""

from waterdrum_hf.scoring.compute import waterdrum_metrics, waterdrum_result
from waterdrum_hf.scoring.inputs import owner_display_names
from waterdrum_hf.scoring.results import OwnerValue, SetValue, WaterDrumResult

__all__ = [
    "OwnerValue",
    "SetValue",
    "WaterDrumResult",
    "waterdrum_metrics",
    "owner_display_names",
    "waterdrum_result",
]
