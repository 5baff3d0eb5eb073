"""Synth-ID's writer for many owners: transformers' tournament-sampling processor, one per owner.

transformers' ``SynthIDTextWatermarkLogitsProcessor`` holds one key list for a whole batch;
here every row of a batch carries its owner's keys (:func:`~waterdrum_hf.schemes.synthid.scheme.
synthid_keys`). The rows of each owner go through that owner's own transformers processor,
which is exact: the processor treats rows independently (its state, hashes and reweighting
are per row), so a row's output is what a processor of its owner alone would give it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import torch
from transformers import LogitsProcessor, SynthIDTextWatermarkLogitsProcessor

from waterdrum_hf.schemes.permutation_processor import checked_row_ids
from waterdrum_hf.utils.validation import check_positive_int


class SynthIDKeys(Protocol):
    """What the writer reads of a :class:`~waterdrum_hf.schemes.SynthIDScheme`: its settings
    and each owner's keys."""

    @property
    def depth(self) -> int: ...

    @property
    def n_gram(self) -> int: ...

    @property
    def sampling_table_size(self) -> int: ...

    @property
    def sampling_table_seed(self) -> int: ...

    def keys(self, watermark_ids: Any) -> np.ndarray: ...

    def settings(self) -> dict[str, Any]: ...


class SynthIDLogitsProcessor(LogitsProcessor):
    """Synth-ID's tournament reweighting with one owner per batch row; generate with
    ``do_sample=True``.

    The rows of ``input_ids`` are split into ``len(watermark_ids)`` equal, contiguous blocks,
    block ``i`` using ``watermark_ids[i]`` (how ``generate`` lays out the returned sequences of
    each input row), as for :class:`~waterdrum_hf.schemes.permutation_processor.PermutationLogitsProcessor`.
    As in transformers, the context of the first generated tokens is padded with token 0 (the
    prompt is not read), a context already seen in the row is not watermarked again, and every
    logit of the model's vocabulary is reweighted.

    Args:
        scheme: the :class:`~waterdrum_hf.schemes.SynthIDScheme` (keys, table, ``n_gram``).
        vocab_size: the watermark's vocabulary size (the watermarking tokenizer's).
        watermark_ids: one watermark id for all rows, or one per input row (``0..2**32-1``).
        context_history_size: contexts remembered per row to skip repeated ones (1024).
    """

    def __init__(
        self,
        scheme: SynthIDKeys,
        vocab_size: int,
        watermark_ids: int | Sequence[int],
        *,
        context_history_size: int = 1024,
    ) -> None:
        self.scheme = scheme
        self.vocab_size = check_positive_int(vocab_size, "vocab_size", minimum=2)
        self.context_history_size = check_positive_int(context_history_size, "context_history_size")
        self._watermark_ids = checked_row_ids(watermark_ids)
        self._owners: dict[int, SynthIDTextWatermarkLogitsProcessor] = {}

    def __repr__(self) -> str:
        # Never show the ids or keys: they are the owners' secrets.
        return (
            f"{type(self).__name__}(vocab_size={self.vocab_size}, "
            f"num_ids={len(self._watermark_ids)}, depth={self.scheme.depth}, "
            f"n_gram={self.scheme.n_gram}, context_history_size={self.context_history_size})"
        )

    def settings(self) -> dict[str, object]:
        """What decides the perturbation, ids as their slow one-way hashes (for cache digests)."""
        from waterdrum_hf.utils.fingerprint import writer_settings

        settings = writer_settings(self.scheme.settings(), self.vocab_size, self._watermark_ids)
        return {**settings, "context_history_size": self.context_history_size}

    def reset(
        self,
        watermark_ids: int | Sequence[int] | None = None,
        *,
        prompt_length: int | None = None,
    ) -> None:
        """Prepare for a new ``generate`` call (fresh per-row state), optionally with new ids.
        ``prompt_length`` is accepted for the writer's common interface and not needed: the
        processor counts its own calls."""
        if watermark_ids is not None:
            self._watermark_ids = checked_row_ids(watermark_ids)
        self._owners = {}

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> torch.Tensor:
        rows = input_ids.shape[0]
        if rows % len(self._watermark_ids):
            raise ValueError(
                f"{rows} sequences cannot be split among {len(self._watermark_ids)} ids: pass one "
                "id per input row of `generate` (or a single id)."
            )
        row_ids = np.repeat(self._watermark_ids, rows // len(self._watermark_ids))
        updated = scores.clone()
        for owner in np.unique(row_ids).tolist():
            selected = torch.as_tensor(np.flatnonzero(row_ids == owner), device=scores.device)
            processor = self._owners.get(owner)
            if processor is None:
                processor = self._owners[owner] = SynthIDTextWatermarkLogitsProcessor(
                    ngram_len=self.scheme.n_gram,
                    keys=self.scheme.keys(owner)[0].tolist(),
                    sampling_table_size=self.scheme.sampling_table_size,
                    sampling_table_seed=self.scheme.sampling_table_seed,
                    context_history_size=self.context_history_size,
                    device=scores.device,
                )
            updated[selected] = processor(input_ids[selected], scores[selected]).to(scores.dtype)
        return updated
