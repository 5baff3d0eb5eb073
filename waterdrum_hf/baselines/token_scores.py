"""What a causal LM says about each token of a text: the numbers the baselines are built from.

One batched, no-grad forward pass per batch of right-padded sequences gives, for every scored
token ``x_t`` (teacher forcing: the model sees the true tokens before it), its log-probability
``log p(x_t | x_<t)``, the mean and standard deviation of ``log p(z | x_<t)`` over the
vocabulary under the model's own next-token distribution (Min-k%++'s normalisers), and the
model's most likely next token (extraction strength). The MIA, Truth Ratio and extraction
functions turn these into their scores; the pure versions of those take the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from waterdrum_hf.generation.prompting import prompt_token_ids
from waterdrum_hf.utils.torch_plumbing import inference_mode, model_device, pad_batch, pad_token_id
from waterdrum_hf.utils.validation import check_positive_int

VARIANCE_FLOOR = 1e-6
"""Least variance of ``log p`` over the vocabulary that Min-k%++ divides by: a near one-hot
next-token distribution would otherwise divide by (almost) zero. open-unlearning clamps at
the same value (``src/evals/metrics/mia/min_k_plus_plus.py``)."""


@dataclass(frozen=True)
class TokenScores:
    """A causal LM's view of the scored tokens of one sequence, one entry per token.

    Attributes:
        token_ids: the scored tokens ``x_t``.
        log_probs: ``log p(x_t | x_<t)`` (natural log).
        vocab_means: ``E_{z ~ p(.|x_<t)}[log p(z | x_<t)]``, minus the next-token entropy.
        vocab_stds: the standard deviation of ``log p(z | x_<t)`` under ``z ~ p(.|x_<t)``,
            its variance floored at :data:`VARIANCE_FLOOR`.
        predictions: ``argmax_z p(z | x_<t)``, the token greedy decoding would pick.
    """

    token_ids: np.ndarray
    log_probs: np.ndarray
    vocab_means: np.ndarray
    vocab_stds: np.ndarray
    predictions: np.ndarray


def vocabulary_moments(log_probs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and standard deviation of ``log p(z)`` under ``z ~ p``, for each distribution
    ``log_probs[..., :]`` over the vocabulary (Zhang et al., 2024, Min-k%++'s mu and sigma)."""
    probs = log_probs.exp()
    mean = (probs * log_probs).sum(-1)
    variance = (probs * log_probs.square()).sum(-1) - mean.square()
    return mean, variance.clamp_min(VARIANCE_FLOOR).sqrt()


def score_tokens(
    model: Any,
    tokenizer: Any,
    sequences: Sequence[Sequence[int]],
    starts: Sequence[int],
    *,
    batch_size: int,
) -> list[TokenScores]:
    """:class:`TokenScores` of tokens ``starts[i]:`` of each of ``sequences`` (``starts[i]``
    >= 1: the first token has nothing before it), in batches of ``batch_size``."""
    check_positive_int(batch_size, "batch_size")
    pad, device = pad_token_id(tokenizer), model_device(model)
    scores = []
    with inference_mode(model):
        for first in range(0, len(sequences), batch_size):
            batch = sequences[first : first + batch_size]
            # right padding: token j at column j, whatever the sequence's length
            input_ids, mask = pad_batch(batch, pad, device, side="right")
            logits = model(input_ids=input_ids, attention_mask=mask).logits[:, :-1].float()
            log_probs = torch.log_softmax(logits, dim=-1)  # column j: the token at j + 1
            token_log_probs = log_probs.gather(-1, input_ids[:, 1:, None])[..., 0]
            for row, ids in enumerate(batch):
                start = starts[first + row]
                span = slice(start - 1, len(ids) - 1)
                means, stds = vocabulary_moments(log_probs[row, span])  # one row: less memory
                scores.append(
                    TokenScores(
                        token_ids=np.asarray(ids[start:], dtype=np.int64),
                        log_probs=_numpy(token_log_probs[row, span]),
                        vocab_means=_numpy(means),
                        vocab_stds=_numpy(stds),
                        predictions=log_probs[row, span].argmax(-1).cpu().numpy(),
                    )
                )
    return scores


def _numpy(values: torch.Tensor) -> np.ndarray:
    """``values`` as a float64 array on the CPU."""
    return values.double().cpu().numpy()


def score_texts(
    model: Any, tokenizer: Any, texts: Sequence[str], *, batch_size: int
) -> list[TokenScores]:
    """:class:`TokenScores` of each text's tokens (no special tokens added) but the first,
    which has nothing before it: a text of fewer than two tokens gets empty arrays."""
    encoded = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    scored = [ids for ids in encoded if len(ids) >= 2]
    by_text = iter(score_tokens(model, tokenizer, scored, [1] * len(scored), batch_size=batch_size))
    no_ids, nothing = np.zeros(0, dtype=np.int64), np.zeros(0)
    empty = TokenScores(no_ids, nothing, nothing, nothing, predictions=no_ids)
    return [next(by_text) if len(ids) >= 2 else empty for ids in encoded]


def score_answers(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    answers: Sequence[str],
    *,
    batch_size: int,
) -> list[TokenScores]:
    """:class:`TokenScores` of each answer's tokens given its prompt.

    The prompt is tokenised as :func:`waterdrum_hf.generate` does (special tokens added unless
    it starts with BOS text), the answer without special tokens, and the two id lists are
    joined: every answer token is scored, none of the prompt's.
    """
    sequences, starts = [], []
    for i, (prompt, answer) in enumerate(zip(prompts, answers, strict=True)):
        prompt_ids = prompt_token_ids(tokenizer, prompt)
        answer_ids = tokenizer(answer, add_special_tokens=False)["input_ids"]
        if not prompt_ids:
            raise ValueError(
                f"prompt {i} has no tokens: the first answer token needs one before it (the "
                "tokenizer adds no BOS token here, so pass a non-empty prompt)."
            )
        if not answer_ids:
            raise ValueError(f"answer {i} has no tokens: pass a non-empty answer.")
        sequences.append(prompt_ids + answer_ids)
        starts.append(len(prompt_ids))
    return score_tokens(model, tokenizer, sequences, starts, batch_size=batch_size)
