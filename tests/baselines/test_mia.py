"""The MIA family (LOSS, zlib, Min-k%, Min-k%++) and the paper's MIA value: hand-made cases
with known answers, the peers' published formulas on the same numbers, bad input, and the
model-facing functions against a forward pass of the tiny model done here."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score

from waterdrum_hf.baselines import (
    loss_mia,
    loss_score,
    mia_scores,
    mia_value,
    min_k_percent_prob,
    min_k_percent_score,
    min_k_plus_plus_prob,
    min_k_plus_plus_score,
    zlib_mia,
    zlib_score,
)
from waterdrum_hf.baselines.mia import MIA_ATTACKS

LN2 = math.log(2)
SEVEN = [-0.1, -5.0, -0.2, -3.0, -0.3, -4.0, -0.4]


def test_loss_is_the_mean_natural_log_likelihood():
    # probabilities 1/2, 1/4, 1/8: log-likelihoods -ln2, -2 ln2, -3 ln2, mean -2 ln2
    assert loss_score(np.log([0.5, 0.25, 0.125])) == pytest.approx(-2 * LN2)


def test_zlib_divides_by_the_compressed_length_in_bytes():
    text = "ab" * 50  # 100 bytes that zlib packs into about a dozen
    compressed = len(zlib.compress(text.encode("utf-8")))
    assert compressed < 20
    assert zlib_score([-1.0, -3.0], text) == pytest.approx(-2.0 / compressed)
    # UTF-8 bytes, not characters: "é" is two bytes
    assert zlib_score([-1.0], "é" * 3) == pytest.approx(-1 / len(zlib.compress("ééé".encode())))


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        (0.4, -4.5),  # int(0.4 * 7) = 2 lowest: -5, -4 (rounding up would keep 3)
        (0.2, -5.0),  # int(1.4) = 1
        (0.1, -5.0),  # int(0.7) = 0, but at least one token
        (1.0, -13.0 / 7),  # every token
    ],
)
def test_min_k_percent_keeps_the_int_k_n_lowest_tokens(k, expected):
    assert min_k_percent_score(SEVEN, k) == pytest.approx(expected)


def two_token_rows(probabilities):
    """Next-token log-distributions over a two-token vocabulary, ``[p, 1 - p]`` per row."""
    return np.log([[p, 1 - p] for p in probabilities])


def test_min_k_plus_plus_standardises_by_the_moments_under_the_model():
    # Over two tokens with probabilities p, 1 - p, token 0 (probability p) gets
    # (ln p - mu) / sigma = sign(p - 1/2) * sqrt((1 - p) / p), and token 1 the same with
    # p and 1 - p swapped: +0.5 and -2 at p = 0.8, -3 for token 1 at p = 0.9; at p = 0.5 the
    # variance is 0 and the floor keeps the score at 0 rather than 0 / 0.
    rows = two_token_rows([0.8, 0.8, 0.5, 0.9])
    ids = [0, 1, 1, 1]
    assert min_k_plus_plus_score(rows, ids, k=1.0) == pytest.approx((0.5 - 2 + 0 - 3) / 4)
    assert min_k_plus_plus_score(rows, ids, k=0.5) == pytest.approx(-2.5)
    assert min_k_plus_plus_score(rows, ids, k=0.25) == pytest.approx(-3.0)


def open_unlearning_min_k(log_probs, k):
    """open-unlearning src/evals/metrics/mia/min_k.py, MinKProbAttack.compute_score."""
    num_k = max(1, int(len(log_probs) * k))
    return -np.mean(np.sort(log_probs)[:num_k])


def open_unlearning_min_k_plus_plus(vocab_log_probs, token_log_probs, k):
    """open-unlearning src/evals/metrics/mia/min_k_plus_plus.py,
    MinKPlusPlusAttack.compute_score (variance clamped at 1e-6)."""
    probs = np.exp(vocab_log_probs)
    mu = (probs * vocab_log_probs).sum(-1)
    sigma = np.maximum((probs * vocab_log_probs**2).sum(-1) - mu**2, 1e-6)
    scores = (token_log_probs - mu) / np.sqrt(sigma)
    return -np.mean(sorted(scores)[: max(1, int(len(scores) * k))])


def mink_plus_plus_run_py(vocab_log_probs, token_log_probs, ratio):
    """zjysteven/mink-plus-plus run.py (Zhang et al.): mink++ with k_length = int(n * ratio)."""
    probs = np.exp(vocab_log_probs)
    mu = (probs * vocab_log_probs).sum(-1)
    sigma = (probs * vocab_log_probs**2).sum(-1) - mu**2
    mink_plus = (token_log_probs - mu) / np.sqrt(sigma)
    return np.mean(np.sort(mink_plus)[: int(len(mink_plus) * ratio)])


def test_scores_agree_with_the_peers_formulas():
    """Members score higher here; open-unlearning and MUSE report the negation (their
    'loss-like' sign), Zhang et al.'s run.py the same sign."""
    rng = np.random.default_rng(0)
    logits = rng.normal(scale=3.0, size=(9, 7))
    vocab = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
    ids = rng.integers(0, 7, size=9)
    token = vocab[np.arange(9), ids]
    text = "A text the log-probabilities score, with some words repeated, words repeated."
    avg_loss = -token.mean()  # open-unlearning evaluate_probability's avg_loss
    zlib_entropy = len(zlib.compress(bytes(text, "utf-8")))  # MUSE metrics/privleak.py
    assert loss_score(token) == pytest.approx(-avg_loss)  # open-unlearning mia/loss.py
    assert zlib_score(token, text) == pytest.approx(-avg_loss / zlib_entropy)  # mia/zlib.py
    ll = token.mean()  # run.py: ll = -loss, the mean log-likelihood
    assert zlib_score(token, text) == pytest.approx(ll / zlib_entropy)  # run.py
    for k in (0.2, 0.4, 0.6, 1.0):
        assert min_k_percent_score(token, k) == pytest.approx(-open_unlearning_min_k(token, k))
        ours = min_k_plus_plus_score(vocab, ids, k)
        assert ours == pytest.approx(-open_unlearning_min_k_plus_plus(vocab, token, k))
        assert ours == pytest.approx(mink_plus_plus_run_py(vocab, token, k))


