"""ITS, inverse transform sampling (Kuditipudi, Thickstun, Hashimoto and Liang, "Robust
Distortion-free Watermarks for Language Models", TMLR 2024; arXiv:2307.15593), as a model
owner's watermark: a writer and its one-key test.

Key. The model owner's key (a watermark id, ``0..2**32-1``) seeds
``numpy.random.default_rng((id, DOMAIN))``, which draws a permutation ``pi`` of the vocabulary
and then ``n = key_length`` uniforms ``u`` (the authors' 256). The authors seed a Mersenne
Twister with the key and draw the same two things; the generators differ, so keys are not
interchangeable with theirs.

Writer. Each generated sequence starts at a random shift ``s`` of the key sequence (drawn per
row from torch's generator at the first step, as the authors' ``generate_shift`` does, so the
samples of one prompt differ). At generated position ``i`` the token is the first token in
``pi``'s order whose cumulative probability reaches ``u[(s + i) mod n]``: inverse transform
sampling over the permuted vocabulary. Over keys ``u`` is uniform, so the token is drawn with
the model's probabilities (distortion-free).

Test. The authors' ITS statistic: the covariance of ``u`` with the normalised rank
``eta = rank_pi(y) / (N - 1)`` of each token, here times 12 so that it is the correlation
(both are uniform on [0, 1]), at the best of the ``n`` shifts. Written text reads near 1 on
confident-free (high-entropy) steps; other text near the null, the maximum over ``n`` shifts of
a mean-zero correlation of ``k`` pairs (about ``sqrt(2 ln n / k)``). Read it against the same
statistic under other keys.

Why not a data owner's scheme: the writer leaves one token per step and the test reads one
sequence against one key sequence; in WaterDrum the data owners read Waterfall (or KGW). This
is the model owner's watermark in the dilution study (``benchmarks/dilution.py``), the paper's
third row there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from waterdrum_hf.keys import check_watermark_id
from waterdrum_hf.schemes.its.processor import ITSLogitsProcessor
from waterdrum_hf.utils.validation import check_positive_int

DOMAIN = int.from_bytes(b"its", "big")
"""Second seed word of the key's generator: the same id gives ITS keys apart from others'."""


@dataclass(frozen=True)
class ITSWatermark:
    """ITS's settings.

    Args:
        key_length: ``n``, the length of the key's uniform sequence (the authors' 256).
    """

    key_length: int = 256
    name = "its"

    def __post_init__(self) -> None:
        object.__setattr__(self, "key_length", check_positive_int(self.key_length, "key_length"))

    def key(self, watermark_id: int, vocab_size: int) -> tuple[np.ndarray, np.ndarray]:
        """The key's uniforms ``u`` (``key_length``,) and the permutation ``pi`` (``N``,):
        ``pi[j]`` is the ``j``-th token in the key's order."""
        watermark_id = check_watermark_id(watermark_id, "watermark_id")
        vocab_size = check_positive_int(vocab_size, "vocab_size", minimum=2)
        rng = np.random.default_rng((watermark_id, DOMAIN))
        order = rng.permutation(vocab_size)
        return rng.random(self.key_length), order

    def logits_processor(self, vocab_size: int, watermark_id: int) -> ITSLogitsProcessor:
        """A ``transformers`` logits processor that writes under ``watermark_id`` (the model
        owner's one key, for every row)."""
        return ITSLogitsProcessor(self, vocab_size, watermark_id)

    def score(self, token_ids: Sequence[int], watermark_id: int, vocab_size: int) -> float:
        """The ITS statistic of one generated sequence under ``watermark_id``: the largest over
        shifts ``s`` of ``12 * mean_i (u[(s + i) mod n] - 1/2) (eta_i - 1/2)``. Tokens ``>= N``
        are dropped; a sequence with none left raises."""
        uniforms, order = self.key(watermark_id, vocab_size)
        tokens = np.asarray(token_ids)
        tokens = tokens[(tokens >= 0) & (tokens < vocab_size)]
        if tokens.size == 0:
            raise ValueError("The sequence has no token of the vocabulary to test.")
        rank = np.argsort(order)  # the inverse permutation: rank[pi[j]] = j
        eta = rank[tokens] / (vocab_size - 1) - 0.5
        n = self.key_length
        positions = (np.arange(n)[:, None] + np.arange(tokens.size)[None, :]) % n
        return float(12 * ((uniforms[positions] - 0.5) @ eta).max() / tokens.size)

    def settings(self) -> dict[str, object]:
        """What decides the watermark (never a key)."""
        return {"scheme": self.name, "key_length": self.key_length}
