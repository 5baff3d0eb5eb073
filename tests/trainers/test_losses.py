"""The unlearning losses as pure functions on random tensors: formulas, masking, padding.

That IdkDPO's loss equals TRL's DPO loss is tested with models in ``test_idk_dpo.py``.
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


def answer_logits(probabilities: list[list[float]], length: int = 3):
    """Logits over 4 tokens and labels of sequences whose answer token ``t`` (after a one-token
    prompt) has probability ``probabilities[row][t]``: the target (token 1) gets the logit
    ``log(3 p / (1 - p))`` and the other 3 tokens 0, so softmax gives it exactly ``p``."""
    logits = torch.zeros(len(probabilities), length, 4)
    labels = torch.full((len(probabilities), length), IGNORE_INDEX)
    for row, answer in enumerate(probabilities):
        for position, p in enumerate(answer):
            logits[row, position, 1] = math.log(3 * p / (1 - p))
            labels[row, position + 1] = 1
    return logits, labels


def test_npo_loss_equals_the_papers_equation_on_a_case_computed_by_hand():
    """NPO (Zhang et al. 2024, eq. 3): ``-(2/beta) log sigmoid(-beta log(pi/pi_ref))``, with
    ``sigmoid(-beta log r) = 1 / (1 + r**beta)``; beta = 1/2, answers of 2 tokens.
    Row 1: each token 1/2 under the model, 3/4 under the reference: pi = 1/4, pi_ref = 9/16,
    r = 4/9, r**beta = 2/3, loss = 4 log(5/3) = 2.0433. Row 2: both 1/2 per token: r = 1,
    loss = 4 log 2 = 2.7726. Row 3: 3/4 against 1/2: r = 9/4, r**beta = 3/2, loss =
    4 log(5/2) = 3.6652. Independent of ``npo_loss``'s softplus form and of the formulas
    re-typed in the tests above: the log-probabilities come from logits set by hand, through
    ``sequence_log_prob`` as the trainer takes them."""
    logits, labels = answer_logits([[1 / 2, 1 / 2]] * 2 + [[3 / 4, 3 / 4]])
    ref_logits, _ = answer_logits([[3 / 4, 3 / 4], [1 / 2, 1 / 2], [1 / 2, 1 / 2]])
    loss = npo_loss(sequence_log_prob(logits, labels), sequence_log_prob(ref_logits, labels), 0.5)
    expected = [4 * math.log(5 / 3), 4 * math.log(2), 4 * math.log(5 / 2)]
    assert loss.tolist() == pytest.approx(expected, rel=1e-6)
    assert expected == pytest.approx([2.0433, 2.7726, 3.6652], abs=1e-4)


def test_simnpo_loss_equals_the_papers_equation_on_a_case_computed_by_hand():
    """SimNPO (Fan et al. 2024): ``-(2/beta) log sigmoid(-(beta/|y|) log pi(y|x) - gamma)``;
    beta = 4, gamma = log 2. Row 1: 2 answer tokens of 1/2: log pi = -2 log 2, the argument
    is 4 log 2 - log 2 = log 8, sigmoid = 8/9, loss = (1/2) log(9/8) = 0.058892. Row 2: 1
    answer token of 1/4 (then padding): log pi = -2 log 2 again but |y| = 1, so the argument
    is log 256 - log 2 = log 128 and loss = (1/2) log(129/128) = 0.0038910: the length
    normalisation is what tells the rows apart. Independent of ``simnpo_loss``'s
    ``logsigmoid`` form and of the formulas re-typed in the tests above: the mean
    log-probabilities come from logits set by hand, through ``sequence_nll`` as the trainer
    takes them."""
    logits, labels = answer_logits([[1 / 2, 1 / 2], [1 / 4]])
    loss = simnpo_loss(-sequence_nll(logits, labels), beta=4.0, gamma=math.log(2))
    expected = [0.5 * math.log(9 / 8), 0.5 * math.log(129 / 128)]
    assert loss.tolist() == pytest.approx(expected, rel=1e-5)
    assert expected == pytest.approx([0.058892, 0.0038910], rel=1e-4)


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


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_token_kl_on_the_gpu_equals_the_cpu():
    """Every intermediate stays on the logits' device (a CPU one would fail on CUDA inputs)."""
    logits, labels = random_batch(5)
    ref_logits = logits.roll(1, dims=-1)
    on_gpu = token_kl(ref_logits.cuda(), logits.cuda(), labels.cuda())
    assert on_gpu.device.type == "cuda"
    torch.testing.assert_close(on_gpu.cpu(), token_kl(ref_logits, logits, labels))


def test_a_one_token_vocabulary_gives_every_token_log_prob_zero():
    """With one token its probability is 1: log-prob 0 at every labelled position, 0 at the
    masked ones (whose index into the vocabulary must be that token's, 0)."""
    logits, labels = random_batch(3)
    log_probs, mask = token_log_probs(logits[..., :1], labels.clamp(max=0))
    assert mask.tolist() == (labels[:, 1:] != IGNORE_INDEX).tolist()
    torch.testing.assert_close(log_probs, torch.zeros_like(log_probs), rtol=0, atol=0)
    torch.testing.assert_close(sequence_nll(logits[..., :1], labels.clamp(max=0)), torch.zeros(3))


def test_token_kl_is_float32_whatever_torchs_default_dtype():
    """The KL is computed in float32 (logits are upcast to it), also where a program made
    float64 torch's default dtype: the per-sequence totals stay float32 and equal."""
    logits, labels = random_batch(4)
    ref_logits = logits.flip(-1)
    want = token_kl(ref_logits, logits, labels)
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        got = token_kl(ref_logits, logits, labels)
    finally:
        torch.set_default_dtype(default)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, want, rtol=0, atol=0)
