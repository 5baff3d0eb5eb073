"""Exponential minimum sampling, EXP-edit's writer: each row keeps only the token its key sequence picks."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import torch
from transformers import LogitsProcessor

from waterdrum_hf.schemes.permutation_processor import checked_row_ids
from waterdrum_hf.utils.validation import check_positive_int


class EXPEditKeys(Protocol):
    """What the writer reads of an :class:`~waterdrum_hf.schemes.EXPEditScheme`."""

    @property
    def key_length(self) -> int: ...

    def key(self, watermark_id: int, vocab_size: int, rows: Sequence[int]) -> np.ndarray: ...

    def settings(self) -> dict[str, Any]: ...


class EXPEditLogitsProcessor(LogitsProcessor):
    """Exponential minimum sampling: each row's next token is ``argmax_v xi[i mod n, v] **
    (1 / p_v)``, all others get ``-inf`` (so sampling or greedy search both take it).

    ``p`` is the softmax of the scores this processor receives (after any temperature or
    top-k before it), over the first ``vocab_size`` ids; ``i`` counts the tokens generated
    so far (the prompt length is taken from the first call: :meth:`reset` before reusing the
    processor). The rows of ``input_ids`` are split into ``len(watermark_ids)`` equal,
    contiguous blocks, block ``b`` using ``watermark_ids[b]`` (how ``generate`` lays out the
    samples of each input row).
    """

    def __init__(
        self, scheme: EXPEditKeys, vocab_size: int, watermark_ids: int | Sequence[int]
    ) -> None:
        self.scheme = scheme
        self.vocab_size = check_positive_int(vocab_size, "vocab_size", minimum=2)
        self._ids = checked_row_ids(watermark_ids)
        self._prompt_length: int | None = None

    def __repr__(self) -> str:  # never the ids: they are secret keys
        return (
            f"EXPEditLogitsProcessor(vocab_size={self.vocab_size}, num_ids={len(self._ids)}, "
            f"key_length={self.scheme.key_length})"
        )

    def settings(self) -> dict[str, object]:
        """What decides the sampling, ids as their slow one-way hashes (cache digests)."""
        from waterdrum_hf.utils.fingerprint import writer_settings

        return writer_settings(self.scheme.settings(), self.vocab_size, self._ids)

    def reset(
        self,
        watermark_ids: int | Sequence[int] | None = None,
        *,
        prompt_length: int | None = None,
    ) -> None:
        """Prepare for a new ``generate`` call, optionally with new ids; ``prompt_length``
        (the padded prompt's) ``None`` takes it from the next call."""
        if watermark_ids is not None:
            self._ids = checked_row_ids(watermark_ids)
        self._prompt_length = prompt_length

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> torch.Tensor:
        rows, length = input_ids.shape
        if self._prompt_length is None:
            self._prompt_length = length
        if rows % len(self._ids):
            raise ValueError(
                f"{rows} sequences cannot be split among {len(self._ids)} ids: pass one id per "
                "input row of `generate` (or a single id)."
            )
        position = length - self._prompt_length
        keys = np.repeat(self._ids, rows // len(self._ids))
        rows_of = {
            int(k): self.scheme.key(int(k), self.vocab_size, [position])[0]
            for k in set(keys.tolist())
        }
        uniforms = np.stack([rows_of[int(key)] for key in keys])
        probs = torch.softmax(scores[:, : self.vocab_size].double(), dim=1)
        # argmax of u ** (1 / p) is argmax of log(u) / p (p = 0 gives -inf, never chosen)
        race = torch.from_numpy(np.log(uniforms)).to(probs.device) / probs
        chosen = race.argmax(dim=1)
        out = torch.full_like(scores, -math.inf)
        out[torch.arange(rows, device=scores.device), chosen] = 0.0
        return out
