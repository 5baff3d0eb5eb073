"""Sampling helpers shared by query generation and watermarking."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from transformers import GenerationConfig


def unfiltered_sampling_config(**settings: Any) -> GenerationConfig:
    """A sampling ``GenerationConfig`` with every distribution filter explicitly off.

    transformers applies a global ``top_k=50`` (and a checkpoint may add its own warpers or a
    repetition penalty) unless told otherwise; either would cut the distribution behind the
    caller's back and change the watermark signal. ``settings`` (temperature, top_p,
    max_new_tokens, ...) override the defaults here.
    """
    config = {
        "do_sample": True,
        "num_beams": 1,
        "temperature": 1.0,
        "top_p": 1.0,
        "top_k": 0,
        "typical_p": 1.0,
        "epsilon_cutoff": 0.0,
        "eta_cutoff": 0.0,
        "repetition_penalty": 1.0,
        "no_repeat_ngram_size": 0,
    }
    config.update(settings)
    return GenerationConfig(**config)


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
