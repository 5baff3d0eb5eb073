"""Private torch plumbing that generation, watermarking, trainers and experiments all share.

Padding (left or right) and the pad-id fallback, the model's device, eval/no-grad with the
caller's modes restored, seeding without touching the global RNG, and unwrapping a
distributed model for generation: each is defined here once, and nothing else in the package
pads, seeds or unwraps on its own. Not public API.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch
from transformers import PreTrainedTokenizerBase


@contextmanager
def seeded(seed: int | None, device: torch.device) -> Iterator[None]:
    """With a seed: fork torch's RNG (CPU and the model's GPU), seed it, restore it after."""
    if seed is None:
        yield
        return
    devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield


@contextmanager
def inference_mode(model: torch.nn.Module) -> Iterator[None]:
    """Eval mode (no dropout) and no autograd; the caller's train and grad modes come back."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        model.train(was_training)


@contextmanager
def unwrapped_for_generation(model: Any, accelerator: Any | None) -> Iterator[Any]:
    """The model to call ``generate`` on: unwrapped from DDP/FSDP/DeepSpeed.

    With an accelerator this is TRL's ``unwrap_model_for_generation`` (which gathers ZeRO-3
    parameters and pauses gradient checkpointing; TRL versions that take them get the model's
    own checkpointing settings back).
    """
    if accelerator is None:
        from accelerate.utils import extract_model_from_parallel

        unwrapped = extract_model_from_parallel(model)
        if unwrapped is not model and _is_zero3(model):
            raise ValueError(
                "A DeepSpeed ZeRO-3 model generates only with its parameters gathered on every "
                "process: pass accelerator= (e.g. trainer.accelerator)."
            )
        yield unwrapped
        return
    from trl.models.utils import unwrap_model_for_generation

    kwargs = {}
    if "gradient_checkpointing_kwargs" in inspect.signature(unwrap_model_for_generation).parameters:
        kwargs["gradient_checkpointing_kwargs"] = _checkpointing_kwargs(accelerator.unwrap_model(model))
    with unwrap_model_for_generation(model, accelerator, **kwargs) as unwrapped:
        yield unwrapped


def _is_zero3(model: Any) -> bool:
    """Whether ``model`` is a DeepSpeed engine partitioning its parameters (ZeRO stage 3)."""
    stage = getattr(model, "zero_optimization_stage", None)
    return callable(stage) and stage() == 3


def _checkpointing_kwargs(model: Any) -> dict[str, Any] | None:
    """The keyword arguments gradient checkpointing was enabled with, to re-enable it alike."""
    for module in model.modules():
        function = getattr(module, "_gradient_checkpointing_func", None)
        if isinstance(function, functools.partial):
            return dict(function.keywords)
    return None


def model_device(model: torch.nn.Module) -> torch.device:
    """Device of the model's first parameter (where its inputs go)."""
    return next(model.parameters()).device


def pad_token_id(tokenizer: PreTrainedTokenizerBase) -> int:
    """The tokenizer's pad token id, else its (first) EOS id; a tokenizer with neither fails."""
    for value in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if isinstance(value, int):
            return value
        if value:  # a list of EOS ids
            return int(value[0])
    raise ValueError("tokenizer has neither a pad token nor an EOS token; set one of them")


def pad_batch(
    batch: Sequence[Sequence[int]], pad_id: int, device: torch.device, *, side: str = "left"
) -> tuple[torch.Tensor, torch.Tensor]:
    """``input_ids`` and ``attention_mask`` of token id lists, padded on ``side``.

    Generation needs left padding (decoder-only models continue at the right edge); scoring
    tokens in place is simplest with right padding.
    """
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    width = max(len(ids) for ids in batch)
    input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, ids in enumerate(batch):
        if len(ids):
            span = slice(width - len(ids), width) if side == "left" else slice(0, len(ids))
            input_ids[row, span] = torch.as_tensor(ids)
            attention_mask[row, span] = 1
    return input_ids.to(device), attention_mask.to(device)
