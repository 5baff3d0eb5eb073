"""EXP-edit (Kuditipudi, Thickstun, Hashimoto and Liang, "Robust Distortion-free
Watermarks for Language Models", TMLR 2024; arXiv:2307.15593) as a data owner's scheme.

Key. Each owner's key is a sequence ``xi`` of ``n = key_length`` vectors of uniforms over the
vocabulary (256, as in the authors' code): ``xi[j, v]`` is draw ``j * N + v`` of
``numpy.random.Generator(numpy.random.Philox(key=id + 2**64 * DOMAIN)).random(n * N)``, with
``id`` the owner's watermark id (``0..2**32-1``) and ``DOMAIN`` the eight bytes ``b"exp-edit"``
read big-endian (:mod:`.kernel`). The authors seed a Mersenne Twister with one key
and draw ``xi`` row by row; the counter-based generator here gives the same uniform ``xi`` and
lets the reader compute only the columns of the tokens a text holds.

Writer (exponential minimum sampling). At generated position ``i`` (counted from the start
of generation) the token is ``argmax_v xi[i mod n, v] ** (1 / p_v)``, ``p`` the model's
next-token distribution: distortion-free, since over keys this picks ``v`` with probability
``p_v`` (:class:`EXPEditLogitsProcessor`, which leaves only that token).

Reader (the edit-distance statistic). For tokens ``y_1..y_k`` and key positions
``s .. s + k - 1`` (mod ``n``), the Levenshtein cost with substitution cost
``log(1 - xi_j[y_i])`` and ``gamma_edit`` per insertion or deletion; the statistic is its
minimum over the ``n`` cyclic shifts ``s`` and over the windows of ``block_size`` tokens of the
text (the whole text by default, as the authors' experiments and MarkLLM's ``EXPEdit`` do;
their ``gamma`` for this statistic is 0). Low cost means watermark. A text's sum is minus
this cost and its count the tokens it rests on (the text's, or ``block_size``), so its score
``-cost / count`` is higher with more watermark. At the null it is not 0: under a key that
owns nothing, ``-cost`` is the best monotone matching of the text's tokens to key positions
with Exp(1) gains ``-log(1 - u)``, best of ``n`` shifts, so each token adds more than its
mean gain of 1 (about 2 per token on the unwatermarked 64- and 200-token texts of
``benchmarks/results/exp_edit_speed.json``, whose ``statistic`` is minus the cost), varying
with the text's length and repeats. So read scores against the empirical null
(``null_keys=K``: random keys scored on the same texts); the analytic null and the token view,
which need per-token terms, refuse this scheme.

Tokens ``>= N`` (special or added tokens) are dropped before the alignment (a deletion, which
the statistic is built to absorb). A text with fewer tokens of the vocabulary than
``block_size`` (or none, reading whole texts) is not scored: it counts 0, a reported skip.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from waterdrum_hf.keys import check_watermark_ids
from waterdrum_hf.schemes.base import SequenceScheme
from waterdrum_hf.schemes.exp_edit.kernel import alignment_kernel, key_rows
from waterdrum_hf.schemes.exp_edit.processor import EXPEditLogitsProcessor
from waterdrum_hf.schemes.mt19937 import run_spread
from waterdrum_hf.utils.fields import flag
from waterdrum_hf.utils.validation import check_positive_int


@dataclass(frozen=True)
class EXPEditScheme(SequenceScheme):
    """EXP-edit's key sequences, exponential minimum sampling and edit-distance reader.

    Args:
        key_length: ``n``, the length of each owner's key sequence (the authors' 256).
        gamma_edit: the alignment's cost per inserted or deleted token, ``>= 0`` (the
            authors' 0.0 for EXP-edit; named apart from KGW's ``gamma``).
        block_size: tokens per window of the text the statistic is minimised over; ``None``
            (the authors' default) aligns each text whole.
        n_gram: must stay 2: EXP-edit reads no n-grams. vocab_size: as for every scheme.
    """

    key_length: int = flag(256, "EXP-edit's key sequence length per owner (default 256).")
    gamma_edit: float = flag(
        0.0, "EXP-edit's alignment cost per inserted or deleted token (default 0.0, the authors')."
    )
    block_size: int | None = flag(
        None, "EXP-edit's window of tokens the statistic is minimised over (default: whole text)."
    )
    name = "exp_edit"
    #: The writer leaves one token per row: write with ``do_sample=True`` (any sampler then
    #: takes it); a beam search would have no second token to keep.
    requires_sampling: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "key_length", check_positive_int(self.key_length, "key_length"))
        if isinstance(self.gamma_edit, bool) or not isinstance(self.gamma_edit, (int, float)):
            raise TypeError(f"`gamma_edit` must be a number, got {type(self.gamma_edit).__name__}.")
        if not (math.isfinite(self.gamma_edit) and self.gamma_edit >= 0):
            raise ValueError(f"`gamma_edit` must be a finite number >= 0, got {self.gamma_edit}.")
        object.__setattr__(self, "gamma_edit", float(self.gamma_edit))
        if self.block_size is not None:
            object.__setattr__(
                self, "block_size", check_positive_int(self.block_size, "block_size")
            )
        if self.n_gram != 2:
            raise ValueError(
                f"EXP-edit reads whole token sequences, not n-grams: `n_gram`={self.n_gram} "
                "does not apply to it (leave it at 2)."
            )
        super().__post_init__()

    def check_vocab_size(self, vocab_size: int) -> None:
        check_positive_int(vocab_size, "vocab_size", minimum=2)

    def min_tokens(self) -> str:
        return f"block_size={self.block_size} tokens" if self.block_size else "1 token"

    def key(
        self, watermark_id: int, vocab_size: int, rows: Sequence[int] | None = None
    ) -> np.ndarray:
        """``xi[rows]`` (all ``key_length`` rows by default) of the key of ``watermark_id``,
        ``(len(rows), vocab_size)`` float64. The writer's input; secret, like the id."""
        (key,) = check_watermark_ids([watermark_id], 1, "watermark_id")
        which = np.arange(self.key_length) if rows is None else np.asarray(rows, dtype=np.int64)
        out = np.empty((len(which), vocab_size))
        key_rows(np.uint64(key), which % self.key_length, vocab_size, out)
        return out

    def alignment_costs(
        self,
        token_ids: Sequence[Sequence[int] | np.ndarray],
        watermark_ids: np.ndarray,
        vocab_size: int,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The statistic itself, ``(num_texts, K)`` least costs (low: watermark; NaN: not
        scored), and the ``(num_texts,)`` tokens each rests on (0: too short), under the
        ``(num_texts, K)`` ``watermark_ids``."""
        watermark_ids = np.asarray(watermark_ids)
        if watermark_ids.ndim != 2 or len(watermark_ids) != len(token_ids):
            raise ValueError(
                f"`watermark_ids` must hold a row of keys per text, shape ({len(token_ids)}, K); "
                f"got shape {watermark_ids.shape}."
            )
        kept = [_in_vocabulary(ids, vocab_size) for ids in token_ids]
        lengths = np.array([len(ids) for ids in kept], dtype=np.int64)
        counts = np.where(lengths >= (self.block_size or 1), self.block_size or lengths, 0)
        costs = np.full(watermark_ids.shape, np.nan)
        scored = np.flatnonzero(counts > 0)
        if len(scored) == 0:
            return costs, counts
        num_keys = watermark_ids.shape[1]
        distinct, inverse = zip(
            *(np.unique(kept[i], return_inverse=True) for i in scored), strict=True
        )
        jobs = np.stack(
            [np.repeat(np.arange(len(scored)), num_keys), watermark_ids[scored].ravel()], 1
        ).astype(np.int64)
        out = np.empty(len(jobs))
        cells = self.key_length * int(np.mean(counts[scored])) ** 2
        run_spread(
            alignment_kernel, len(jobs), cells,
            np.concatenate(distinct), _bounds(distinct), np.concatenate(inverse).astype(np.int64),
            _bounds(inverse), jobs,
            np.array([self.key_length, vocab_size, self.block_size or 0], dtype=np.int64),
            self.gamma_edit, out,
        )  # fmt: skip
        costs[scored] = out.reshape(len(scored), num_keys)
        return costs, counts

    def text_sums(
        self,
        token_ids: Sequence[Sequence[int] | np.ndarray],
        watermark_ids: np.ndarray,
        vocab_size: int,
    ) -> tuple[np.ndarray, np.ndarray]:
        costs, counts = self.alignment_costs(token_ids, watermark_ids, vocab_size)
        return np.where(counts[:, None] > 0, -costs, 0.0), counts

    def logits_processor(
        self, vocab_size: int, watermark_ids: int | Sequence[int], **kwargs: Any
    ) -> EXPEditLogitsProcessor:
        """An :class:`EXPEditLogitsProcessor` for ``watermark_ids`` (one for all rows or one
        per input row); it takes no writer settings."""
        if kwargs:
            raise TypeError(f"EXP-edit's writer takes no settings, got {sorted(kwargs)}.")
        return EXPEditLogitsProcessor(self, vocab_size, watermark_ids)


def _bounds(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """Where each of ``arrays`` starts in their concatenation, and where the last ends."""
    return np.cumsum([0, *(len(a) for a in arrays)])


def _in_vocabulary(ids: Sequence[int] | np.ndarray, vocab_size: int) -> np.ndarray:
    """The ids of ``ids`` in ``0..vocab_size-1``, in order, as int64."""
    array = np.asarray(ids, dtype=np.int64)
    kept: np.ndarray = array[(array >= 0) & (array < vocab_size)]  # a mask reads any shape flat
    return kept
