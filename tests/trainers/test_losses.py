"""The unlearning losses as pure functions on random tensors: formulas, masking, padding.

That IdkDPO's loss equals TRL's DPO loss is tested with models in ``test_trainers.py``.
"""

from __future__ import annotations

import math
import warnings

import pytest
import torch

from waterdrum_hf.data import IGNORE_INDEX
from waterdrum_hf.trainers.losses import (
    dpo_sigmoid_loss,
    npo_loss,
    sequence_log_prob,
    sequence_nll,
    simnpo_loss,
    token_kl,
    token_log_probs,
)

VOCAB = 11


def random_batch(seed: int, batch: int = 3, length: int = 9) -> tuple[torch.Tensor, torch.Tensor]:
    """Random logits and labels with a masked prompt (first 2 tokens) and right padding."""
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(batch, length, VOCAB, generator=gen)
    labels = torch.randint(0, VOCAB, (batch, length), generator=gen)
    labels[:, :2] = IGNORE_INDEX
    for row, pad in enumerate([0, 2, 4][:batch]):
        if pad:
            labels[row, -pad:] = IGNORE_INDEX
    return logits, labels


def pad_right(logits: torch.Tensor, labels: torch.Tensor, extra: int, seed: int = 99):
    """Append ``extra`` padded positions with random (never counted) logits."""
    gen = torch.Generator().manual_seed(seed)
    noise = torch.randn(logits.shape[0], extra, logits.shape[2], generator=gen)
    pad = torch.full((labels.shape[0], extra), IGNORE_INDEX)
    return torch.cat([logits, noise], dim=1), torch.cat([labels, pad], dim=1)


def manual_token_log_probs(logits, labels):
    """Per-row lists of (log-prob of each labelled next token) computed one position at a time."""
    rows = []
    for row in range(labels.shape[0]):
        values = []
        for t in range(1, labels.shape[1]):
            if labels[row, t] != IGNORE_INDEX:
                values.append(torch.log_softmax(logits[row, t - 1], -1)[labels[row, t]])
        rows.append(torch.stack(values))
    return rows


def test_sequence_log_prob_and_nll_match_a_token_by_token_sum():
    logits, labels = random_batch(0)
    rows = manual_token_log_probs(logits, labels)
    torch.testing.assert_close(
        sequence_log_prob(logits, labels), torch.stack([r.sum() for r in rows])
    )
    torch.testing.assert_close(sequence_nll(logits, labels), torch.stack([-r.mean() for r in rows]))
    torch.testing.assert_close(
        sequence_nll(logits, labels, "sum"), torch.stack([-r.sum() for r in rows])
    )
    log_probs, mask = token_log_probs(logits, labels)
    assert mask.sum().item() == sum(len(r) for r in rows)
    assert (log_probs[~mask] == 0).all()


def test_token_kl_matches_the_definition_on_labelled_positions_only():
    logits, labels = random_batch(1)
    ref_logits = logits + torch.randn(logits.shape, generator=torch.Generator().manual_seed(5))
    expected = []
    for row in range(labels.shape[0]):
        values = []
        for t in range(1, labels.shape[1]):
            if labels[row, t] != IGNORE_INDEX:
                p = torch.softmax(ref_logits[row, t - 1], -1)
                q = torch.softmax(logits[row, t - 1], -1)
                values.append((p * (p.log() - q.log())).sum())
        expected.append(torch.stack(values).mean())
    kl = token_kl(ref_logits, logits, labels)
    torch.testing.assert_close(kl, torch.stack(expected))
    assert (kl > 0).all()
    torch.testing.assert_close(token_kl(logits, logits, labels), torch.zeros(3))
    # Logits at positions that predict prompt or padding tokens never count.
    unlabelled = torch.cat([labels[:, 1:] == IGNORE_INDEX, torch.ones(3, 1, dtype=torch.bool)], 1)
    noisy = logits.masked_fill(unlabelled[..., None], 7.0)
    torch.testing.assert_close(token_kl(ref_logits, noisy, labels), kl)


@pytest.mark.parametrize("extra", [1, 6])
def test_more_padding_changes_no_token_level_value(extra):
    logits, labels = random_batch(2)
    ref_logits = logits.flip(-1)
    padded, padded_labels = pad_right(logits, labels, extra)
    padded_ref, _ = pad_right(ref_logits, labels, extra, seed=7)
    for function in (sequence_log_prob, sequence_nll):
        torch.testing.assert_close(function(padded, padded_labels), function(logits, labels))
    torch.testing.assert_close(
        token_kl(padded_ref, padded, padded_labels), token_kl(ref_logits, logits, labels)
    )


