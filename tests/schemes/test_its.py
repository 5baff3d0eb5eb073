"""ITS (inverse transform sampling), the model owner's watermark of the dilution study: the key
against its construction, the writer's token against a brute-force inverse transform, its
marginal against p over keys, and its test statistic on the tiny model's written text."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import LogitsProcessorList

from waterdrum_hf.schemes.its.processor import ITSLogitsProcessor
from waterdrum_hf.schemes.its.scheme import DOMAIN, ITSWatermark

KEY = 424242


def inverse_transform(probs: np.ndarray, order: np.ndarray, u: float) -> int:
    """Brute force: walk the vocabulary in the key's order until the probability reaches u."""
    total = 0.0
    for token in order:
        total += probs[token]
        if total >= u:
            return int(token)
    raise AssertionError("probabilities sum below u")


def test_key_is_numpys_generator_seeded_with_the_id_and_domain():
    uniforms, order = ITSWatermark(key_length=5).key(KEY, 11)
    rng = np.random.default_rng((KEY, DOMAIN))
    np.testing.assert_array_equal(order, rng.permutation(11))
    np.testing.assert_array_equal(uniforms, rng.random(5))
    other, other_order = ITSWatermark(key_length=5).key(KEY + 1, 11)
    assert not np.array_equal(uniforms, other)  # each key its own sequence


def test_writer_leaves_exactly_the_inverse_transform_token():
    """Catches: ranks read in token order instead of the key's, the wrong u index (no shift,
    no wrap at n, positions counted from the start of the padded input), probabilities over
    the padded vocabulary."""
    vocab, n = 7, 3
    watermark = ITSWatermark(key_length=n)
    uniforms, order = watermark.key(KEY, vocab)
    processor = watermark.logits_processor(vocab, KEY)
    rng = np.random.default_rng(1)
    prompt = torch.ones((6, 4), dtype=torch.long)
    processor.reset(prompt_length=4)
    for step in range(5):  # 3 and 4 wrap around the key
        scores = torch.from_numpy(rng.normal(0, 1.5, (6, vocab + 2)))  # padded vocabulary
        out = processor(torch.cat([prompt, torch.zeros((6, step), dtype=torch.long)], 1), scores)
        probs = torch.softmax(scores[:, :vocab], -1).numpy()
        assert processor.shifts is not None
        for row in range(6):
            u = uniforms[(int(processor.shifts[row]) + step) % n]
            assert out[row, inverse_transform(probs[row], order, u)] == 0
            assert torch.isinf(out[row]).sum() == vocab + 1  # the one token left


def test_writer_is_distortion_free_over_keys():
    """Chi-square of the chosen tokens over 6000 keys against p: 4 degrees of freedom, so 28
    is exceeded by chance once in ~70000; the rank after the inverse transform's, or the
    cumulative sum of logits instead of probabilities, reads in the hundreds or more."""
    vocab, keys = 5, 6000
    p = np.array([0.5, 0.25, 0.15, 0.07, 0.03])
    scores = torch.log(torch.from_numpy(p)).unsqueeze(0)
    watermark = ITSWatermark(key_length=4)
    chosen = [
        int(watermark.logits_processor(vocab, key)(torch.zeros((1, 2), dtype=torch.long), scores)
            .argmax())
        for key in range(keys)
    ]  # fmt: skip
    counts = np.bincount(chosen, minlength=vocab)
    chi_square = float(((counts - keys * p) ** 2 / (keys * p)).sum())
    assert chi_square < 28


def test_score_is_the_best_shift_of_the_correlation_by_hand():
    vocab, n = 13, 6
    watermark = ITSWatermark(key_length=n)
    uniforms, order = watermark.key(KEY, vocab)
    tokens = [3, 12, 0, 7, 7, 5, 1, 9, 2]
    rank = {int(token): j for j, token in enumerate(order)}
    by_shift = [
        12
        * np.mean(
            [
                (uniforms[(s + i) % n] - 0.5) * (rank[t] / (vocab - 1) - 0.5)
                for i, t in enumerate(tokens)
            ]
        )  # fmt: skip
        for s in range(n)
    ]
    found = watermark.score([*tokens[:4], vocab + 3, *tokens[4:]], KEY, vocab)  # one dropped
    assert found == pytest.approx(max(by_shift))


def test_tiny_model_text_reads_high_under_its_key_and_at_the_null_otherwise(tiny_model):
    """Twelve 48-token samples of the tiny model under the model owner's key: each reads above
    every one of 30 keys that wrote nothing; plain samples read under the same key inside
    the spread of those other keys."""
    model, tokenizer = tiny_model
    vocab = tokenizer.vocab_size
    watermark = ITSWatermark()
    prompt = tokenizer(["The history of the city"], return_tensors="pt")
    others = range(1000, 1030)

    def sample(processors: list) -> list[np.ndarray]:
        torch.manual_seed(0)
        out = model.generate(
            **prompt, do_sample=True, max_new_tokens=48, min_new_tokens=48,
            num_return_sequences=12, logits_processor=LogitsProcessorList(processors),
            pad_token_id=tokenizer.eos_token_id,
        )  # fmt: skip
        return [row.numpy() for row in out[:, prompt["input_ids"].shape[1] :]]

    written = sample([watermark.logits_processor(vocab, KEY)])
    assert len({tuple(row) for row in written}) > 1  # the shifts make the samples differ
    for tokens in written:
        null = [watermark.score(tokens, key, vocab) for key in others]
        assert watermark.score(tokens, KEY, vocab) > max(null)
    for tokens in sample([]):
        null = np.array([watermark.score(tokens, key, vocab) for key in others])
        assert watermark.score(tokens, KEY, vocab) < null.mean() + 4 * null.std()


