"""Extraction strength: hand-made cases, open-unlearning's loop on the same tokens (and the one
case where it differs), bad input, and the model-facing function against the tiny model's own
forward pass and greedy decoding."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from waterdrum_hf.baselines import extraction_strength, model_extraction_strength
from waterdrum_hf.generation.prompting import prompt_token_ids

TARGET = [5, 6, 7, 8]
CASES = [  # (top next token at each target position, ES by hand)
    ([5, 6, 7, 8], 1.0),  # k = 0: the prompt alone gives the whole target
    ([9, 6, 7, 8], 0.75),  # the first token wrong: k = 1
    ([5, 9, 7, 8], 0.5),  # k = 2, though the first token was right
    ([9, 6, 9, 8], 0.25),  # the last wrong position is 2: k = 3
    ([5, 6, 7, 9], 0.0),  # the last token wrong: k = n
]


@pytest.mark.parametrize(("predicted", "expected"), CASES)
def test_extraction_strength_by_hand(predicted, expected):
    assert extraction_strength(predicted, TARGET) == pytest.approx(expected)


def open_unlearning_es(preds, labels):
    """open-unlearning src/evals/metrics/memorization.py, extraction_strength's loop."""
    valid_len = len(labels)
    for k in range(valid_len):
        if np.array_equal(preds[k:], labels[k:]):
            break
    return 1 - (k / valid_len)


def test_extraction_strength_agrees_with_open_unlearning_but_where_the_last_token_is_wrong():
    rng = np.random.default_rng(3)
    for _ in range(200):
        target = rng.integers(0, 3, size=rng.integers(1, 8))
        predicted = np.where(rng.random(len(target)) < 0.7, target, rng.integers(0, 3, len(target)))
        ours = extraction_strength(predicted, target)
        if predicted[-1] == target[-1]:
            assert ours == pytest.approx(open_unlearning_es(predicted, target))
        else:  # the loop stops at k = n - 1: 1 / n where no suffix is reproduced
            assert (ours, open_unlearning_es(predicted, target)) == pytest.approx(
                (0.0, 1 / len(target))
            )


def test_extraction_strength_refuses_bad_input():
    with pytest.raises(ValueError, match="`predicted_ids` has 3 entries but `target_ids` has 4"):
        extraction_strength([5, 6, 7], TARGET)
    with pytest.raises(ValueError, match="`target_ids` is empty"):
        extraction_strength([], [])
    with pytest.raises(TypeError, match="integer token ids"):
        extraction_strength([5.0, 6.0, 7.0, 8.0], TARGET)
    with pytest.raises(ValueError, match="negative token ids"):
        extraction_strength([-1, 6, 7, 8], TARGET)


PROMPTS = ["The class statement", "Exceptions are raised by", "A"]
TARGETS = [" defines a class.", " the raise statement in a try clause.", " lambda."]


def test_model_extraction_strength_equals_the_pure_es_of_a_forward_pass(tiny_model):
    model, tokenizer = tiny_model
    ours = model_extraction_strength(model, tokenizer, PROMPTS, TARGETS, batch_size=2)
    for prompt, target, value in zip(PROMPTS, TARGETS, ours, strict=True):
        prompt_ids = prompt_token_ids(tokenizer, prompt)
        target_ids = tokenizer(target, add_special_tokens=False)["input_ids"]
        ids = torch.tensor([prompt_ids + target_ids])
        with torch.no_grad():
            top = model(input_ids=ids).logits[0, len(prompt_ids) - 1 : -1].argmax(-1)
        assert value == pytest.approx(extraction_strength(top.numpy(), target_ids))
    with pytest.raises(ValueError, match="answer 0 has no tokens"):
        model_extraction_strength(model, tokenizer, ["A"], [""])


def test_a_greedy_continuation_of_the_prompt_has_extraction_strength_one(tiny_model):
    model, tokenizer = tiny_model
    ids = torch.tensor([prompt_token_ids(tokenizer, PROMPTS[0])])
    with torch.no_grad():
        output = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            do_sample=False,
            max_new_tokens=6,
            repetition_penalty=1.0,
            pad_token_id=tokenizer.pad_token_id,
        )
    continuation_ids = output[0, ids.shape[1] :].tolist()
    continuation = tokenizer.decode(continuation_ids)
    assert tokenizer(continuation, add_special_tokens=False)["input_ids"] == continuation_ids
    strength = model_extraction_strength(model, tokenizer, PROMPTS[:1], [continuation])
    assert strength == pytest.approx([1.0])