def test_pure_scores_refuse_bad_input():
    rows = two_token_rows([0.8, 0.6])
    with pytest.raises(ValueError, match="`token_log_probs` is empty"):
        loss_score([])
    with pytest.raises(ValueError, match="NaN/inf"):
        min_k_percent_score([-1.0, math.nan])
    with pytest.raises(ValueError, match=r"\(0, 1\] \(a share, not a percentage\), got 40"):
        min_k_percent_score(SEVEN, 40)
    with pytest.raises(ValueError, match="`k` must be in"):
        min_k_percent_score(SEVEN, 0)
    with pytest.raises(TypeError, match="`k` must be a number"):
        min_k_percent_score(SEVEN, True)
    with pytest.raises(ValueError, match="`text` is empty"):
        zlib_score([-1.0], "")
    with pytest.raises(TypeError, match="`text` must be a string"):
        zlib_score([-1.0], b"ab")
    with pytest.raises(ValueError, match="log_softmax of the logits, not the logits"):
        min_k_plus_plus_score(rows + 1.0, [0, 1])
    with pytest.raises(ValueError, match="2 rows but `token_ids` 1 tokens"):
        min_k_plus_plus_score(rows, [0])
    with pytest.raises(ValueError, match="below the vocabulary size 2"):
        min_k_plus_plus_score(rows, [0, 2])
    with pytest.raises(TypeError, match="integer token ids"):
        min_k_plus_plus_score(rows, [0.0, 1.0])
    with pytest.raises(ValueError, match="2-dimensional"):
        min_k_plus_plus_score(rows[0], [0])


