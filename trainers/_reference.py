"""The frozen reference model: a copy of a full model, or the PEFT model itself with its adapter off.

A PEFT model's reference costs no second copy of the base weights. While the trained adapter is
still the identity (a fresh LoRA adapter: every ``B`` is zero), the reference is the model with
all adapters disabled. An adapter that already changes the model (one trained before unlearning
starts) is copied once into a frozen adapter named ``"ref"`` (adapter weights only), as TRL's
``DPOTrainer`` does; an adapter the caller already named ``"ref"`` is used as it is.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

import torch
from peft import LoraConfig, PeftModel, get_peft_model_state_dict, set_peft_model_state_dict
from peft.tuners.lora import LoraLayer
from transformers import Trainer

from waterdrum_hf.trainers._model import load_model
from waterdrum_hf.trainers._upstream import active_adapter, reference_preparer

REFERENCE_ADAPTER = "ref"


def build_reference(
    trainer: Trainer,
    ref_model: str | torch.nn.Module | None,
    quantization_config: Any = None,
    *,
    needed: bool,
) -> tuple[torch.nn.Module | None, str | None]:
    """``(reference model, reference adapter)`` of ``trainer``'s model, prepared for its
    accelerator (DeepSpeed, FSDP or plain); both ``None`` where no reference is ``needed``."""
    if not needed:
        if ref_model is not None:
            warnings.warn(
                f"{type(trainer).__name__} uses no reference model with these settings; "
                "ref_model is not used",
                stacklevel=3,
            )
        return None, None
    if ref_model is None and isinstance(trainer.model, PeftModel):
        return None, reference_adapter(trainer.model)
    if ref_model is None:
        assert trainer.model is not None  # Trainer.__init__ has set the model it was given
        reference = copy_model(trainer.model, "the frozen reference").eval()
    else:
        reference = load_model(ref_model, trainer.args, quantization_config, argument="ref_model")
    reference.requires_grad_(False)
    if trainer.is_deepspeed_enabled:
        return reference_preparer("deepspeed")(reference, trainer.accelerator), None
    if trainer.is_fsdp_enabled:
        return reference_preparer("fsdp")(reference, trainer.accelerator), None
    return trainer.accelerator.prepare_model(reference.eval(), evaluation_mode=True), None


def copy_model(model: torch.nn.Module, purpose: str) -> torch.nn.Module:
    """``copy.deepcopy(model)``, or a ``ValueError`` saying what to pass instead."""
    try:
        return copy.deepcopy(model)
    except Exception as error:  # deepcopy raises whatever an attribute's __deepcopy__ raises
        raise ValueError(
            f"cannot copy the model for {purpose} ({type(error).__name__}: {error}); pass "
            "ref_model= a frozen copy of it (e.g. loaded again with from_pretrained), or train a "
            "peft model, whose reference is the same model with its adapter disabled"
        ) from error


def reference_adapter(model: PeftModel) -> str | None:
    """The adapter to run the reference with (``None``: all adapters disabled); see the module."""
    if REFERENCE_ADAPTER in model.peft_config:
        return REFERENCE_ADAPTER
    name = model.active_adapter
    if _is_identity(model, name):
        return None
    model.add_adapter(REFERENCE_ADAPTER, model.peft_config[name])
    # The adapter's own weights only: the base embeddings are shared, and peft's "auto" would
    # look the base model's config up on the Hub (a warning offline) to decide about them.
    weights = get_peft_model_state_dict(model, adapter_name=name, save_embedding_layers=False)
    set_peft_model_state_dict(model, weights, adapter_name=REFERENCE_ADAPTER)
    model.set_requires_grad(REFERENCE_ADAPTER, requires_grad=False)
    return REFERENCE_ADAPTER


@contextmanager
def peft_reference(model: PeftModel, adapter: str | None) -> Iterator[None]:
    """Run ``model`` as the reference: eval mode (no dropout) and the reference adapter (or none)."""
    was_training = model.training
    model.eval()
    try:
        with active_adapter(model, adapter):
            yield
    finally:
        model.train(was_training)


def _is_identity(model: PeftModel, adapter: str) -> bool:
    """Whether the adapter leaves the model unchanged: plain LoRA with every ``B`` factor zero."""
    config = model.peft_config[adapter]
    if not isinstance(config, LoraConfig) or config.use_dora or config.modules_to_save:
        return False
    for module in model.modules():
        if not isinstance(module, LoraLayer):
            continue
        # A Linear's weight: torch types a submodule's attributes as Tensor | Module.
        factors: list[torch.Tensor] = (
            [cast(torch.Tensor, module.lora_B[adapter].weight)] if adapter in module.lora_B else []
        )
        if adapter in module.lora_embedding_B:
            factors.append(module.lora_embedding_B[adapter])
        if any(factor.any() for factor in factors):
            return False
    return True
