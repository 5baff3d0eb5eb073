"""Membership-inference (MIA) scores of texts under a causal LM: members score higher.

Each attack is a pure function of one text's token log-probabilities (natural log, each token
given the ones before it) and a model-facing function that computes those for many texts:

* **LOSS** (Yeom et al., 2018): the mean token log-likelihood, minus the LM loss.
* **zlib** (Carlini et al., 2021): that mean log-likelihood (minus the log-perplexity)
  divided by the length in bytes of the zlib-compressed UTF-8 text, which discounts texts that
  are merely repetitive.
* **Min-k% Prob** (Shi et al., 2024): the mean of the ``max(1, int(k * n))`` lowest of a text's
  ``n`` token log-probabilities.
* **Min-k%++** (Zhang et al., 2024): Min-k% of ``(log p(x_t) - mu_t) / sigma_t``, where
  ``mu_t`` and ``sigma_t`` are the mean and standard deviation of ``log p(z)`` under the
  model's own next-token distribution ``z ~ p(. | x_<t)``.

Checked against ``zjysteven/mink-plus-plus`` ``run.py`` (the same signs; ``int(k * n)``
without the floor of one) and open-unlearning's ``src/evals/metrics/mia/{loss,zlib,min_k,
min_k_plus_plus}.py`` and MUSE's ``metrics/privleak.py``, which report the negations (lower
for members); Min-k%++'s variance is floored at 1e-6 as open-unlearning does. A text is
tokenised without special tokens and its first token, with nothing before it, is not scored
(the peers prepend BOS and score that token too). The paper's aggregate MIA value is
``2 * AUROC - 1`` with the forget set as positives (:func:`mia_value`): about 1 before
unlearning, 0 when members look like holdout text.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from waterdrum_hf.baselines.inputs import check_fraction, finite_array, token_id_array
from waterdrum_hf.baselines.token_scores import TokenScores, score_texts, vocabulary_moments
from waterdrum_hf.statistics import separability_auroc
from waterdrum_hf.utils.validation import check_encodable, check_string_list


def loss_score(token_log_probs: Sequence[float] | np.ndarray) -> float:
    """LOSS: the mean of a text's token log-probabilities."""
    return float(finite_array(token_log_probs, "token_log_probs").mean())


def zlib_score(token_log_probs: Sequence[float] | np.ndarray, text: str) -> float:
    """zlib: :func:`loss_score` divided by the length in bytes of ``zlib.compress`` of the
    text's UTF-8 encoding (zlib's default level)."""
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a string, got {type(text).__name__}.")
    if not text:
        raise ValueError("`text` is empty: pass the text the log-probabilities score.")
    compressed = zlib.compress(check_encodable(text, "text").encode("utf-8"))
    return loss_score(token_log_probs) / len(compressed)


def min_k_percent_score(token_log_probs: Sequence[float] | np.ndarray, k: float = 0.4) -> float:
    """Min-k% Prob: the mean of the ``max(1, int(k * n))`` lowest of ``n`` log-probabilities."""
    return _lowest_mean(finite_array(token_log_probs, "token_log_probs"), check_fraction(k))


def min_k_plus_plus_score(
    vocab_log_probs: np.ndarray, token_ids: Sequence[int] | np.ndarray, k: float = 0.4
) -> float:
    """Min-k%++ from each scored position's next-token log-distribution over the vocabulary.

    Args:
        vocab_log_probs: ``(n, V)``: row ``t`` is ``log p(. | x_<t)`` (each row's
            probabilities sum to 1).
        token_ids: the ``n`` tokens ``x_t`` the rows predict.
        k: the share of positions kept, in (0, 1].
    """
    log_probs = finite_array(vocab_log_probs, "vocab_log_probs", ndim=2)
    ids = token_id_array(token_ids, "token_ids")
    if len(ids) != len(log_probs):
        raise ValueError(
            f"`vocab_log_probs` has {len(log_probs)} rows but `token_ids` {len(ids)} tokens."
        )
    if (ids >= log_probs.shape[1]).any():
        raise ValueError(f"`token_ids` must be below the vocabulary size {log_probs.shape[1]}.")
    totals = np.logaddexp.reduce(log_probs, axis=1)
    if not np.allclose(totals, 0.0, atol=1e-4):
        raise ValueError(
            "each row of `vocab_log_probs` must be a log-distribution (logsumexp 0): pass "
            "log_softmax of the logits, not the logits."
        )
    means, stds = vocabulary_moments(torch.from_numpy(log_probs))
    token_log_probs = log_probs[np.arange(len(ids)), ids]
    return _min_k_plus_plus(token_log_probs, means.numpy(), stds.numpy(), check_fraction(k))


