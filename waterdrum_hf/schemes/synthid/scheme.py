"""Synth-ID Text (Dathathri et al., 2024) adapted for many data owners: each owner's watermark
id derives its own tournament keys.

Construction (transformers' ``SynthIDTextWatermarkLogitsProcessor``, re-implemented in numpy
for the reader). A token ``t`` after the ``n - 1`` previous tokens ``c`` is hashed with the
linear congruential step ``h -> (h + x) * M + 1 (mod 2**64)``, ``M = 6364136223846793005``,
from ``h = 1`` over ``(*c, t)``; layer ``l`` of the tournament mixes its key ``k_l`` in the
same way, ``h_l = (h + k_l) * M + 1``, and the token's g-value at that layer is
``table[h_l mod S]``, where ``table`` is ``S = sampling_table_size`` bits drawn by
``torch.randint(0, 2, (S,))`` after ``torch.manual_seed(sampling_table_seed)`` (the same bits
are the low bits of numpy's legacy ``RandomState(seed)`` 32-bit words, so the reader needs no
torch).

Keys. Owner ``id`` (``0..2**32-1``, as for every scheme: :mod:`waterdrum_hf.keys`) has the
``depth`` keys ``k_l = splitmix64((id << 32) | l) & (2**63 - 1)`` for ``l = 0..depth-1``:
``splitmix64`` is Vigna's finaliser ``z += 0x9E3779B97F4A7C15; z = (z ^ z >> 30) *
0xBF58476D1CE4E5B9; z = (z ^ z >> 27) * 0x94D049BB133111EB; z ^ z >> 31`` (mod 2**64), a
bijection, so no two (owner, layer) share a key before the top bit is cleared
(:func:`synthid_keys`). Keys are secrets like ids: never print them.

Score. A token's term is the mean of its ``depth`` g-values under the owner's keys, and a
text's score is the mean of its counted tokens' terms: Synth-ID's unweighted mean score. Under
a key that owns nothing a g-value is a fair bit, so the null level is 0.5 (exactly: the
table's share of ones, 0.4996 for the default table), not 0 as for Waterfall and KGW. WaterDrum
adapts this raw score as it is, and its calibration (the R² of a line through the origin of
the forget value against the forget share) therefore fails: a score that reads 0.5 on text
that carries nothing is far from any line through the origin. This is the paper's finding
(Table 5: R² -16.951); subtract the null level (the metric's ``null``) to read an excess.

The null (:meth:`SynthIDScheme.null_moments`, exact for a power-of-two table, the default).
With ``S = 2**b`` the table index ``((h + k_l) * M + 1) mod S`` depends on ``u = (h + k_l) mod
S`` only, through a bijection (``M`` is odd), so under a random key (a uniform residue
``kappa = k_l mod S`` per layer, independent across layers) a weighted sum over distinct pairs
reads, at layer ``l``, ``V(kappa) = sum_r A(r) G(r + kappa)``: ``A(r)`` is the weight of the
pairs whose hash is ``r mod S`` and ``G(u) = table[(u M + 1) mod S]``, a circular
cross-correlation. Its mean over the ``S`` residues is ``p * sum W`` (``p`` the table's share
of ones) and its variance is ``S**-2 sum_{f != 0} |A^(f)|**2 |G^(f)|**2`` (Parseval); the
score averages ``depth`` independent layers, so the variance is divided by ``depth``. So pairs
are not independent Bernoulli(1/2) bits: two pairs whose hashes agree mod ``S`` read the same
g-value, and any two covary by the table's circular autocorrelation at the distance of their
hashes (about ``+-S**-0.5`` of the variance), whether or not they share a context; the
analytic null counts both exactly (:class:`SynthIDNull`).

Where this differs from Synth-ID's own detector: repeated n-grams are counted every time (as
for every scheme here), where Synth-ID masks repeated contexts; no weighted or Bayesian score.

The writer (:class:`~waterdrum_hf.schemes.synthid.processor.SynthIDLogitsProcessor`) is transformers' processor, one per owner:
tournament sampling needs ``do_sample=True`` (beam search would keep the reweighted
distribution's top beams, not tournament samples), so watermarking refuses Synth-ID with beam
search (:class:`waterdrum_hf.WatermarkingConfig`).
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from waterdrum_hf.keys import check_watermark_ids
from waterdrum_hf.schemes.base import WatermarkScheme
from waterdrum_hf.utils.fields import flag

HASH_MULTIPLIER = 6364136223846793005
"""The multiplier of transformers' ``accumulate_hash`` (Knuth's MMIX LCG, increment 1)."""

MAX_SAMPLING_TABLE_SIZE = 2**24
"""transformers refuses larger sampling tables."""

_GOLDEN = 0x9E3779B97F4A7C15
_MIX_1 = 0xBF58476D1CE4E5B9
_MIX_2 = 0x94D049BB133111EB


def synthid_keys(watermark_ids: int | Sequence[int] | np.ndarray, depth: int) -> np.ndarray:
    """``(len(ids), depth)`` int64 tournament keys of each owner (the module docstring's
    derivation); ids are checked to be in ``0..2**32-1``."""
    ids = np.atleast_1d(np.asarray(watermark_ids)).reshape(-1)
    checked = check_watermark_ids(ids.tolist(), len(ids), "watermark_ids").astype(np.uint64)
    z = (checked[:, None] << np.uint64(32)) | np.arange(depth, dtype=np.uint64)[None, :]
    z = z + np.uint64(_GOLDEN)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_MIX_1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_MIX_2)
    z = z ^ (z >> np.uint64(31))
    keys: np.ndarray = (z & np.uint64(2**63 - 1)).astype(np.int64)
    return keys


@functools.lru_cache(maxsize=4)
def sampling_table(size: int, seed: int) -> np.ndarray:
    """The ``(size,)`` int8 bits of ``torch.randint(0, 2, (size,))`` after
    ``torch.manual_seed(seed)``: the low bits of MT19937's 32-bit words from ``seed``."""
    words = np.random.RandomState(seed).randint(0, 2**32, size=size, dtype=np.uint64)
    table: np.ndarray = (words & np.uint64(1)).astype(np.int8)
    table.flags.writeable = False
    return table