TEXTS = [
    "The class statement defines a class.",
    "A lambda.",
    "x",
    "Exceptions are raised by the raise statement in a try clause.",
]


def test_model_scores_equal_the_pure_scores_of_a_direct_forward_pass(tiny_model):
    model, tokenizer = tiny_model
    batched = {
        "loss": loss_mia(model, tokenizer, TEXTS, batch_size=4),
        "zlib": zlib_mia(model, tokenizer, TEXTS, batch_size=4),
        "min_k": min_k_percent_prob(model, tokenizer, TEXTS, k=0.4, batch_size=4),
        "min_k++": min_k_plus_plus_prob(model, tokenizer, TEXTS, k=0.4, batch_size=3),
    }
    for i, text in enumerate(TEXTS):
        ids = tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
        if ids.shape[1] < 2:  # nothing before the only token: nothing scored
            assert all(np.isnan(scores[i]) for scores in batched.values())
            continue
        with torch.no_grad():  # natural-log distributions of tokens 1.. given their prefix
            vocab = torch.log_softmax(model(input_ids=ids).logits[0, :-1].double(), -1).numpy()
        targets = ids[0, 1:].numpy()
        token = vocab[np.arange(len(targets)), targets]
        assert batched["loss"][i] == pytest.approx(loss_score(token), abs=1e-5)
        assert batched["zlib"][i] == pytest.approx(zlib_score(token, text), abs=1e-6)
        assert batched["min_k"][i] == pytest.approx(min_k_percent_score(token, 0.4), abs=1e-5)
        expected = min_k_plus_plus_score(vocab, targets, 0.4)
        assert batched["min_k++"][i] == pytest.approx(expected, abs=1e-4)
    with pytest.raises(ValueError, match="`k` must be in"):
        min_k_percent_prob(model, tokenizer, TEXTS, k=0)
    with pytest.raises(TypeError, match="not a single string"):
        loss_mia(model, tokenizer, TEXTS[0])


def test_one_pass_gives_each_attacks_own_scores(tiny_model):
    """mia_scores (every attack from one scoring pass) against each attack's own function, with
    a k other than the default reaching both k-attacks; bad attack names refused."""
    model, tokenizer = tiny_model
    together = mia_scores(model, tokenizer, TEXTS, k=0.25, batch_size=3)
    assert list(together) == list(MIA_ATTACKS)
    alone = {
        "loss": loss_mia(model, tokenizer, TEXTS),
        "zlib": zlib_mia(model, tokenizer, TEXTS),
        "min_k": min_k_percent_prob(model, tokenizer, TEXTS, k=0.25),
        "min_k_plus_plus": min_k_plus_plus_prob(model, tokenizer, TEXTS, k=0.25),
    }
    for name, scores in alone.items():
        np.testing.assert_allclose(together[name], scores, rtol=0, atol=1e-9, err_msg=name)
    assert not np.allclose(together["min_k"], min_k_percent_prob(model, tokenizer, TEXTS),
                           equal_nan=True)  # fmt: skip
    assert list(mia_scores(model, tokenizer, TEXTS, attacks=["zlib"])) == ["zlib"]
    for attacks in (["gradnorm"], []):
        with pytest.raises(ValueError, match="`attacks` must name some of loss, zlib"):
            mia_scores(model, tokenizer, TEXTS, attacks=attacks)


def test_mia_value_is_the_papers_rescaled_auroc():
    members, holdout = [0.9, 0.8, -0.1, 0.7], [0.1, 0.2, 0.75]
    auroc = roc_auc_score([1] * 4 + [0] * 3, members + holdout)
    assert mia_value(members, holdout) == pytest.approx(2 * auroc - 1)
    assert mia_value([1, 2], [1, 2]) == pytest.approx(0.0)
    assert mia_value([3, 4], [1, 2]) == pytest.approx(1.0)  # members all above: 1, not -1
