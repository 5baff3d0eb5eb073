"""Waterfall watermark verification: the one scoring core every part of waterdrum-hf uses.

The score of a text under key ``id`` is the mean, over its counted tokens ``t_j`` (j >= n-1),
of the watermarking function at the token's permuted position
``pi_j = RandomState((id, t_{j-n+1}, ..., t_{j-1})).permutation(N)[t_j]``: ``cos(2 pi k pi_j / N)``
for ``k_p <= max_freq`` and ``sin(2 pi (k_p - max_freq) pi_j / N)`` beyond. This equals the
``k_p``-th coefficient that ``waterfall`` 0.3.4 reads off the FFT of the normalised N-bin
histogram, but needs neither the histogram nor the FFT.

Deliberate differences from ``waterfall`` (both documented in the README):

* a token whose id (or any of whose previous ``n-1`` ids) is ``>= N`` is skipped; waterfall
  stops counting the rest of the text at the first token ``>= N``;
* a text with no countable token scores ``NaN`` (waterfall returns 0, which reads as "no
  watermark" and hides the problem).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np

from waterdrum_hf.config import NullConfig
from waterdrum_hf.keys import check_watermark_ids, random_keys
from waterdrum_hf.schemes import WatermarkScheme, resolve_scheme
from waterdrum_hf.schemes.base import SequenceScheme
from waterdrum_hf.scoring.analytic_null import AnalyticNull
from waterdrum_hf.utils.progress import progress_bar
from waterdrum_hf.utils.validation import check_positive_int, check_texts

logger = logging.getLogger(__name__)

#: Token pairs handled per call of the permutation kernel; bounds peak memory.
SCORE_COLUMN = "watermark_score"
"""Default name of a per-text score column: what :func:`~waterdrum_hf.verify_dataset` adds,
and the self-check score that :class:`~waterdrum_hf.WatermarkedDataset` writes."""

DEFAULT_CHUNK_PAIRS = 1 << 20


TokenIds: TypeAlias = "Sequence[int] | np.ndarray"
"""One text's token ids (of the watermarking tokenizer): ints, or a 1-d integer array."""


def load_tokenizer(tokenizer: Any) -> Any:
    """Return ``tokenizer``, loading it with ``AutoTokenizer`` when given a name or path (a
    local path that does not exist fails at once). ``"tiny"``, the built-in model's, is
    resolved where a name comes in (the commands, the ``evaluate`` module, the lm-eval task,
    the callback: :func:`waterdrum_hf.tiny.pretrained_location`); here it is refused with
    that advice rather than looked up on the Hub."""
    if isinstance(tokenizer, str):
        from transformers import AutoTokenizer

        from waterdrum_hf.utils.files import check_local_location

        if tokenizer == "tiny":
            raise ValueError(
                "'tiny' names the built-in tokenizer in the commands, the evaluate module, the "
                "lm-eval task and the callback; in Python pass waterdrum_hf.tiny.load()[1]"
            )
        check_local_location(tokenizer, "tokenizer")
        return AutoTokenizer.from_pretrained(tokenizer)
    if not hasattr(tokenizer, "vocab_size") or not callable(tokenizer):
        raise TypeError(
            "`tokenizer` must be a transformers tokenizer (the watermarking model's) or a "
            f"name/path to load one with AutoTokenizer, got {type(tokenizer).__name__}."
        )
    return tokenizer


