"""Watermark schemes: what the writer (watermarking) and the reader (verification) share.

Each scheme implements :class:`WatermarkScheme`; Waterfall is the default.
"""

from waterdrum_hf.schemes.base import PermutationScheme, WatermarkScheme
from waterdrum_hf.schemes.waterfall import WaterfallScheme

__all__ = ["PermutationScheme", "WatermarkScheme", "WaterfallScheme"]
