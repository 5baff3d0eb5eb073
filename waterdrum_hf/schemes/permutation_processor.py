"""A key-dependent logits perturbation through permutations, as a ``transformers`` processor.

Permutation schemes (Waterfall, adapted KGW) perturb generation the same way: at every step
token ``t`` gets ``bias[perm[t]]`` added to its logit, where ``perm`` is
``np.random.RandomState((id, previous n-1 tokens...)).permutation(N)`` and ``bias`` is the
scheme's function of the permuted position (Waterfall: ``kappa`` times its Fourier function;
KGW: ``delta`` on the first ``gamma N`` positions, the green list). Verification later reads
the same position for ``t``. Every row of a batch may carry its own key.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import torch
from transformers import LogitsProcessor

from waterdrum_hf.keys import check_watermark_ids
from waterdrum_hf.schemes.permutation import full_permutations
from waterdrum_hf.utils.validation import check_positive_int

#: Default memory budget of the permutation cache (entries are int32 rows of length N).
DEFAULT_CACHE_BYTES = 256 * 2**20


class PermutationLogitsProcessor(LogitsProcessor):
    """Adds ``bias[perm[t]]`` to each token's logit, with one key per batch row.

    Pass it to ``model.generate(..., logits_processor=[processor])``. The rows of
    ``input_ids`` are split into ``len(watermark_ids)`` equal, contiguous blocks, block ``i`` using
    ``watermark_ids[i]``: that is how ``generate`` lays out the beams or returned sequences of each
    input row, so beams of a row share its key. As in Waterfall:

    * nothing is added until ``n_gram - 1`` tokens have been generated after the prompt (the
      prompt length is taken from the first call; :meth:`reset` before reusing the processor
      for another ``generate`` call);
    * a context holding a token id ``>= vocab_size`` (a special or added token) uses the
      identity permutation;
    * only the first ``vocab_size`` logits are touched (model vocabularies may be padded).

    Permutations are cached per ``(key, context)`` in a least-recently-used cache on the
    device of the scores.

    Args:
        vocab_size: the permutation length N, ``tokenizer.vocab_size`` of the watermarking
            tokenizer (added tokens excluded), as verification uses.
        watermark_ids: one watermark id for all rows, or one per input row (each
            ``0..2**32-1``).
        bias: ``(N,)`` float values added at each permuted position; all zero disables it.
        n_gram: context length plus one (Waterfall's default 2: one previous token).
        cache_size: most permutations kept; defaults to what fits in 256 MiB.
    """

    def __init__(
        self,
        vocab_size: int,
        watermark_ids: int | Sequence[int],
        bias: np.ndarray,
        n_gram: int = 2,
        *,
        cache_size: int | None = None,
    ) -> None:
        self.vocab_size = check_positive_int(vocab_size, "vocab_size", minimum=2)
        bias = np.asarray(bias, dtype=np.float64)
        if bias.shape != (self.vocab_size,) or not np.isfinite(bias).all():
            raise ValueError(f"`bias` must hold {self.vocab_size} finite values, one per position.")
        self._bias = torch.from_numpy(bias)
        self._active = bool(bias.any())
        self.n_gram = check_positive_int(n_gram, "n_gram", minimum=2)
        if cache_size is None:
            cache_size = max(1, DEFAULT_CACHE_BYTES // (4 * self.vocab_size))
        self.cache_size = check_positive_int(cache_size, "cache_size")
        self._cache: OrderedDict[tuple[int, ...], torch.Tensor] = OrderedDict()
        self._watermark_ids = checked_row_ids(watermark_ids)
        self._prompt_length: int | None = None

    def scheme_settings(self) -> dict[str, object]:
        """What decides the bias (the subclass's parameters), for :meth:`settings`."""
        return {"bias": hashlib.sha256(self._bias.numpy().tobytes()).hexdigest()}

    def __repr__(self) -> str:
        # Never show the ids: they are the owners' secret keys.
        return (
            f"{type(self).__name__}(vocab_size={self.vocab_size}, num_ids={len(self._watermark_ids)}, "
            + "".join(f"{k}={v}, " for k, v in self.scheme_settings().items())
            + f"n_gram={self.n_gram})"
        )

    def settings(self) -> dict[str, object]:
        """What decides the perturbation, ids as their slow one-way hashes (for cache digests)."""
        from waterdrum_hf.utils.fingerprint import key_digest

        return {
            "vocab_size": self.vocab_size, "keys": [key_digest(int(i)) for i in self._watermark_ids],
            **self.scheme_settings(), "n_gram": self.n_gram,
        }  # fmt: skip

    def reset(
        self,
        watermark_ids: int | Sequence[int] | None = None,
        *,
        prompt_length: int | None = None,
    ) -> None:
        """Prepare for a new ``generate`` call, optionally with new ids; keeps the cache.

        Args:
            watermark_ids: new id(s), as in the constructor; ``None`` keeps the current ones.
            prompt_length: length of the (padded) prompt; ``None`` takes it from the next call.
        """
        if watermark_ids is not None:
            self._watermark_ids = checked_row_ids(watermark_ids)
        self._prompt_length = prompt_length

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> torch.Tensor:
        length = input_ids.shape[1]
        if self._prompt_length is None:
            self._prompt_length = length
        rows = input_ids.shape[0]
        if rows % len(self._watermark_ids):
            raise ValueError(
                f"{rows} sequences cannot be split among {len(self._watermark_ids)} ids: pass one id per "
                "input row of `generate` (or a single id)."
            )
        if not self._active or length < self._prompt_length + self.n_gram - 1:
            return scores
        keys = np.repeat(self._watermark_ids, rows // len(self._watermark_ids))
        contexts = input_ids[:, length - self.n_gram + 1 :].cpu().numpy()
        permutations = self._permutations(keys, contexts, scores.device)
        bias = self._bias.to(device=scores.device, dtype=scores.dtype)
        perturbed = scores.clone()
        perturbed[:, : self.vocab_size] += bias[permutations]
        return perturbed

    def _permutations(
        self, keys: np.ndarray, contexts: np.ndarray, device: torch.device
    ) -> torch.Tensor:
        """``(rows, N)`` permutations for the rows' seeds, through the LRU cache."""
        seeds = [
            (int(key), *map(int, context)) if (context < self.vocab_size).all() else None
            for key, context in zip(keys, contexts, strict=True)
        ]
        found: dict[tuple[int, ...] | None, torch.Tensor] = {}
        for seed in dict.fromkeys(seeds):
            if seed is None:
                continue
            cached = self._cache.get(seed)
            if cached is not None and cached.device == device:
                self._cache.move_to_end(seed)
                found[seed] = cached
        missing = [seed for seed in dict.fromkeys(seeds) if seed is not None and seed not in found]
        if missing:
            computed = torch.from_numpy(
                full_permutations(np.array(missing, dtype=np.int64), self.vocab_size)
            )
            computed = computed.to(device=device, dtype=torch.int32)
            for seed, permutation in zip(missing, computed, strict=True):
                found[seed] = self._cache[seed] = permutation.clone()
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        if None in seeds:
            found[None] = torch.arange(self.vocab_size, dtype=torch.int32, device=device)
        return torch.stack([found[seed] for seed in seeds])


def checked_row_ids(watermark_ids: int | Sequence[int]) -> np.ndarray:
    """A writer's ids: one id, or a non-empty sequence of ids (one per input row); returns
    an int64 array."""
    count = 1 if isinstance(watermark_ids, (int, np.integer)) else len(watermark_ids)
    if count == 0:
        raise ValueError("`watermark_ids` is empty: pass one watermark id, or one per input row.")
    return check_watermark_ids(watermark_ids, count, "watermark_ids")
