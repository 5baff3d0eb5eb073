"""Adapted KGW: green lists per (owner key, previous token), checked by hand computation and by
brute force over the vocabulary, its null on unwatermarked text, and text written by its
processor read back per owner."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from tokenizer_builders import word_texts, word_tokenizer

from waterdrum_hf import Verifier
from waterdrum_hf.schemes import KGWScheme, kgw_z_score
from waterdrum_hf.schemes.permutation_processor import PermutationLogitsProcessor

N = 1000


def is_green(watermark_id: int, previous: int, token: int, gamma: float) -> bool:
    """The construction by hand: token's position in the (id, previous)-seeded permutation."""
    position = np.random.RandomState((watermark_id, previous)).permutation(N)[token]
    return position < math.floor(gamma * N)


@pytest.mark.parametrize("gamma", [0.25, 0.5, 0.9])
def test_single_owner_z_score_equals_a_hand_computation(gamma):
    tokenizer = word_tokenizer(N)
    [text] = word_texts(N, 1, 80, seed=3)
    ids = [int(word[1:]) for word in text.split()]
    greens = sum(is_green(77, p, t, gamma) for p, t in zip(ids[:-1], ids[1:], strict=True))
    count = len(ids) - 1
    share = math.floor(gamma * N) / N
    expected = (greens - share * count) / math.sqrt(count * share * (1 - share))
    score = Verifier(tokenizer, scheme=KGWScheme(gamma=gamma)).verify(text, 77)[0]
    assert kgw_z_score(score, count) == pytest.approx(expected)


def green_list(watermark_id: int, previous: int, gamma: float) -> set[int]:
    """The green list by brute force: every token of the vocabulary whose entry in numpy's
    ``RandomState((id, previous)).permutation(N)`` is below ``floor(gamma N)``."""
    permutation = np.random.RandomState((watermark_id, previous)).permutation(N)
    return {token for token in range(N) if permutation[token] < math.floor(gamma * N)}


@pytest.mark.parametrize("gamma", [0.25, 0.5])
def test_green_lists_by_brute_force_over_the_vocabulary(gamma):
    """An oracle independent of the reader's permutation kernel (``permuted_positions``), of
    ``position_terms``' formula and of the writer's bias: every token of the vocabulary is read
    after a context through the public ``Verifier`` (one two-token text each) and written after
    it by the public processor. The tokens that read as green, and those the writer favours,
    must be :func:`green_list` (numpy directly), exactly ``floor(gamma N)`` of them; over the
    vocabulary the terms must have mean 0 and mean square 1 exactly (what a null z needs); and
    a written text's score must be the z-score of its greens counted in those lists."""
    verifier = Verifier(word_tokenizer(N), scheme=KGWScheme(gamma=gamma))
    share = math.floor(gamma * N) / N
    for watermark_id, previous in ((77, 3), (77, 4), (78, 3), (2**32 - 1, N - 1)):
        green = green_list(watermark_id, previous, gamma)
        terms = verifier.verify([f"w{previous} w{token}" for token in range(N)], watermark_id)
        assert set(np.flatnonzero(terms > 0).tolist()) == green
        assert len(green) == math.floor(gamma * N)
        assert terms.mean() == pytest.approx(0, abs=1e-12)
        assert (terms**2).mean() == pytest.approx(1, rel=1e-12)
        processor = KGWScheme(gamma=gamma).logits_processor(N, watermark_id, delta=3.0)
        processor(torch.tensor([[0]]), torch.zeros(1, N))  # the prompt: one token
        written = processor(torch.tensor([[0, previous]]), torch.zeros(1, N))[0]
        assert set(torch.nonzero(written == 3.0)[:, 0].tolist()) == green
        assert set(torch.nonzero(written == 0.0)[:, 0].tolist()) == set(range(N)) - green
    ids = [int(word[1:]) for word in write(watermark_id=2024, delta=2.0).split()]
    pairs = list(zip(ids[:-1], ids[1:], strict=True))
    greens = sum(token in green_list(2024, previous, gamma) for previous, token in pairs)
    z = (greens - share * len(pairs)) / math.sqrt(len(pairs) * share * (1 - share))
    score = verifier.verify(" ".join(f"w{i}" for i in ids), 2024)[0]
    assert kgw_z_score(score, len(pairs)) == pytest.approx(z, rel=1e-9)


