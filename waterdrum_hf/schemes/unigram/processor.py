"""The Unigram writer: ``delta`` added to the logits of each row's green tokens."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import torch
from transformers import LogitsProcessor

from waterdrum_hf.keys import check_watermark_ids
from waterdrum_hf.utils.validation import check_positive_int


class UnigramGreenLists(Protocol):
    """What the writer reads of a :class:`~waterdrum_hf.schemes.UnigramWatermark`."""

    @property
    def gamma(self) -> float: ...

    @property
    def delta(self) -> float: ...

    def green_lists(self, watermark_ids: int | Sequence[int], vocab_size: int) -> np.ndarray: ...

    def settings(self) -> dict[str, object]: ...


class UnigramLogitsProcessor(LogitsProcessor):
    """Adds ``delta`` to the logits of each row's green tokens.

    The rows of ``input_ids`` are split into ``len(watermark_ids)`` equal, contiguous blocks,
    block ``i`` using ``watermark_ids[i]`` (how ``generate`` lays out the samples of each input
    row). Only the first ``vocab_size`` logits are touched (model vocabularies may be padded).
    """

    def __init__(
        self, watermark: UnigramGreenLists, vocab_size: int, watermark_ids: int | Sequence[int]
    ) -> None:
        self.watermark = watermark
        self.vocab_size = check_positive_int(vocab_size, "vocab_size", minimum=2)
        green = watermark.green_lists(watermark_ids, self.vocab_size)
        self._bias = torch.from_numpy(green * watermark.delta)
        self._ids = check_watermark_ids(watermark_ids, len(green), "watermark_ids")

    def __repr__(self) -> str:  # never the ids: they are secret keys
        return (
            f"UnigramLogitsProcessor(vocab_size={self.vocab_size}, num_ids={len(self._ids)}, "
            f"gamma={self.watermark.gamma}, delta={self.watermark.delta})"
        )

    def settings(self) -> dict[str, object]:
        """What decides the perturbation, ids as their slow one-way hashes (cache digests)."""
        from waterdrum_hf.utils.fingerprint import writer_settings

        return writer_settings(self.watermark.settings(), self.vocab_size, self._ids)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> torch.Tensor:
        rows, keys = input_ids.shape[0], len(self._bias)
        if rows % keys:
            raise ValueError(
                f"{rows} sequences cannot be split among {keys} ids: pass one id per input "
                "row of `generate` (or a single id)."
            )
        bias = self._bias.to(device=scores.device, dtype=scores.dtype)
        perturbed = scores.clone()
        perturbed[:, : self.vocab_size] += bias.repeat_interleave(rows // keys, dim=0)
        return perturbed
