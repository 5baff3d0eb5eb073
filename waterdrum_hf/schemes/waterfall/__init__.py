"""Waterfall: its function, the exact permutation kernel, the logits processor and the scheme."""

from waterdrum_hf.schemes.waterfall.function import watermark_function, watermark_function_terms
from waterdrum_hf.schemes.waterfall.scheme import WaterfallScheme

__all__ = ["WaterfallScheme", "watermark_function", "watermark_function_terms"]
