"""Waterfall's key-dependent logits perturbation as a ``transformers`` logits processor.

At every generation step Waterfall adds ``phi[perm[t]]`` to token ``t``'s logit, where ``phi``
is ``kappa`` times Waterfall's function ``k_p`` (``cos(2 pi k_p x / N)``, or ``sin`` beyond the
cosine range; the verifier reads the same function). This reproduces that perturbation without
``waterfall``'s ``generate`` (whose bundled group beam search rejects sampling on
transformers >= 5.3), and lets every row of a batch carry its own key.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from waterdrum_hf.schemes.permutation_processor import PermutationLogitsProcessor
from waterdrum_hf.schemes.waterfall.function import watermark_bias
from waterdrum_hf.utils.validation import check_positive_int


class WaterfallLogitsProcessor(PermutationLogitsProcessor):
    """Adds Waterfall's watermark perturbation, with one key per batch row.

    :class:`~waterdrum_hf.schemes.permutation_processor.PermutationLogitsProcessor` (whose docstring
    describes ``vocab_size``, ``watermark_ids``, ``n_gram`` and ``cache_size``) with Waterfall's bias:

    Args:
        kappa: perturbation strength (Waterfall's kappa; the paper uses 2). 0 disables it.
        k_p: which watermarking function (Waterfall's ``k_p``; the paper uses 1).
    """

    def __init__(
        self,
        vocab_size: int,
        watermark_ids: int | Sequence[int],
        kappa: float = 2.0,
        k_p: int = 1,
        n_gram: int = 2,
        *,
        cache_size: int | None = None,
    ) -> None:
        if not np.isfinite(kappa) or kappa < 0:
            raise ValueError(f"`kappa` must be a finite number >= 0, got {kappa}.")
        self.kappa = float(kappa)
        self.k_p = k_p
        vocab_size = check_positive_int(vocab_size, "vocab_size", minimum=2)
        bias = watermark_bias(vocab_size, self.k_p, self.kappa)
        super().__init__(vocab_size, watermark_ids, bias, n_gram, cache_size=cache_size)

    def scheme_settings(self) -> dict[str, object]:
        return {"kappa": self.kappa, "k_p": self.k_p}
