"""The relearning audit's slice and fine-tune: the library's GD trainer on a few forget texts."""

from __future__ import annotations

import pytest
import torch

from waterdrum_hf.audits import AuditConfig, relearn, relearning_slice

TEXTS = [
    "A dictionary maps keys to values.",
    "Strings are immutable sequences of characters.",
    "The for statement iterates over the items of a sequence.",
    "A list is a mutable sequence.",
    "A tuple is an immutable sequence.",
]


def test_the_slice_is_the_first_share_of_the_forget_texts_and_never_empty():
    assert relearning_slice(TEXTS, 0.25) == TEXTS[:2]  # ceil(1.25)
    assert relearning_slice(TEXTS, 0.01) == TEXTS[:1]
    assert relearning_slice(TEXTS, 1.0) == TEXTS
    with pytest.raises(ValueError, match="needs the forget set's texts"):
        relearning_slice([], 0.25)
    with pytest.raises(TypeError):
        relearning_slice("one text", 0.25)


def nll(model, tokenizer, texts):
    batch = tokenizer(texts, return_tensors="pt", padding=True)
    labels = batch.input_ids.masked_fill(batch.attention_mask == 0, -100)
    with torch.no_grad():
        return model(**batch, labels=labels).loss.item()


def test_relearning_fits_the_slice_on_a_copy(tiny_model):
    model, tokenizer = tiny_model
    config = AuditConfig(relearn_steps=6, relearn_learning_rate=2e-3, relearn_batch_size=2)
    relearned = relearn(model, tokenizer, TEXTS[:2], config, show_progress=False)
    assert relearned is not model  # the shared model is checked untouched by conftest
    assert nll(relearned, tokenizer, TEXTS[:2]) < 0.7 * nll(model, tokenizer, TEXTS[:2])
    with pytest.raises(ValueError, match="at least one text"):
        relearn(model, tokenizer, [], config)
