"""The frozen reference (PEFT adapter disabled, no second copy), dropout, gradient
checkpointing and bf16 in the unlearning trainers."""

from __future__ import annotations

import copy

import pytest
import torch
from peft import LoraConfig, get_peft_model
from trainer_setup import (
    full_batch,
    lora,
    make_trainer,
    small_model,
)


def parameter_bytes(*models) -> int:
    """Bytes of distinct parameter storage across ``models`` (shared tensors count once)."""
    seen = {}
    for model in models:
        for param in model.parameters() if model is not None else ():
            seen[param.data_ptr()] = param.numel() * param.element_size()
    return sum(seen.values())


def logits_of(model, batch) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits


@pytest.mark.parametrize("trained_adapter", [False, True])
def test_peft_reference_is_the_starting_model_without_a_second_copy(
    trained_adapter, tokenizer, tmp_path
):
    base = small_model(tokenizer)
    base_bytes = parameter_bytes(base)
    full = make_trainer("kl", copy.deepcopy(base), tokenizer, tmp_path / "full")
    assert parameter_bytes(full.model, full.ref_model) == 2 * base_bytes

    model = lora(base, trained=trained_adapter)
    starting = copy.deepcopy(model)
    trainer = make_trainer("kl", model, tokenizer, tmp_path, max_steps=3, learning_rate=1e-2)
    assert trainer.ref_model is None
    assert trainer._ref_adapter == ("ref" if trained_adapter else None)
    assert parameter_bytes(trainer.model) < 1.1 * base_bytes  # base weights once, plus adapters

    batch = full_batch(trainer)["retain"]
    trainer.train()
    assert trainer.state.log_history[0]["loss/retain_kl"] == pytest.approx(0.0, abs=1e-6)
    trainer.model.train()
    reference = trainer.reference_forward(trainer.model, batch)
    assert trainer.model.training  # the reference ran in eval mode, and the mode is restored
    torch.testing.assert_close(reference, logits_of(starting, batch), atol=1e-5, rtol=0)
    assert not torch.allclose(logits_of(trainer.model, batch), reference, atol=1e-3)
    trainable = {n for n, p in trainer.model.named_parameters() if p.requires_grad}
    assert trainable and all(".default." in n for n in trainable)


def test_disable_dropout_zeroes_every_dropout(tokenizer, tmp_path):
    model = get_peft_model(small_model(tokenizer), LoraConfig(r=4, lora_dropout=0.05))
    make_trainer("idknll", model, tokenizer, tmp_path, disable_dropout=True)
    dropouts = [m for m in model.modules() if isinstance(m, torch.nn.Dropout)]
    assert dropouts and all(m.p == 0 for m in dropouts)


def checkpointing_arguments(**kwargs) -> dict:
    """TrainingArguments' checkpointing switch and its keywords, in the installed transformers'
    words: ``activation_checkpointing`` where it knows it (5.24 deprecates the old name),
    ``gradient_checkpointing`` before (5.19)."""
    from transformers import TrainingArguments

    name = (
        "activation_checkpointing"
        if "activation_checkpointing" in TrainingArguments.__dataclass_fields__
        else "gradient_checkpointing"
    )
    return {name: True, f"{name}_kwargs": kwargs}


def test_gradient_checkpointing_with_lora_trains_the_adapter(tokenizer, tmp_path):
    model = lora(small_model(tokenizer))
    trainer = make_trainer(
        "kl",
        model,
        tokenizer,
        tmp_path,
        max_steps=2,
        learning_rate=1e-2,
        **checkpointing_arguments(use_reentrant=True),
    )
    trainer.train()
    b_factors = [p for n, p in model.named_parameters() if "lora_B" in n]
    assert b_factors and all(p.abs().sum() > 0 for p in b_factors)


def test_bf16_run_logs_finite_terms(tokenizer, tmp_path):
    trainer = make_trainer(
        "npo", small_model(tokenizer), tokenizer, tmp_path, max_steps=2, bf16=True
    )
    trainer.train()
    logged = trainer.state.log_history[0]
    assert all(torch.isfinite(torch.tensor(logged[k])) for k in ("loss/forget", "loss/retain_nll"))
