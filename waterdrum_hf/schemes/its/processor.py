"""Inverse-transform sampling, ITS's writer: each row keeps only its inverse-transform token."""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np
import torch
from transformers import LogitsProcessor

from waterdrum_hf.keys import check_watermark_id
from waterdrum_hf.utils.validation import check_positive_int


class ITSKey(Protocol):
    """What the writer reads of an :class:`~waterdrum_hf.schemes.ITSWatermark`."""

    @property
    def key_length(self) -> int: ...

    def key(self, watermark_id: int, vocab_size: int) -> tuple[np.ndarray, np.ndarray]: ...

    def settings(self) -> dict[str, object]: ...


class ITSLogitsProcessor(LogitsProcessor):
    """Leaves each row only its inverse-transform token (all others ``-inf``, so sampling or
    greedy search both take it).

    ``p`` is the softmax of the scores this processor receives, over the first ``vocab_size``
    ids. Positions count the tokens generated so far: the prompt length is taken from the
    first call, and the rows' shifts are drawn then (:attr:`shifts`); :meth:`reset` before
    reusing the processor for another ``generate`` call.
    """

    def __init__(self, watermark: ITSKey, vocab_size: int, watermark_id: int) -> None:
        self.watermark = watermark
        self.vocab_size = check_positive_int(vocab_size, "vocab_size", minimum=2)
        uniforms, order = watermark.key(watermark_id, self.vocab_size)
        self._id = check_watermark_id(watermark_id, "watermark_id")
        self._uniforms = torch.from_numpy(uniforms)
        self._order = torch.from_numpy(order)
        self._prompt_length: int | None = None
        self.shifts: torch.Tensor | None = None
        """Each row's shift of the key sequence in the current ``generate`` call."""

    def __repr__(self) -> str:  # never the id: it is a secret key
        return (
            f"ITSLogitsProcessor(vocab_size={self.vocab_size}, "
            f"key_length={self.watermark.key_length})"
        )

    def settings(self) -> dict[str, object]:
        """What decides the sampling, the id as its slow one-way hash (cache digests)."""
        from waterdrum_hf.utils.fingerprint import writer_settings

        return writer_settings(self.watermark.settings(), self.vocab_size, [self._id])

    def reset(self, *, prompt_length: int | None = None) -> None:
        """Prepare for a new ``generate`` call: new shifts, and the (padded) prompt length,
        ``None`` taking it from the next call."""
        self._prompt_length = prompt_length
        self.shifts = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> torch.Tensor:
        rows, length = input_ids.shape
        if self._prompt_length is None:
            self._prompt_length = length
        if self.shifts is None or len(self.shifts) != rows:
            self.shifts = torch.randint(self.watermark.key_length, (rows,))
        position = (self.shifts + (length - self._prompt_length)) % self.watermark.key_length
        order = self._order.to(scores.device)
        probs = torch.softmax(scores[:, : self.vocab_size].double(), dim=1)[:, order]
        cumulative = probs.cumsum(dim=1)
        targets = self._uniforms[position].to(device=scores.device).unsqueeze(1)
        # the first rank whose cumulative probability reaches u; u above a total rounded below
        # 1 takes the last token of positive probability
        targets = torch.minimum(targets, cumulative[:, -1:])
        rank = torch.searchsorted(cumulative, targets).squeeze(1)
        out = torch.full_like(scores, -math.inf)
        out[torch.arange(rows, device=scores.device), order[rank]] = 0.0
        return out