def test_reset_draws_new_shifts_and_sets_where_generation_starts():
    vocab, n = 9, 4
    watermark = ITSWatermark(key_length=n)
    uniforms, order = watermark.key(KEY, vocab)
    processor = watermark.logits_processor(vocab, KEY)
    scores = torch.from_numpy(np.random.default_rng(2).normal(0, 1, (1, vocab)))
    probs = torch.softmax(scores, -1).numpy()[0]
    torch.manual_seed(0)
    for prompt_length, length in [(3, 5), (5, 5), (1, 8)]:
        processor.reset(prompt_length=prompt_length)
        out = processor(torch.zeros((1, length), dtype=torch.long), scores)
        u = uniforms[(int(processor.shifts[0]) + length - prompt_length) % n]
        assert int(out.argmax()) == inverse_transform(probs, order, u)
    processor.reset()  # the prompt length from the next call
    processor(torch.zeros((1, 6), dtype=torch.long), scores)
    out = processor(torch.zeros((1, 7), dtype=torch.long), scores)
    assert int(out.argmax()) == inverse_transform(
        probs, order, uniforms[(int(processor.shifts[0]) + 1) % n]
    )


class AnyKey:
    """A writer's key that checks nothing: the processor's own checks must hold."""

    key_length = 4

    def key(self, watermark_id, vocab_size):
        return np.full(self.key_length, 0.5), np.arange(vocab_size)

    def settings(self):
        return {"scheme": "any"}


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: ITSWatermark(key_length=0), ValueError, r"`key_length` must be >= 1"),
        (lambda: ITSWatermark(key_length=2.5), TypeError, r"`key_length` must be an integer"),
        (lambda: ITSWatermark().key(2**32, 10), ValueError, r"`watermark_id` must be in 0\.\.2"),
        (lambda: ITSWatermark().key(-1, 10), ValueError, r"`watermark_id` must be in 0\.\.2"),
        (lambda: ITSWatermark().key(5, 1), ValueError, r"`vocab_size` must be >= 2, got 1"),
        (lambda: ITSWatermark().key(5, "9"), TypeError, r"`vocab_size` must be an integer"),
        (lambda: ITSWatermark().logits_processor(10, True), TypeError, r"integer watermark id"),
        (lambda: ITSWatermark().logits_processor(1, 5), ValueError, r"`vocab_size` must be"),
        (lambda: ITSWatermark().score([12, 13], 5, 10), ValueError, r"no token of the vocab"),
        (lambda: ITSWatermark().score([10, -1], 5, 10), ValueError, r"no token of the vocab"),
        (lambda: ITSLogitsProcessor(AnyKey(), 1, 5), ValueError, r"`vocab_size` must be >= 2"),
        (lambda: ITSLogitsProcessor(AnyKey(), 9, 2**32), ValueError, r"`watermark_id` must be"),
        (lambda: ITSLogitsProcessor(AnyKey(), 9, "5"), TypeError, r"`watermark_id` must be an"),
    ],
)
def test_bad_input_gets_one_clear_line(make, error, match):
    with pytest.raises(error, match=match) as raised:
        make()
    assert "\n" not in str(raised.value)


def test_the_key_is_never_shown():
    processor = ITSWatermark().logits_processor(50, KEY)
    assert str(KEY) not in repr(processor)
    assert str(KEY) not in str(processor.settings())
    assert processor.settings()["scheme"] == "its"


def test_settings_key_length_and_the_smallest_vocabulary():
    watermark = ITSWatermark(key_length=np.int64(8))
    assert type(watermark.key_length) is int
    assert watermark.settings() == {"scheme": "its", "key_length": 8}
    uniforms, order = watermark.key(KEY, 2)  # two tokens are enough
    assert uniforms.shape == (8,) and sorted(order) == [0, 1]
    processor = watermark.logits_processor(2, KEY)
    out = processor(torch.zeros((1, 1), dtype=torch.long), torch.zeros(1, 2))
    assert sorted(out[0].tolist()) == [-np.inf, 0.0]
    assert processor.settings() != watermark.logits_processor(3, KEY).settings()


def test_shifts_are_none_until_a_call_and_after_a_reset():
    processor = ITSWatermark(key_length=4).logits_processor(9, KEY)
    assert processor.shifts is None
    processor(torch.zeros((3, 2), dtype=torch.long), torch.zeros(3, 9))
    assert processor.shifts is not None and processor.shifts.shape == (3,)
    processor.reset()
    assert processor.shifts is None


def test_the_writer_keeps_to_the_scores_device():
    """On scores of another device (meta: shapes only) every tensor the writer builds goes
    there too, as on a GPU."""
    processor = ITSWatermark(key_length=4).logits_processor(9, KEY)
    scores = torch.zeros(2, 11, device="meta")
    out = processor(torch.zeros((2, 3), dtype=torch.long, device="meta"), scores)
    assert out.device.type == "meta" and out.shape == (2, 11)
