"""What a text watermark must provide for WaterDrum: the seam between the writer and the reader.

WaterDrum is defined for any watermark that (1) perturbs generation under an owner's key and
(2) scores text under a key as the mean of per-token terms. A scheme implements exactly those
two directions, with its settings validated in one place:

* writer: :meth:`WatermarkScheme.logits_processor` adds the key-dependent perturbation to the
  logits while a paraphraser (or any model) generates;
* reader: :meth:`WatermarkScheme.token_terms` gives each (key, previous tokens, token) its
  score term; a text's score is the mean of its countable tokens' terms, and a query's value
  pools its samples' terms (:mod:`waterdrum_hf.scoring.verification`, :mod:`waterdrum_hf.scoring`).

Schemes built on the exact permutation kernel (:class:`PermutationScheme`) need only say what
a permuted position is worth: to the reader (:meth:`PermutationScheme.position_terms`) and to
the writer (:meth:`PermutationScheme.position_bias`). Waterfall
(:class:`waterdrum_hf.schemes.WaterfallScheme`) is the first implementation.

A scheme whose reader is not a mean of per-token terms (EXP-edit's edit-distance alignment)
is a :class:`SequenceScheme`: it scores whole token sequences as a sum and a count
(:meth:`SequenceScheme.text_sums`), so that a text's score is still ``sum / count`` and a
query still pools its samples token-weighted; what needs per-token terms (the analytic null,
the token view) refuses it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

from waterdrum_hf.schemes.null_moments import PairNull, PositionMoments
from waterdrum_hf.schemes.permutation import permuted_positions
from waterdrum_hf.utils.validation import check_positive_int


@dataclass(frozen=True, kw_only=True)
class WatermarkScheme(ABC):
    """A watermark scheme: per-token perturbation while writing, per-token terms while reading.

    Implementations are immutable value objects (frozen dataclasses): equal settings compare
    and hash equal, and :meth:`settings` feeds cache fingerprints and reports. They hold no key.
    Every scheme reads a token in the context of the ``n_gram - 1`` tokens before it, in a
    vocabulary of ``vocab_size`` tokens; the scheme's own settings (Waterfall's ``k_p``, KGW's
    ``gamma``) come first in its constructor.

    Args:
        n_gram: context length plus one (2, the paper's: one previous token).
        vocab_size: the watermark's vocabulary size N, if known (128000 for the published
            datasets); ``None`` takes the watermarking tokenizer's, and a tokenizer with
            another ``vocab_size`` is refused instead of scoring ~0.
    """

    #: Short name used in configs, fingerprints and on the command line.
    name: ClassVar[str]
    #: Whether the writer must sample (``do_sample=True``): Synth-ID's tournament does.
    requires_sampling: ClassVar[bool] = False

    n_gram: int = 2
    vocab_size: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_gram", check_positive_int(self.n_gram, "n_gram", minimum=2))
        if self.vocab_size is not None:
            vocab_size = check_positive_int(self.vocab_size, "vocab_size", minimum=2)
            object.__setattr__(self, "vocab_size", vocab_size)
            self.check_vocab_size(vocab_size)

    @abstractmethod
    def check_vocab_size(self, vocab_size: int) -> None:
        """Raise a ValueError naming the setting when the scheme cannot run on ``vocab_size``."""

    @abstractmethod
    def token_terms(
        self, watermark_ids: np.ndarray, contexts: np.ndarray, tokens: np.ndarray, vocab_size: int
    ) -> np.ndarray:
        """Score term (float64) of each token ``tokens[i]`` after ``contexts[i]`` under
        ``watermark_ids[i]``.

        ``watermark_ids`` is ``(M,)``; ``contexts`` ``(M, n_gram - 1)`` and ``tokens`` ``(M,)``
        hold ids of the watermarking vocabulary, all below ``vocab_size``.
        """

    @abstractmethod
    def logits_processor(
        self,
        vocab_size: int,
        watermark_ids: int | Sequence[int],
        **kwargs: Any,
    ) -> Any:
        """A ``transformers`` logits processor that watermarks generation under ``watermark_ids``
        (one for all rows or one per input row), in contexts of the scheme's ``n_gram``."""

    def null_moments(self, vocab_size: int) -> PairNull:
        """The exact null moments of weighted sums of this scheme's terms under a key that owns
        nothing (:mod:`waterdrum_hf.schemes.null_moments`), for the analytic null. A scheme
        that cannot state them keeps this refusal."""
        raise TypeError(
            f"The analytic null needs a scheme's exact null moments, and the {self.name!r} "
            "scheme does not state them: use the empirical null (null_keys=K) instead."
        )

    def min_tokens(self) -> str:
        """The fewest tokens of the watermarking vocabulary a text needs to be scored, as
        messages about unscored texts say it (e.g. ``"n_gram=2 tokens"``)."""
        return f"n_gram={self.n_gram} tokens"

    def settings(self) -> dict[str, Any]:
        """What decides the watermark, as JSON scalars (for fingerprints, reports and
        :func:`~waterdrum_hf.schemes.scheme_from_settings`); never a key."""
        common = [f.name for f in fields(WatermarkScheme)]
        own = [f.name for f in fields(self) if f.name not in common]
        return {"scheme": self.name, **{name: getattr(self, name) for name in own + common}}


