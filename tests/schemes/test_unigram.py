"""The Unigram watermark (a writer only): its green list checked token by token against the
construction, the same list in every context, and text written with it leaning green."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from waterdrum_hf.schemes import UnigramWatermark

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
    with pytest.raises(ValueError, match="leaves no green or no red token"):
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