def test_npo_loss_is_its_formula_and_falls_with_the_likelihood():
    log_prob = torch.tensor([-3.0, -10.0, -40.0])
    ref = torch.tensor([-3.0, -5.0, -5.0])
    beta = 0.5
    expected = (2 / beta) * torch.log1p(torch.exp(beta * (log_prob - ref)))
    torch.testing.assert_close(npo_loss(log_prob, ref, beta), expected)
    assert npo_loss(log_prob, ref, beta)[0].item() == pytest.approx(2 / beta * math.log(2))
    assert (npo_loss(log_prob, ref, beta).diff() < 0).all()


def test_simnpo_loss_is_its_formula():
    mean_log_prob = torch.tensor([-0.2, -1.0, -3.0])
    beta, gamma = 2.5, 0.3
    expected = -(2 / beta) * torch.log(torch.sigmoid(-beta * mean_log_prob - gamma))
    torch.testing.assert_close(simnpo_loss(mean_log_prob, beta, gamma), expected)


def test_dpo_sigmoid_loss_is_its_formula():
    chosen, rejected = torch.tensor([-4.0, -9.0]), torch.tensor([-2.0, -3.0])
    ref_chosen, ref_rejected = torch.tensor([-5.0, -8.0]), torch.tensor([-2.5, -1.0])
    beta = 0.1
    logits = beta * ((chosen - ref_chosen) - (rejected - ref_rejected))
    expected = torch.log1p(torch.exp(-logits))
    torch.testing.assert_close(
        dpo_sigmoid_loss(chosen, rejected, ref_chosen, ref_rejected, beta), expected
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: npo_loss(torch.zeros(1), torch.zeros(1), 0.0), "beta"),
        (lambda: simnpo_loss(torch.zeros(1), -1.0), "beta"),
        (lambda: simnpo_loss(torch.zeros(1), 1.0, -0.5), "gamma"),
        (lambda: dpo_sigmoid_loss(*[torch.zeros(1)] * 4, beta=-0.1), "beta"),
        (lambda: sequence_nll(torch.zeros(1, 3, 4), torch.zeros(1, 3).long(), "max"), "reduction"),
        (lambda: sequence_nll(torch.zeros(1, 3, 4), torch.zeros(1, 4).long()), "labels"),
        (lambda: token_kl(torch.zeros(1, 2, 4), torch.zeros(1, 3, 4), torch.zeros(1, 3)), "ref"),
    ],
)
def test_bad_arguments_raise(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_token_kl_of_a_row_with_one_labelled_token_is_that_tokens_kl():
    logits, labels = random_batch(3, batch=2, length=5)
    labels[0] = IGNORE_INDEX
    labels[0, 3] = 4  # predicted at position 2, the row's only labelled token
    ref_logits = logits.roll(1, dims=-1)
    p, q = torch.softmax(ref_logits[0, 2], -1), torch.softmax(logits[0, 2], -1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # softmaxes over the vocabulary, named: no warning
        kl = token_kl(ref_logits, logits, labels)
    assert kl[0].item() == pytest.approx((p * (p.log() - q.log())).sum().item(), rel=1e-5)
    # No labelled token at all: 0, not a division by zero.
    labels[1] = IGNORE_INDEX
    assert token_kl(ref_logits, logits, labels)[1].item() == 0.0


def test_simnpo_loss_has_no_reward_margin_by_default():
    mean_log_prob = torch.tensor([-0.2, -1.0, -3.0])
    beta = 2.5
    expected = -(2 / beta) * torch.log(torch.sigmoid(-beta * mean_log_prob))
    torch.testing.assert_close(simnpo_loss(mean_log_prob, beta), expected)


def test_mean_nll_of_a_row_with_one_labelled_token_is_that_tokens_nll():
    logits, labels = random_batch(4, batch=2, length=5)
    labels[0] = IGNORE_INDEX
    labels[0, 2] = 7  # predicted at position 1, the row's only labelled token
    expected = -torch.log_softmax(logits[0, 1], -1)[7]
    assert sequence_nll(logits, labels)[0].item() == pytest.approx(expected.item(), rel=1e-6)
    assert sequence_nll(logits, labels, "sum")[0].item() == pytest.approx(expected.item(), rel=1e-6)