@functools.lru_cache(maxsize=4)
def _table_power(size: int, seed: int) -> np.ndarray:
    """``|G^(f)|**2`` of the table read in the order of the key residue (``S`` a power of 2)."""
    residues = np.arange(size, dtype=np.int64)
    read = sampling_table(size, seed)[(residues * HASH_MULTIPLIER + 1) & (size - 1)]
    power: np.ndarray = np.abs(np.fft.fft(read.astype(np.float64))) ** 2
    return power


def ngram_hashes(contexts: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """transformers' hash of each n-gram ``(*contexts[i], tokens[i])`` (int64, wrapping)."""
    contexts = np.asarray(contexts, dtype=np.int64)
    hashes = np.ones(len(tokens), dtype=np.int64)
    for column in (*contexts.T, np.asarray(tokens, dtype=np.int64)):
        hashes = (hashes + column) * HASH_MULTIPLIER + 1
    return hashes


@dataclass(frozen=True)
class SynthIDScheme(WatermarkScheme):
    """Synth-ID's tournament g-values under keys derived from each owner's id.

    Defaults are Synth-ID's reference configuration (transformers'
    ``SynthIDTextWatermarkingConfig`` and Google's ``synthid-text``): 30 layers, n-grams of
    5 tokens, a table of 2**16 bits from seed 0. The writer's ``context_history_size`` (1024)
    is a setting of :meth:`logits_processor`.

    Args:
        depth: tournament layers (keys per owner).
        sampling_table_size: bits of the table that maps hashes to g-values (2 to 2**24).
        sampling_table_seed: seed of that table (0..2**32-1).
        n_gram: as for every :class:`~waterdrum_hf.schemes.WatermarkScheme` (Synth-ID's
            ``ngram_len``).
        vocab_size: as for every :class:`~waterdrum_hf.schemes.WatermarkScheme`.
    """

    depth: int = flag(30, "Synth-ID's tournament layers, keys per owner (default 30).")
    sampling_table_size: int = flag(
        2**16, "Synth-ID's g-value table size (default 65536, at most 2**24)."
    )
    sampling_table_seed: int = flag(0, "Synth-ID's g-value table seed (default 0).")
    n_gram: int = field(default=5, kw_only=True)
    name = "synthid"
    requires_sampling: ClassVar[bool] = True

    def __post_init__(self) -> None:
        limits = {
            "depth": (1, 1024),
            "sampling_table_size": (2, MAX_SAMPLING_TABLE_SIZE),
            "sampling_table_seed": (0, 2**32 - 1),
        }
        for setting, (low, high) in limits.items():
            value = getattr(self, setting)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"`{setting}` must be an integer, got {type(value).__name__}.")
            if not low <= int(value) <= high:
                raise ValueError(f"`{setting}` must be in {low}..{high}, got {value}.")
            object.__setattr__(self, setting, int(value))
        super().__post_init__()

    def check_vocab_size(self, vocab_size: int) -> None:
        """Any vocabulary works: g-values hash token ids, whatever their range."""

    def null_moments(self, vocab_size: int) -> SynthIDNull:
        """The exact null of weighted sums of g-value means (:class:`SynthIDNull`); a table
        whose size is not a power of two has none (the key's residue is then not all that
        decides the index)."""
        size = self.sampling_table_size
        if size & (size - 1):
            raise TypeError(
                f"Synth-ID's analytic null needs a power-of-two sampling_table_size (the default "
                f"65536), got {size}: use the empirical null (null_keys=K) instead."
            )
        return SynthIDNull(self, int(vocab_size))

    def keys(self, watermark_ids: int | Sequence[int] | np.ndarray) -> np.ndarray:
        """The owners' ``(len(ids), depth)`` tournament keys (secret: never print them)."""
        return synthid_keys(watermark_ids, self.depth)

    def table(self) -> np.ndarray:
        """The g-value table (public: it depends on the seed only)."""
        return sampling_table(self.sampling_table_size, self.sampling_table_seed)

    def g_values(
        self, watermark_ids: np.ndarray, contexts: np.ndarray, tokens: np.ndarray
    ) -> np.ndarray:
        """``(M, depth)`` g-values (int8, 0 or 1) of each token after its context under its id,
        as transformers' ``compute_g_values`` gives them."""
        hashes = ngram_hashes(contexts, tokens)
        return np.stack(list(self._each_layer(watermark_ids, hashes)), axis=1)

    def token_terms(
        self, watermark_ids: np.ndarray, contexts: np.ndarray, tokens: np.ndarray, vocab_size: int
    ) -> np.ndarray:
        total = np.zeros(len(tokens))
        hashes = ngram_hashes(contexts, tokens)
        for layer in self._each_layer(watermark_ids, hashes):
            total += layer
        return total / self.depth

    def _each_layer(self, watermark_ids: np.ndarray, hashes: np.ndarray) -> Iterator[np.ndarray]:
        """The g-values of every layer in turn (``(M,)`` int8 each): one layer in memory."""
        distinct, which = np.unique(np.asarray(watermark_ids, np.int64), return_inverse=True)
        keys = self.keys(distinct)[which.reshape(-1)]
        table, size = self.table(), self.sampling_table_size
        for layer in range(self.depth):
            mixed = (hashes + keys[:, layer]) * HASH_MULTIPLIER + 1
            yield table[mixed & (size - 1) if size & (size - 1) == 0 else np.mod(mixed, size)]

    def logits_processor(
        self,
        vocab_size: int,
        watermark_ids: int | Sequence[int],
        *,
        context_history_size: int = 1024,
        **kwargs: Any,
    ) -> Any:
        """A :class:`SynthIDLogitsProcessor`: transformers' Synth-ID processor under each row's
        owner's keys (sample with it: ``do_sample=True``)."""
        from waterdrum_hf.schemes.synthid.processor import SynthIDLogitsProcessor

        return SynthIDLogitsProcessor(
            self, vocab_size, watermark_ids, context_history_size=context_history_size, **kwargs
        )


@dataclass(frozen=True)
class SynthIDNull:
    """Synth-ID's exact null moments (:class:`~waterdrum_hf.schemes.null_moments.PairNull`;
    the module docstring derives them): a circular cross-correlation of the pairs' weights by
    hash residue with the table, per layer, averaged over ``depth`` independent layers."""

    scheme: SynthIDScheme
    vocab_size: int

    @property
    def mean(self) -> float:
        """The table's share of ones: a g-value's mean under a random key (about 0.5)."""
        return float(self.scheme.table().mean())

    def sum_variance(
        self, pair_weights: np.ndarray, contexts: np.ndarray, tokens: np.ndarray
    ) -> float:
        size = self.scheme.sampling_table_size
        residues = ngram_hashes(contexts, tokens) & (size - 1)
        weights = np.bincount(residues, weights=pair_weights, minlength=size)
        power = np.abs(np.fft.fft(weights)) ** 2 * _table_power(
            size, self.scheme.sampling_table_seed
        )
        return float(power[1:].sum()) / size**2 / self.scheme.depth