@dataclass(frozen=True, kw_only=True)
class PermutationScheme(WatermarkScheme):
    """A scheme whose token ``t`` after context ``c`` under key ``id`` is read at its position
    ``RandomState((id, *c)).permutation(N)[t]``, and written by adding a bias at that position.
    """

    @abstractmethod
    def position_terms(self, positions: np.ndarray, vocab_size: int) -> np.ndarray:
        """The reader's score term (float64) of each permuted position in ``0..N-1``."""

    @abstractmethod
    def position_bias(self, vocab_size: int, *args: Any, **writer_settings: Any) -> np.ndarray:
        """The writer's ``(N,)`` logit bias at each permuted position. Each scheme names its
        own writer settings (keywords); this signature leaves them to it."""

    def logits_processor(
        self,
        vocab_size: int,
        watermark_ids: int | Sequence[int],
        **kwargs: Any,
    ) -> Any:
        """A :class:`~waterdrum_hf.schemes.permutation_processor.PermutationLogitsProcessor` adding
        :meth:`position_bias` (``kwargs`` other than ``cache_size`` are writer settings)."""
        from waterdrum_hf.schemes.permutation_processor import PermutationLogitsProcessor

        cache_size = kwargs.pop("cache_size", None)
        bias = self.position_bias(vocab_size, **kwargs)
        return PermutationLogitsProcessor(
            vocab_size, watermark_ids, bias, self.n_gram, cache_size=cache_size
        )

    def null_moments(self, vocab_size: int) -> PositionMoments:
        """The term at a uniformly random position: mean and variance over the ``N`` positions,
        tokens after one context drawn without replacement (:class:`PositionMoments`)."""
        return PositionMoments.of(self, vocab_size)

    def token_terms(
        self, watermark_ids: np.ndarray, contexts: np.ndarray, tokens: np.ndarray, vocab_size: int
    ) -> np.ndarray:
        ids = np.asarray(watermark_ids, dtype=np.int64)
        seeds = np.concatenate([ids[:, None], contexts], axis=1)
        return self.position_terms(permuted_positions(seeds, tokens, vocab_size), vocab_size)


@dataclass(frozen=True, kw_only=True)
class SequenceScheme(WatermarkScheme):
    """A scheme whose reader scores a whole token sequence at once, not token by token.

    A text's score is ``sum / count`` of :meth:`text_sums`, as for per-token schemes, so
    token-weighted pooling of a query's samples works unchanged; a text the reader cannot
    score has count 0 (a counted, reported skip, NaN score). There are no per-token terms:
    :meth:`token_terms` refuses, and with it the analytic null and the token view.
    """

    @abstractmethod
    def text_sums(
        self,
        token_ids: Sequence[Sequence[int] | np.ndarray],
        watermark_ids: np.ndarray,
        vocab_size: int,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``sums`` ``(num_texts, K)`` of each text under ``watermark_ids[i, k]`` and the
        ``counts`` ``(num_texts,)`` of tokens each sum rests on (0: not scored).

        ``token_ids`` are the texts' ids of the watermarking tokenizer (ids ``>= vocab_size``
        included: the scheme says what it does with them).
        """

    def token_terms(
        self, watermark_ids: np.ndarray, contexts: np.ndarray, tokens: np.ndarray, vocab_size: int
    ) -> np.ndarray:
        raise TypeError(
            f"The {self.name!r} scheme scores whole texts (text_sums), not tokens one by one: "
            "it has no per-token terms."
        )
