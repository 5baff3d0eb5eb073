"""The Unigram watermark (a writer only): its green list checked token by token against the
construction, the same list in every context, and text written with it leaning green."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from waterdrum_hf.schemes import UnigramWatermark
from waterdrum_hf.schemes.unigram.processor import UnigramLogitsProcessor

N = 1000


def green_by_hand(watermark_id: int, vocab_size: int, gamma: float) -> set[int]:
    """The construction, token by token: position in the (id,)-seeded permutation < G."""
    permutation = np.random.RandomState([watermark_id]).permutation(vocab_size)
    size = math.floor(gamma * vocab_size)
    return {token for token in range(vocab_size) if permutation[token] < size}


@pytest.mark.parametrize("vocab_size", [4, 17, 1000, 4096])
@pytest.mark.parametrize("gamma", [0.25, 0.5])
def test_green_list_equals_the_construction_by_hand(vocab_size, gamma):
    keys = [0, 7, 2**32 - 1]
    masks = UnigramWatermark(gamma=gamma).green_lists(keys, vocab_size)
    assert masks.shape == (3, vocab_size)
    for key, mask in zip(keys, masks, strict=True):
        assert set(np.flatnonzero(mask).tolist()) == green_by_hand(key, vocab_size, gamma)
        assert mask.sum() == math.floor(gamma * vocab_size)
    if vocab_size > 16:  # (at N = 4, two keys share a list one time in six)
        assert not np.array_equal(masks[0], masks[1])  # each key its own list


def test_processor_adds_delta_to_the_same_green_tokens_in_every_context():
    watermark = UnigramWatermark(gamma=0.5, delta=3.0)
    processor = watermark.logits_processor(N, [11, 22])
    # 2 input rows x 2 samples each, different contexts; the model's vocabulary is padded.
    input_ids = torch.tensor([[1, 2], [5, 9], [3, 3], [999, 0]])
    scores = torch.randn(4, N + 8)
    out = processor(input_ids, scores)
    for row, key in enumerate([11, 11, 22, 22]):
        green = torch.zeros(N + 8)
        green[sorted(green_by_hand(key, N, 0.5))] = 3.0
        assert torch.allclose(out[row], scores[row] + green)
    assert torch.equal(out[:, N:], scores[:, N:])  # padding untouched
    with pytest.raises(ValueError, match="3 sequences cannot be split among 2 ids"):
        processor(input_ids[:3], scores[:3])


def test_settings_are_checked_and_keys_never_shown():
    for bad in ({"gamma": 0.0}, {"gamma": 1.0}, {"gamma": math.nan}, {"delta": -1.0}):
        with pytest.raises(ValueError, match=f"`{next(iter(bad))}` must be"):
            UnigramWatermark(**bad)
    with pytest.raises(TypeError, match="`gamma` must be a number"):
        UnigramWatermark(gamma=True)
    with pytest.raises(ValueError, match="leaves no green token in a vocabulary of 9"):
        UnigramWatermark(gamma=0.1).green_lists(5, 9)
    with pytest.raises(ValueError, match="`watermark_ids` is empty"):
        UnigramWatermark().green_lists([], N)
    processor = UnigramWatermark().logits_processor(N, 123_456_789)
    shown = repr(processor) + repr(processor.settings())
    assert "123456789" not in shown and len(processor.settings()["keys"]) == 1


def test_text_written_with_it_leans_green(tiny_model):
    from waterdrum_hf import generate
    from waterdrum_hf.data import toy_corpus
    from waterdrum_hf.generation.prompting import completion_queries

    model, tokenizer = tiny_model
    vocab_size = tokenizer.vocab_size
    watermark = UnigramWatermark(gamma=0.5, delta=4.0)
    queries = completion_queries(
        toy_corpus(2, max_passages_per_owner=3)["text"], tokenizer, prefix_tokens=8
    )
    green = watermark.green_lists(42, vocab_size)[0]

    def green_share(processor):
        samples = generate(model, tokenizer, queries, num_samples=2, max_new_tokens=32, seed=0,
                           logits_processor=[processor] if processor else None)  # fmt: skip
        ids = [
            t
            for q in samples
            for s in q
            for t in tokenizer(s, add_special_tokens=False)["input_ids"]
        ]
        ids = [t for t in ids if t < vocab_size]
        return float(np.mean(green[ids]))

    marked, plain = green_share(watermark.logits_processor(vocab_size, 42)), green_share(None)
    assert marked > 0.75 and marked > plain + 0.2


def test_settings_are_the_schemes_parameters_as_floats_and_delta_zero_is_allowed():
    watermark = UnigramWatermark(gamma=np.float64(0.25), delta=2)
    assert type(watermark.gamma) is float and type(watermark.delta) is float
    assert watermark.settings() == {"scheme": "unigram", "gamma": 0.25, "delta": 2.0}
    for delta in (0, 0.5):  # no bias at all is a valid (unwatermarked) writer
        assert UnigramWatermark(delta=delta).delta == delta


@pytest.mark.parametrize(
    ("vocab_size", "gamma", "size"), [(2, 0.5, 1), (4, 0.75, 3), (9, 0.999, 8)]
)
def test_the_smallest_vocabulary_and_one_red_token_are_accepted(vocab_size, gamma, size):
    """Two tokens are enough, and a green list of all tokens but one is allowed."""
    watermark = UnigramWatermark(gamma=gamma)
    assert watermark.green_size(vocab_size) == size
    assert watermark.green_lists(3, vocab_size).sum() == size
    assert watermark.logits_processor(vocab_size, 3).vocab_size == vocab_size


class FixedGreen:
    """A writer's green lists that check nothing: the processor's own checks must hold."""

    gamma, delta = 0.5, 1.0

    def green_lists(self, watermark_ids, vocab_size):
        count = 1 if isinstance(watermark_ids, int) else len(watermark_ids)
        return np.ones((count, vocab_size), dtype=bool)

    def settings(self):
        return {"scheme": "fixed"}


@pytest.mark.parametrize(
    ("vocab_size", "ids", "error", "match"),
    [
        (1, 3, ValueError, "`vocab_size` must be >= 2, got 1"),
        ("8", 3, TypeError, "`vocab_size` must be an integer"),
        (8, [2**32], ValueError, r"`watermark_ids\[0\]`"),
        (8, [3, -1], ValueError, r"`watermark_ids\[1\]`"),
    ],
)
def test_the_processor_checks_its_own_arguments(vocab_size, ids, error, match):
    with pytest.raises(error, match=match):
        UnigramWatermark().logits_processor(vocab_size, ids)
    with pytest.raises(error, match=match):
        UnigramLogitsProcessor(FixedGreen(), vocab_size, ids)
    if ids == 3:  # the green size checks the vocabulary itself
        with pytest.raises(error, match=match):
            UnigramWatermark().green_size(vocab_size)


def test_processor_settings_follow_the_vocabulary():
    """The cache digest of a writer changes with everything that decides its perturbation."""
    watermark = UnigramWatermark()
    small, large = watermark.logits_processor(10, 5), watermark.logits_processor(12, 5)
    assert small.settings() != large.settings()
    assert small.settings() == UnigramWatermark().logits_processor(10, 5).settings()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_the_bias_is_added_in_the_scores_dtype(dtype):
    """Half-precision logits get the bias rounded to their dtype, then added in it: what a
    model's own logits would hold, and the same on every device."""
    watermark = UnigramWatermark(gamma=0.5, delta=0.1)
    processor = watermark.logits_processor(N, 7)
    scores = torch.randn(2, N, generator=torch.Generator().manual_seed(0)).to(dtype)
    out = processor(torch.zeros(2, 1, dtype=torch.long), scores)
    green = torch.from_numpy(watermark.green_lists(7, N)[0])
    assert out.dtype == dtype
    expected = torch.where(green, scores + torch.tensor(0.1, dtype=dtype), scores)
    assert torch.equal(out, expected)


def test_the_bias_follows_the_scores_device():
    """On scores of another device (meta: shapes only) the bias goes there too, as on a GPU."""
    processor = UnigramWatermark().logits_processor(N, 7)
    out = processor(torch.zeros((2, 1), dtype=torch.long), torch.zeros(2, N + 3, device="meta"))
    assert out.device.type == "meta" and out.shape == (2, N + 3)
