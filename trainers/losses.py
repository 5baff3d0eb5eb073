"""Unlearning losses as pure functions on tensors.

Token-level functions take causal-LM ``logits`` ``(batch, length, vocab)`` and ``labels``
``(batch, length)`` as :class:`waterdrum_hf.data.ForgetRetainCollator` makes them: the logits at
position ``t`` predict the token at ``t + 1``, and a label of ``-100`` (prompt or padding) is never
counted, so the amount of padding never changes a value. They return one value per sequence; the
trainers average sequences, so every example weighs the same whatever its length. Logits are
upcast to float32 before any softmax (bf16 training stays accurate).

Sequence-level functions take per-sequence log-probabilities (summed over labelled tokens, as
:func:`sequence_log_prob` returns them) and return one loss per sequence.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F

from waterdrum_hf.data import IGNORE_INDEX

__all__ = [
    "dpo_sigmoid_loss",
    "npo_loss",
    "sequence_log_prob",
    "sequence_nll",
    "simnpo_loss",
    "token_kl",
    "token_log_probs",
]


def token_log_probs(
    logits: torch.Tensor, labels: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probability of each next token and the mask of labelled ones, both ``(batch, length-1)``.

    Unlabelled positions hold 0 in the log-probabilities.
    """
    _check_shapes(logits, labels)
    targets = labels[:, 1:]
    mask = targets != IGNORE_INDEX
    shifted = logits[:, :-1].float()
    chosen = shifted.gather(-1, targets.masked_fill(~mask, 0).unsqueeze(-1)).squeeze(-1)
    log_probs = chosen - torch.logsumexp(shifted, dim=-1)
    return log_probs.masked_fill(~mask, 0.0), mask


def sequence_log_prob(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """``log pi(y | x)`` per sequence: the sum of the labelled tokens' log-probabilities."""
    return token_log_probs(logits, labels)[0].sum(dim=-1)


def sequence_nll(
    logits: torch.Tensor, labels: torch.Tensor, reduction: Literal["mean", "sum"] = "mean"
) -> torch.Tensor:
    """Negative log-likelihood per sequence over its labelled tokens, their mean or their sum.

    A sequence without a labelled token has NLL 0 (the trainers' collator refuses such rows).
    """
    if reduction not in ("mean", "sum"):
        raise ValueError(f"reduction must be 'mean' or 'sum', got {reduction!r}")
    log_probs, mask = token_log_probs(logits, labels)
    total = -log_probs.sum(dim=-1)
    return total if reduction == "sum" else total / mask.sum(dim=-1).clamp(min=1)


def token_kl(ref_logits: torch.Tensor, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """``KL(p_ref || p)`` over the vocabulary at each labelled position, averaged per sequence.

    Only the positions that predict a labelled token count (answer or text tokens, never the
    prompt or padding). The softmaxes are taken on those positions only, which keeps memory at
    ``labelled tokens x vocab``.
    """
    _check_shapes(logits, labels)
    if ref_logits.shape != logits.shape:
        raise ValueError(
            f"ref_logits and logits must have the same shape, got {tuple(ref_logits.shape)} and "
            f"{tuple(logits.shape)}"
        )
    mask = labels[:, 1:] != IGNORE_INDEX
    rows = mask.nonzero()[:, 0]
    ref_log_p = F.log_softmax(ref_logits[:, :-1][mask].float(), dim=-1)
    log_p = F.log_softmax(logits[:, :-1][mask].float(), dim=-1)
    per_token = F.kl_div(log_p, ref_log_p, reduction="none", log_target=True).sum(dim=-1)
    totals = torch.zeros(labels.shape[0], device=per_token.device, dtype=per_token.dtype)
    totals = totals.index_add(0, rows, per_token)
    return totals / mask.sum(dim=-1).clamp(min=1)


def npo_loss(log_prob: torch.Tensor, ref_log_prob: torch.Tensor, beta: float) -> torch.Tensor:
    """Negative preference optimisation (Zhang et al. 2024), per sequence.

    ``(2 / beta) * log(1 + (pi(y|x) / pi_ref(y|x)) ** beta)``: it falls as the model's likelihood
    of the forget answer falls below the reference's, and flattens out instead of diverging as
    gradient ascent does.
    """
    _check_beta(beta)
    return (2.0 / beta) * F.softplus(beta * (log_prob - ref_log_prob))


def simnpo_loss(mean_log_prob: torch.Tensor, beta: float, gamma: float = 0.0) -> torch.Tensor:
    """SimNPO (Fan et al. 2024), per sequence: NPO without a reference, length-normalised.

    ``-(2 / beta) * logsigmoid(-(beta / |y|) * log pi(y|x) - gamma)``, where
    ``mean_log_prob = log pi(y|x) / |y|`` is the mean log-probability of the labelled tokens
    (``-sequence_nll(..., "mean")``) and ``gamma >= 0`` a reward margin.
    """
    _check_beta(beta)
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, got {gamma!r}")
    return -(2.0 / beta) * F.logsigmoid(-beta * mean_log_prob - gamma)


def dpo_sigmoid_loss(
    chosen_log_prob: torch.Tensor,
    rejected_log_prob: torch.Tensor,
    ref_chosen_log_prob: torch.Tensor,
    ref_rejected_log_prob: torch.Tensor,
    beta: float,
) -> torch.Tensor:
    """The DPO sigmoid loss (Rafailov et al. 2023), per pair.

    ``-logsigmoid(beta * ((log pi(c) - log pi_ref(c)) - (log pi(r) - log pi_ref(r))))`` with
    sequence log-probabilities summed over completion tokens, as TRL's ``DPOTrainer`` computes
    it with ``loss_type="sigmoid"``.
    """
    _check_beta(beta)
    chosen = chosen_log_prob - ref_chosen_log_prob
    rejected = rejected_log_prob - ref_rejected_log_prob
    return -F.logsigmoid(beta * (chosen - rejected))


def _check_shapes(logits: torch.Tensor, labels: torch.Tensor) -> None:
    if logits.dim() != 3 or labels.shape != logits.shape[:2]:
        raise ValueError(
            "logits must be (batch, length, vocab) and labels (batch, length), got "
            f"{tuple(logits.shape)} and {tuple(labels.shape)}"
        )


def _check_beta(beta: float) -> None:
    if not beta > 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
