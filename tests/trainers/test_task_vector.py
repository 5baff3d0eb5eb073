"""TaskVector: the arithmetic (full and LoRA) and the trainer that negates its fine-tuning."""

from __future__ import annotations

import copy

import pytest
import torch
from peft import PeftModel
from trainer_setup import (
    lora,
    make_trainer,
    perturbed,
    small_model,
)
from transformers import (
    TrainerCallback,
)

from waterdrum_hf import trainers


def effective_weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Weights by plain parameter name; for LoRA ``W + (lora_alpha / r) * B @ A``, by hand."""
    if not isinstance(model, PeftModel):
        return {name: param.detach().clone() for name, param in model.named_parameters()}
    config = model.peft_config["default"]
    inner = model.base_model.model
    weights = {
        name.replace(".base_layer", ""): param.detach().clone()
        for name, param in inner.named_parameters()
        if "lora_" not in name
    }
    for name, module in inner.named_modules():
        if hasattr(module, "lora_A") and "default" in module.lora_A:
            change = module.lora_B["default"].weight @ module.lora_A["default"].weight
            weights[f"{name}.weight"] += config.lora_alpha / config.r * change.detach()
    return weights


def assert_task_vector(result, original_weights, finetuned_weights, alpha):
    result_weights = effective_weights(result)
    assert result_weights.keys() == original_weights.keys()
    for name, weight in result_weights.items():
        orig, tuned = original_weights[name], finetuned_weights[name]
        torch.testing.assert_close(weight, orig - alpha * (tuned - orig), atol=1e-5, rtol=0)


@pytest.mark.parametrize("kind", ["full", "lora"])
def test_task_vector_is_the_formula_and_linear_in_alpha(kind, tokenizer):
    original = small_model(tokenizer)
    if kind == "lora":  # an adapter that already changes the model, so B0 A0 != 0 counts
        original = lora(original, trained=True)
    finetuned = perturbed(original)
    before = effective_weights(original), effective_weights(finetuned)
    results = {alpha: trainers.apply_task_vector(original, finetuned, alpha) for alpha in (0, 1, 3)}
    for alpha, result in results.items():
        assert not isinstance(result, PeftModel)
        assert_task_vector(result, *before, alpha)
    r0, r1, r3 = (effective_weights(results[a]) for a in (0, 1, 3))
    for name in r0:
        torch.testing.assert_close(
            r3[name] - r0[name], 3 * (r1[name] - r0[name]), atol=1e-5, rtol=0
        )
    # The inputs are untouched.
    for weights, model in zip(before, (original, finetuned), strict=True):
        for name, weight in effective_weights(model).items():
            assert torch.equal(weight, weights[name])


class FinalModel(TrainerCallback):
    """Keeps a copy of the fine-tuned model as training ends."""

    def on_train_end(self, args, state, control, model=None, **kwargs):
        self.model = copy.deepcopy(model)


@pytest.mark.parametrize("kind", ["full", "lora"])
def test_task_vector_trainer_negates_its_fine_tuning(kind, tokenizer, tmp_path):
    original = small_model(tokenizer)
    if kind == "lora":
        original = lora(original)
    original_weights = effective_weights(original)
    final = FinalModel()
    trainer = make_trainer(
        "taskvector",
        original,
        tokenizer,
        tmp_path,
        retain=None,
        max_steps=3,
        learning_rate=1e-2,
        callbacks=[final],
    )
    trainer.train()
    assert trainer.original_model is original
    for name, weight in effective_weights(original).items():
        assert torch.equal(weight, original_weights[name])
    finetuned_weights = effective_weights(final.model)
    assert any(
        not torch.allclose(finetuned_weights[n], original_weights[n]) for n in original_weights
    )
    assert_task_vector(trainer.model, original_weights, finetuned_weights, trainer.args.alpha)