class Verifier:
    """Scores texts for Waterfall watermarks in the token space of the *watermarking* tokenizer.

    Args:
        tokenizer: the tokenizer of the model that watermarked the data (the paraphraser), or a
            name/path for ``AutoTokenizer``. It need not be the evaluated model's tokenizer.
        scheme: the watermark scheme with its settings (a
            :class:`~waterdrum_hf.schemes.WatermarkScheme`: Waterfall's ``k_p``, ``n_gram`` and
            ``vocab_size``, KGW's ``gamma``...), or its name. The vocabulary is the tokenizer's
            ``vocab_size`` (added tokens excluded, as Waterfall does); a scheme whose
            ``vocab_size`` differs is refused.
        k_p: shorthand with a scheme *name*: ``Verifier(tok, k_p=1)`` is
            ``Verifier(tok, WaterfallScheme(k_p=1))``.
        n_gram: shorthand with a scheme name, as ``k_p``.
        vocab_size: shorthand with a scheme name, as ``k_p``.
        chunk_pairs: token pairs scored per kernel call; bounds memory on huge inputs.
        show_progress: progress bar over chunks; ``None`` shows it for multi-chunk work on a TTY.
    """

    def __init__(
        self,
        tokenizer: Any,
        scheme: str | WatermarkScheme = "waterfall",
        *,
        k_p: int | None = None,
        n_gram: int | None = None,
        vocab_size: int | None = None,
        chunk_pairs: int = DEFAULT_CHUNK_PAIRS,
        show_progress: bool | None = None,
    ) -> None:
        self.tokenizer = load_tokenizer(tokenizer)
        self.scheme = resolve_scheme(scheme, k_p=k_p, n_gram=n_gram, vocab_size=vocab_size)
        self.vocab_size = int(self.tokenizer.vocab_size)
        if self.scheme.vocab_size is not None and self.scheme.vocab_size != self.vocab_size:
            raise ValueError(
                f"`vocab_size`={self.scheme.vocab_size} does not match the tokenizer's "
                f"vocab_size {self.vocab_size}: verify with the tokenizer that watermarked the "
                "data."
            )
        self.n_gram = self.scheme.n_gram
        self.scheme.check_vocab_size(self.vocab_size)
        self.chunk_pairs = check_positive_int(chunk_pairs, "chunk_pairs")
        self.show_progress = show_progress

    def __repr__(self) -> str:
        name = getattr(self.tokenizer, "name_or_path", type(self.tokenizer).__name__)
        return (
            f"Verifier(tokenizer={name!r}, vocab_size={self.vocab_size}, "
            + ", ".join(
                f"{key}={value}"
                for key, value in self.scheme.settings().items()
                if key != "vocab_size"
            )
            + ")"
        )

    def token_ids(self, texts: str | Sequence[str]) -> list[np.ndarray]:
        """Tokenise like Waterfall does (``add_special_tokens=False``)."""
        texts = check_texts(texts)
        encoded = self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        return [np.asarray(ids, dtype=np.int64) for ids in encoded]

    def verify(self, texts: str | Sequence[str], watermark_ids: int | Sequence[int]) -> np.ndarray:
        """Score each text under its owner's watermark id (one for all texts or one per text);
        returns float64 scores (NaN: nothing to count)."""
        return self.score_token_ids(self.token_ids(texts), watermark_ids)

    def score_token_ids(
        self, token_ids: Sequence[TokenIds], watermark_ids: int | Sequence[int] | np.ndarray
    ) -> np.ndarray:
        """Like :meth:`verify` for already tokenised text (ids of the watermarking tokenizer)."""
        checked = check_watermark_ids(watermark_ids, len(token_ids), "watermark_ids")
        sums, counts = self.token_sums(token_ids, checked[:, None])
        scores = scores_from_sums(sums, counts)[:, 0]
        self._report_unscored(scores)
        return scores

    def null_reference(
        self,
        texts: str | Sequence[str],
        num_keys: int = 100,
        *,
        exclude_ids: Sequence[int] = (),
        seed: int = 0,
    ) -> NullReference:
        """Score every text under ``num_keys`` pseudo-random keys that are none of ``exclude_ids``.

        What such keys score is what the owner's score must be read against: unwatermarked text
        does not average 0 for a given key (frequent token pairs are shared across texts).
        """
        return self.null_reference_of_token_ids(
            self.token_ids(texts), num_keys, exclude_ids=exclude_ids, seed=seed
        )

    def null_reference_of_token_ids(
        self,
        token_ids: Sequence[TokenIds],
        num_keys: int = 100,
        *,
        exclude_ids: Sequence[int] = (),
        seed: int = 0,
    ) -> NullReference:
        """Like :meth:`null_reference` for already tokenised text (what :meth:`null_evidence`
        reads for the empirical null)."""
        check_positive_int(num_keys, "num_keys")
        keys = random_keys(num_keys, exclude=exclude_ids, seed=seed)
        sums, counts = self.shared_key_sums(token_ids, keys)
        return NullReference(keys=keys, sums=sums, counts=counts)

    def null_evidence(
        self,
        null: NullConfig,
        token_ids: Sequence[TokenIds],
        *,
        exclude_ids: Sequence[int] = (),
    ) -> NullReference | AnalyticNull:
        """What keys that own nothing read on ``token_ids``, as ``null`` asks: the token sums
        under ``null.keys`` random keys that are none of ``exclude_ids`` (empirical), or the
        token-pair counts that give the exact null moments (analytic; a scheme without them is
        refused here)."""
        if null.method == "empirical":
            keys = random_keys(null.keys, exclude=exclude_ids, seed=null.seed)
            return NullReference(keys, *self.shared_key_sums(token_ids, keys))
        moments = self.scheme.null_moments(self.vocab_size)
        return AnalyticNull(*self.countable_pairs(token_ids), len(token_ids), moments)

    def shared_key_sums(
        self, token_ids: Sequence[TokenIds], keys: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`token_sums` with every text under ``keys[k]`` in column ``k`` (a null
        reference), bit for bit, with less work per key: the pairs are grouped once for all
        keys, so what remains per key is the permutations themselves.

        Per chunk of texts, the pairs are extracted, counted and grouped into distinct
        (context, token) pairs once for all keys; each distinct pair is scored once per key,
        with many keys in one call of the scheme (one grouping, one parallel kernel run); each
        text's occurrences then sum their pair's term in text order, as :meth:`token_sums`
        does, so the sums are the same floats.
        """
        keys = np.asarray(keys, dtype=np.int64).reshape(-1)
        num_texts, num_keys = len(token_ids), len(keys)
        if isinstance(self.scheme, SequenceScheme):
            return self._sequence_sums(
                token_ids, np.broadcast_to(keys, (num_texts, num_keys)), "Null keys"
            )
        sums = np.zeros((num_texts, num_keys))
        counts = np.zeros(num_texts, dtype=np.int64)
        for start, stop in progress_bar(
            self._chunks(token_ids),
            desc="Null keys",
            unit="chunk",
            enabled=self._progress_enabled(num_keys),
        ):
            contexts, tokens, owner = self.countable_pairs(token_ids[start:stop])
            counts[start:stop] = np.bincount(owner, minlength=stop - start)
            if len(tokens) == 0:
                continue
            distinct, which = np.unique(
                np.concatenate([contexts, tokens[:, None]], axis=1), axis=0, return_inverse=True
            )
            which = which.reshape(-1)
            per_call = max(1, self.chunk_pairs // len(distinct))
            for first in range(0, num_keys, per_call):
                batch = keys[first : first + per_call]
                terms = self.scheme.token_terms(
                    np.repeat(batch, len(distinct)),
                    np.tile(distinct[:, :-1], (len(batch), 1)),
                    np.tile(distinct[:, -1], len(batch)),
                    self.vocab_size,
                ).reshape(len(batch), len(distinct))
                for j, key_terms in enumerate(terms):
                    sums[start:stop, first + j] = np.bincount(
                        owner, weights=key_terms[which], minlength=stop - start
                    )
        return sums, counts

    def token_sums(
        self, token_ids: Sequence[TokenIds], watermark_ids: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Sum of the scheme's token terms over each text's countable tokens, per watermark id.

        ``watermark_ids`` is ``(num_texts, K)``: column ``k`` scores text ``i`` under
        ``watermark_ids[i, k]``.
        Returns ``sums`` ``(num_texts, K)`` and the countable-token ``counts`` ``(num_texts,)``;
        ``sums / counts`` is the score. Sums pool several texts token-weighted (the paper's
        per-query value over its samples).

        Texts are visited sorted by their first key and each chunk is scored one key column at
        a time, so every distinct (key, context) is expanded once per chunk and, for per-text
        keys, a key's texts share chunks.
        """
        num_texts, num_keys = watermark_ids.shape
        if isinstance(self.scheme, SequenceScheme):
            return self._sequence_sums(token_ids, watermark_ids, "Verifying")
        order = np.argsort(watermark_ids[:, 0], kind="stable")
        token_ids = [token_ids[i] for i in order]
        watermark_ids = watermark_ids[order]
        sums = np.zeros((num_texts, num_keys))
        counts = np.zeros(num_texts, dtype=np.int64)
        chunks = self._chunks(token_ids)
        steps = [(chunk, k) for chunk in chunks for k in range(num_keys)]
        pairs: tuple[np.ndarray, np.ndarray, np.ndarray]  # set at k == 0, each chunk's first step
        for (start, stop), k in progress_bar(
            steps, desc="Verifying", unit="step", enabled=self._progress_enabled(len(steps))
        ):
            if k == 0:
                pairs = self.countable_pairs(token_ids[start:stop])
                counts[start:stop] = np.bincount(pairs[2], minlength=stop - start)
            contexts, tokens, owner = pairs
            if len(tokens) == 0:
                continue
            values = self.scheme.token_terms(
                watermark_ids[start:stop, k][owner], contexts, tokens, self.vocab_size
            )
            sums[start:stop, k] = np.bincount(owner, weights=values, minlength=stop - start)
        restore = np.argsort(order, kind="stable")
        return sums[restore], counts[restore]

    def _sequence_sums(
        self, token_ids: Sequence[TokenIds], watermark_ids: np.ndarray, desc: str
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`token_sums` of a :class:`~waterdrum_hf.schemes.base.SequenceScheme`: its
        ``text_sums`` chunk by chunk of texts (one progress step each)."""
        assert isinstance(self.scheme, SequenceScheme)
        num_texts, num_keys = watermark_ids.shape
        sums = np.zeros((num_texts, num_keys))
        counts = np.zeros(num_texts, dtype=np.int64)
        chunks = self._chunks(token_ids)
        for start, stop in progress_bar(
            chunks, desc=desc, unit="chunk", enabled=self._progress_enabled(len(chunks))
        ):
            sums[start:stop], counts[start:stop] = self.scheme.text_sums(
                token_ids[start:stop], watermark_ids[start:stop], self.vocab_size
            )
        return sums, counts

    def countable_pairs(
        self, token_ids: Sequence[TokenIds]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """All (previous n-1 tokens, token, text index) with every id below N, in text order:
        ``(M, n-1)`` contexts, ``(M,)`` tokens and ``(M,)`` non-decreasing text indices."""
        window = self.n_gram - 1
        arrays = [np.asarray(ids, dtype=np.int64).reshape(-1) for ids in token_ids]
        lengths = np.array([len(a) for a in arrays], dtype=np.int64)
        flat = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
        text_of = np.repeat(np.arange(len(arrays)), lengths)
        offset_in_text = np.arange(len(flat)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        in_vocab = (flat >= 0) & (flat < self.vocab_size)
        positions = np.flatnonzero((offset_in_text >= window) & in_vocab)
        contexts = np.stack([flat[positions - back] for back in range(window, 0, -1)], axis=1)
        keep = (contexts < self.vocab_size).all(axis=1) & (contexts >= 0).all(axis=1)
        positions = positions[keep]
        return contexts[keep], flat[positions], text_of[positions]

    def _chunks(self, token_ids: Sequence[TokenIds]) -> list[tuple[int, int]]:
        """Split texts into runs whose tokens stay under ``chunk_pairs``."""
        bounds, start, pairs = [], 0, 0
        for i, ids in enumerate(token_ids):
            pairs += len(ids)
            if pairs > self.chunk_pairs and i > start:
                bounds.append((start, i))
                start, pairs = i, len(ids)
        bounds.append((start, len(token_ids)))
        return bounds

    def _progress_enabled(self, num_steps: int) -> bool | None:
        if self.show_progress is not None:
            return self.show_progress
        return None if num_steps > 1 else False

    def _report_unscored(self, scores: np.ndarray) -> None:
        missing = int(np.isnan(scores).sum())
        if missing:
            logger.warning(
                "%d of %d texts have no countable token (fewer than %s of the watermarking "
                "vocabulary); they score NaN.",
                missing,
                len(scores),
                self.scheme.min_tokens(),
            )


@dataclass(frozen=True, eq=False)
class NullReference:
    """Texts under keys that are not their owners': what "no watermark" looks like.

    Attributes:
        keys: the ``num_keys`` random keys (owned by nobody, so not secret).
        sums: ``(num_texts, num_keys)`` sums of the watermark function over each text's
            countable tokens under each key (pool them token-weighted, as the metric does).
        counts: ``(num_texts,)`` countable tokens of each text.
    """

    keys: np.ndarray
    sums: np.ndarray
    counts: np.ndarray

    @property
    def scores(self) -> np.ndarray:
        """``(num_texts, num_keys)`` scores (NaN where a text has nothing to count)."""
        return scores_from_sums(self.sums, self.counts)

    @property
    def key_means(self) -> np.ndarray:
        """For each null key, the mean score of the whole set of texts."""
        return _nan_reduce(np.nanmean, self.scores, axis=0)

    @property
    def mean(self) -> float:
        """Mean null score of the set (compare with the owner's mean score of the same texts)."""
        return float(_nan_reduce(np.nanmean, self.key_means))

    @property
    def std(self) -> float:
        """Spread of the set mean across null keys: the noise level of a set-level value."""
        return float(_nan_reduce(np.nanstd, self.key_means))


def _nan_reduce(fn: Callable[..., np.ndarray], values: np.ndarray, **kwargs: Any) -> np.ndarray:
    """``fn`` (a nan-aware reduction) without numpy's all-NaN-slice warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(values, **kwargs)


def scores_from_sums(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Scores from :meth:`Verifier.token_sums`: ``sums / counts`` per text and key; NaN where a
    text has nothing to count."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts[:, None] > 0, sums / counts[:, None], np.nan)


def verify_texts(
    texts: str | Sequence[str],
    watermark_ids: int | Sequence[int],
    tokenizer: Any,
    *,
    k_p: int | None = None,
    n_gram: int | None = None,
    scheme: str | WatermarkScheme = "waterfall",
) -> np.ndarray:
    """Score texts for Waterfall watermarks; one float64 per text.

    Equal to ``waterfall`` 0.3.4 ``Watermarker(tokenizer=...).verify(texts, id=[id],
    k_p=[k_p])[:, 0, 0]`` (to 1e-6) on texts without special tokens.

    Args:
        texts: generated (or watermarked) text.
        watermark_ids: the owner's watermark id, one for all texts or one per text
            (0..2**32-1).
        tokenizer: the watermarking model's tokenizer, or a name/path for ``AutoTokenizer``.
        k_p: the watermarking function used when watermarking (Waterfall's; default 1).
        n_gram: the watermark's n-gram (default 2, the paper's).
        scheme: ``"waterfall"`` (the default), ``"kgw"``, ``"synthid"`` or a scheme object (which carries
            ``k_p`` and ``n_gram`` itself).
    """
    verifier = Verifier(tokenizer, scheme, k_p=k_p, n_gram=n_gram)
    return verifier.verify(texts, watermark_ids)


def null_reference(
    texts: str | Sequence[str],
    tokenizer: Any,
    *,
    num_keys: int = 100,
    exclude_ids: Sequence[int] = (),
    k_p: int | None = None,
    n_gram: int | None = None,
    seed: int = 0,
    scheme: str | WatermarkScheme = "waterfall",
) -> NullReference:
    """Score texts under ``num_keys`` random keys (none in ``exclude_ids``) as a null reference."""
    verifier = Verifier(tokenizer, scheme, k_p=k_p, n_gram=n_gram)
    return verifier.null_reference(texts, num_keys, exclude_ids=exclude_ids, seed=seed)
