"""The writer: watermarking owners' text with a scheme's perturbation while paraphrasing.

``WatermarkedDataset`` (a ``datasets.map`` function), its ``WatermarkingConfig``, the
paraphraser and its diverse beam search, and ``resumable_map`` for long runs.
"""

from waterdrum_hf.watermarking.config import WatermarkingConfig
from waterdrum_hf.watermarking.dataset import WatermarkedDataset
from waterdrum_hf.watermarking.resumable import resumable_map

__all__ = ["WatermarkedDataset", "WatermarkingConfig", "resumable_map"]