def test_null_reads_zero_with_unit_variance_per_token():
    tokenizer = word_tokenizer(N)
    texts = word_texts(N, 40, 101, seed=5, zipf=None)  # 100 counted tokens, pairs rarely repeat
    null = Verifier(tokenizer, scheme=KGWScheme()).null_reference(texts, 300)
    per_text = null.scores  # (texts, keys)
    assert abs(per_text.mean()) < 3 * 0.1 / math.sqrt(per_text.size)  # 0 in expectation
    assert per_text.std() == pytest.approx(1 / math.sqrt(100), rel=0.05)  # var 1 per token


def write(watermark_id: int, delta: float, length: int = 120, seed: int = 0) -> str:
    """Text from a model with flat logits, watermarked by the KGW processor."""
    processor = KGWScheme().logits_processor(N, watermark_id, delta=delta)
    assert isinstance(processor, PermutationLogitsProcessor)
    generator = torch.Generator().manual_seed(seed)
    tokens = torch.tensor([[1]])
    processor(tokens, torch.zeros(1, N))  # the prompt is the first token
    for _ in range(length):
        scores = processor(tokens, torch.zeros(1, N))
        token = torch.multinomial(torch.softmax(scores, dim=-1), 1, generator=generator)
        tokens = torch.cat([tokens, token], dim=1)
    return " ".join(f"w{t}" for t in tokens[0, 1:].tolist())


def test_text_written_under_one_key_reads_under_it_and_not_under_others():
    verifier = Verifier(word_tokenizer(N), scheme=KGWScheme())
    text = write(watermark_id=2024, delta=4.0)
    own, other = verifier.verify([text, text], [2024, 2025])
    green_share = math.exp(4) / (1 + math.exp(4))  # a flat model's chance of a green token
    assert own == pytest.approx((green_share - 0.5) / 0.5, abs=0.15)
    assert abs(other) < 0.3  # about 3 null standard deviations for 119 tokens
    assert verifier.verify(write(2024, delta=0.0), 2024)[0] == pytest.approx(0, abs=0.3)


def test_settings_are_checked():
    with pytest.raises(ValueError, match="`gamma` must be in"):
        KGWScheme(gamma=1.0)
    with pytest.raises(TypeError, match="`gamma` must be a number"):
        KGWScheme(gamma="0.5")
    with pytest.raises(ValueError, match="no green or no red token"):
        Verifier(word_tokenizer(3), scheme=KGWScheme(gamma=0.1))
    with pytest.raises(ValueError, match="`delta` must be"):
        KGWScheme().logits_processor(N, 1, delta=-1.0)
    assert KGWScheme(gamma=0.25).settings() == {
        "scheme": "kgw",
        "gamma": 0.25,
        "n_gram": 2,
        "vocab_size": None,
    }


def test_gamma_bounds_and_type():
    with pytest.raises(ValueError, match="`gamma` must be in"):
        KGWScheme(gamma=0.0)
    scheme = KGWScheme(gamma=np.float64(0.25))
    assert type(scheme.gamma) is float and scheme.gamma == 0.25


def test_vocabulary_bounds_allow_one_green_and_one_red_token():
    KGWScheme(gamma=0.5).check_vocab_size(2)  # G = 1: one green, one red
    KGWScheme(gamma=0.9).check_vocab_size(10)  # G = 9 = N - 1
    with pytest.raises(ValueError, match="no green or no red token"):
        KGWScheme(gamma=0.4).check_vocab_size(2)  # G = 0


def test_exactly_the_first_g_positions_are_green():
    scheme, n = KGWScheme(gamma=0.25), 12  # G = 3
    bias = scheme.position_bias(n)
    np.testing.assert_array_equal(bias, [2.0] * 3 + [0.0] * 9)  # delta 2 by default
    np.testing.assert_array_equal(scheme.position_bias(n, delta=0.5)[2:4], [0.5, 0.0])
    g = 0.25
    terms = scheme.position_terms(np.array([0, 2, 3, 11]), n)
    green, red = (1 - g) / math.sqrt(g * (1 - g)), -g / math.sqrt(g * (1 - g))
    np.testing.assert_allclose(terms, [green, green, red, red])
    assert terms.dtype == np.float64


@pytest.mark.parametrize("delta", [True, float("inf"), float("nan")])
def test_delta_must_be_a_finite_number(delta):
    with pytest.raises(ValueError, match="`delta` must be"):
        KGWScheme().position_bias(N, delta=delta)
