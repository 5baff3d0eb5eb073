"""Unigram watermark (Zhao, Ananth, Li and Wang, "Provable Robust Watermarking for
AI-Generated Text", ICLR 2024; arXiv:2306.17439), as a writer only.

Construction. KGW with a context of length zero: one green list per key, the same at every
step and for every previous token. For watermark id ``id`` the green list holds the tokens
whose position in ``RandomState((id,)).permutation(N)`` is below ``G = floor(gamma * N)``: a
uniformly random set of ``G`` tokens, drawn with the same exact permutation kernel as
Waterfall and adapted KGW (:mod:`waterdrum_hf.schemes.kgw.scheme`), so keys have the same range and
derivation. While generating, every token of the green list gets ``delta`` added to its logit,
from the first generated token on (no context is needed). A fixed list is what makes the
scheme provably robust to edits: an edit changes only the tokens it touches, never which
tokens are green.

Where this differs from the authors' implementation (GPTWatermark): there a SHA-256 hash of
the key seeds numpy's ``default_rng``, which shuffles a mask of ``G`` green entries; here the
key seeds MT19937 (``init_by_array((id,))``) and the legacy permutation. Both draw a uniformly
random ``G``-subset of the vocabulary; the generators differ, so green lists are not
interchangeable with the reference's.

Why a writer only: in WaterDrum the data owners read Waterfall (or adapted KGW); this scheme
is the *model owner's* own watermark in the dilution study (``benchmarks/dilution.py``: the
deployed model watermarks its outputs and the data owners still verify theirs). Its detector
(a one-proportion z-test of the green count) is not needed there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from waterdrum_hf.keys import check_watermark_ids
from waterdrum_hf.schemes.permutation import full_permutations
from waterdrum_hf.schemes.unigram.processor import UnigramLogitsProcessor
from waterdrum_hf.utils.validation import check_positive_int


@dataclass(frozen=True)
class UnigramWatermark:
    """The Unigram watermark's settings (the paper's defaults: ``gamma`` 0.5, ``delta`` 2).

    Args:
        gamma: share of the vocabulary that is green, ``0 < gamma < 1``.
        delta: logit bias added to green tokens while writing, ``>= 0``.
    """

    gamma: float = 0.5
    delta: float = 2.0
    name = "unigram"

    def __post_init__(self) -> None:
        for setting in ("gamma", "delta"):
            value = getattr(self, setting)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"`{setting}` must be a number, got {type(value).__name__}.")
            if not math.isfinite(value):
                raise ValueError(f"`{setting}` must be finite, got {value}.")
        if not 0 < self.gamma < 1:
            raise ValueError(f"`gamma` must be in (0, 1) (the green share), got {self.gamma}.")
        if self.delta < 0:
            raise ValueError(f"`delta` must be >= 0, got {self.delta}.")
        object.__setattr__(self, "gamma", float(self.gamma))
        object.__setattr__(self, "delta", float(self.delta))

    def green_size(self, vocab_size: int) -> int:
        """``G = floor(gamma * N)``, checked to leave at least one green token (``gamma < 1``
        leaves a red one: the float product ``gamma * N`` stays below ``N``)."""
        vocab_size = check_positive_int(vocab_size, "vocab_size", minimum=2)
        size = math.floor(self.gamma * vocab_size)
        if size < 1:
            raise ValueError(
                f"`gamma`={self.gamma} leaves no green token in a vocabulary of {vocab_size}: "
                "pick gamma so that gamma * N >= 1."
            )
        return size

    def green_lists(self, watermark_ids: int | Sequence[int], vocab_size: int) -> np.ndarray:
        """``(keys, N)`` boolean masks: token ``t`` is green under key ``k`` when its position
        in ``RandomState((k,)).permutation(N)`` is below :meth:`green_size`."""
        count = 1 if isinstance(watermark_ids, (int, np.integer)) else len(watermark_ids)
        if count == 0:
            raise ValueError("`watermark_ids` is empty: pass one watermark id, or one per row.")
        ids = check_watermark_ids(watermark_ids, count, "watermark_ids")
        return full_permutations(ids[:, None], vocab_size) < self.green_size(vocab_size)

    def logits_processor(
        self, vocab_size: int, watermark_ids: int | Sequence[int]
    ) -> UnigramLogitsProcessor:
        """A ``transformers`` logits processor that writes this watermark under
        ``watermark_ids`` (one for all rows, or one per input row of ``generate``)."""
        return UnigramLogitsProcessor(self, vocab_size, watermark_ids)

    def settings(self) -> dict[str, object]:
        """What decides the watermark (never a key)."""
        return {"scheme": self.name, "gamma": self.gamma, "delta": self.delta}
