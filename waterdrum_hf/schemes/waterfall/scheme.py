"""Waterfall (Lau et al., 2024) as a :class:`~waterdrum_hf.schemes.base.WatermarkScheme`."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from waterdrum_hf.schemes.base import PermutationScheme
from waterdrum_hf.schemes.waterfall.function import (
    watermark_bias,
    watermark_function,
    watermark_function_terms,
)
from waterdrum_hf.utils.fields import flag


@dataclass(frozen=True)
class WaterfallScheme(PermutationScheme):
    """Waterfall's Fourier watermark: token ``t`` after context ``c`` under key ``id`` reads
    function ``k_p`` at ``RandomState((id, *c)).permutation(N)[t]``.

    Args:
        k_p: which of Waterfall's functions carries the watermark (the paper uses 1).
        n_gram: as for every :class:`~waterdrum_hf.schemes.WatermarkScheme`.
        vocab_size: as for every :class:`~waterdrum_hf.schemes.WatermarkScheme`.
    """

    k_p: int = flag(1, "Waterfall's function number (default 1).")
    name = "waterfall"

    def __post_init__(self) -> None:
        if isinstance(self.k_p, bool) or not isinstance(self.k_p, numbers.Integral):
            raise TypeError(f"`k_p` must be an integer, got {type(self.k_p).__name__}.")
        if self.k_p < 1:
            raise ValueError(f"`k_p` must be in 1..2*max_freq of the vocabulary, got {self.k_p}.")
        object.__setattr__(self, "k_p", int(self.k_p))
        super().__post_init__()

    def check_vocab_size(self, vocab_size: int) -> None:
        watermark_function_terms(self.k_p, vocab_size)

    def position_terms(self, positions: np.ndarray, vocab_size: int) -> np.ndarray:
        return watermark_function(positions, self.k_p, vocab_size)

    def position_bias(self, vocab_size: int, *, kappa: float = 2.0) -> np.ndarray:
        return watermark_bias(vocab_size, self.k_p, kappa)

    def logits_processor(
        self,
        vocab_size: int,
        watermark_ids: int | Sequence[int],
        *,
        kappa: float = 2.0,
        **kwargs: Any,
    ) -> Any:
        # Imported here: the processor needs torch, which reading text does not.
        from waterdrum_hf.schemes.waterfall.processor import WaterfallLogitsProcessor

        return WaterfallLogitsProcessor(
            vocab_size, watermark_ids, kappa=kappa, k_p=self.k_p, n_gram=self.n_gram, **kwargs
        )