def _min_k_plus_plus(log_probs: np.ndarray, means: np.ndarray, stds: np.ndarray, k: float) -> float:
    """Min-k% of the token log-probabilities standardised by their vocabulary moments."""
    return _lowest_mean((log_probs - means) / stds, k)


def _lowest_mean(values: np.ndarray, k: float) -> float:
    """Mean of the ``max(1, int(k * len(values)))`` lowest values (Min-k%'s rule)."""
    return float(np.sort(values)[: max(1, int(k * len(values)))].mean())


MIA_ATTACKS = ("loss", "zlib", "min_k", "min_k_plus_plus")
"""The attacks :func:`mia_scores` computes, by name."""


def mia_scores(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    *,
    k: float = 0.4,
    attacks: Sequence[str] = MIA_ATTACKS,
    batch_size: int = 16,
) -> dict[str, np.ndarray]:
    """Each attack's score of each text under ``model``, from one scoring pass: tokens scored
    given their prefix (teacher forcing; no special tokens are added, and the first token,
    with nothing before it, is not scored); NaN for a text of fewer than two tokens."""
    k = check_fraction(k)
    scorers: dict[str, Callable[[TokenScores, str], float]] = {
        "loss": lambda s, _: loss_score(s.log_probs),
        "zlib": lambda s, text: zlib_score(s.log_probs, text),
        "min_k": lambda s, _: min_k_percent_score(s.log_probs, k),
        "min_k_plus_plus": lambda s, _: _min_k_plus_plus(
            s.log_probs, s.vocab_means, s.vocab_stds, k
        ),
    }
    unknown = [name for name in attacks if name not in scorers]
    if unknown or not attacks:
        raise ValueError(
            f"`attacks` must name some of {', '.join(MIA_ATTACKS)}, got {list(attacks)!r}."
        )
    texts = check_string_list(texts, "texts")
    scored = score_texts(model, tokenizer, texts, batch_size=batch_size)
    return {
        name: np.array(
            [
                scorers[name](scores, text) if len(scores.log_probs) else math.nan
                for scores, text in zip(scored, texts, strict=True)
            ],
            dtype=np.float64,
        )
        for name in attacks
    }


def loss_mia(
    model: Any, tokenizer: Any, texts: Sequence[str], *, batch_size: int = 16
) -> np.ndarray:
    """:func:`loss_score` of each text under ``model`` (tokens scored as :func:`mia_scores`
    says)."""
    return mia_scores(model, tokenizer, texts, attacks=["loss"], batch_size=batch_size)["loss"]


def zlib_mia(
    model: Any, tokenizer: Any, texts: Sequence[str], *, batch_size: int = 16
) -> np.ndarray:
    """:func:`zlib_score` of each text under ``model`` (tokens scored as :func:`mia_scores`
    says)."""
    return mia_scores(model, tokenizer, texts, attacks=["zlib"], batch_size=batch_size)["zlib"]


def min_k_percent_prob(
    model: Any, tokenizer: Any, texts: Sequence[str], *, k: float = 0.4, batch_size: int = 16
) -> np.ndarray:
    """Min-k% Prob of each text: the mean log-probability of its ``k`` lowest-scoring tokens
    (tokens scored as :func:`mia_scores` says; NaN for a text of fewer than two tokens)."""
    return mia_scores(model, tokenizer, texts, k=k, attacks=["min_k"], batch_size=batch_size)[
        "min_k"
    ]


def min_k_plus_plus_prob(
    model: Any, tokenizer: Any, texts: Sequence[str], *, k: float = 0.4, batch_size: int = 16
) -> np.ndarray:
    """Min-k%++ of each text under ``model`` (tokens scored as :func:`mia_scores` says; NaN
    for a text of fewer than two tokens)."""
    return mia_scores(
        model, tokenizer, texts, k=k, attacks=["min_k_plus_plus"], batch_size=batch_size
    )["min_k_plus_plus"]


def mia_value(member_scores: Sequence[float], holdout_scores: Sequence[float]) -> float:
    """The paper's aggregate MIA value, ``2 * AUROC - 1`` (members positive)."""
    return 2.0 * separability_auroc(member_scores, holdout_scores) - 1.0
