"""Sampling completions the way the WaterDrum paper does, and the plumbing all generation shares.

Each query is answered ``num_samples`` times by pure ancestral sampling: temperature 1, top-p 1
and *no* top-k by default. transformers would otherwise apply its global ``top_k=50`` (or a
checkpoint's own warpers) behind the caller's back, which changes the watermark signal.

The helpers below (padding, the pad-id fallback, the model's device, eval/no-grad with the
caller's modes restored, unfiltered sampling, seeding without touching the global RNG, the
distributed split/unwrap/gather) are used by :func:`generate` and by watermarking; nothing
else in the package pads or samples on its own.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch
from transformers import (
    GenerationConfig,
    LogitsProcessorList,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from ._progress import progress_bar
from ._validation import check_positive_int, check_string_list
from .prompting import prompt_token_ids


def generate(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    queries: Iterable[str],
    *,
    num_samples: int = 10,
    max_new_tokens: int = 200,
    temperature: float = 1.0,
    top_p: float = 1.0,
    batch_size: int = 16,
    seed: int | None = None,
    show_progress: bool | None = None,
    accelerator: Any | None = None,
    greedy: bool = False,
    logits_processor: Sequence[Any] | None = None,
) -> list[list[str]]:
    """Sample ``num_samples`` completions per query; return only the generated text.

    Queries are tokenised without adding special tokens when they already start with the
    tokenizer's BOS text (chat-templated queries), with them otherwise, and left-padded in
    batches of ``batch_size`` sequences. A query too long to leave room for ``max_new_tokens``
    in the model's context is cut from the left, with one warning per call. The model's
    train/eval mode and the caller's grad mode are restored afterwards; PEFT models work as
    they are.

    Distributed use (e.g. from a ``TrainerCallback``): pass the run's
    ``accelerate.Accelerator``. Every process must call ``generate`` with the same queries;
    each samples its contiguous share (with ``seed + process_index``) on the model unwrapped
    for generation (ZeRO-3 parameters gathered, as TRL does), and every process gets the full,
    ordered result back. A model wrapped for data parallelism (DDP, FSDP) without an
    accelerator is unwrapped and generates all queries on each process.

    Args:
        model: a causal LM (or a ``peft.PeftModel`` wrapping one, or a prepared model).
        tokenizer: its tokenizer; its pad token is used, else its EOS token.
        queries: prompts, e.g. from :func:`waterdrum_hf.completion_queries`.
        num_samples: completions per query.
        max_new_tokens: cap on each completion's length in tokens.
        temperature: sampling temperature (> 0).
        top_p: nucleus mass in (0, 1]; 1 samples from the full distribution.
        batch_size: sequences per forward pass.
        seed: seeds torch for a reproducible call, leaving the global RNG state untouched.
        show_progress: progress bar; ``None`` shows it on a terminal only.
        accelerator: the ``accelerate.Accelerator`` that prepared ``model``, if any.
        greedy: take the most likely token at every step (the paper's ROUGE baseline);
            ``num_samples`` must then be 1, and ``temperature``/``top_p`` do not apply.
        logits_processor: processors run on the logits after the model's (e.g. a model
            owner's own :class:`~waterdrum_hf.WaterfallLogitsProcessor`); one with a
            ``reset(prompt_length=...)`` method is reset before each batch.

    Returns:
        ``out[i][s]``: completion ``s`` of query ``i``, special tokens removed. This is the
        shape :func:`waterdrum_hf.compute_waterdrum` takes as ``predictions``.
    """
    queries = check_string_list(queries, "queries")
    for name, value in [
        ("num_samples", num_samples),
        ("max_new_tokens", max_new_tokens),
        ("batch_size", batch_size),
    ]:
        check_positive_int(value, name)
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
    if greedy and num_samples != 1:
        raise ValueError(f"greedy decoding gives one completion per query: num_samples must be 1, got {num_samples}")
    pad_id = pad_token_id(tokenizer)
    settings = {"num_return_sequences": 1, "max_new_tokens": max_new_tokens, "pad_token_id": pad_id}
    if greedy:
        config = GenerationConfig(
            do_sample=False, num_beams=1, repetition_penalty=1.0, no_repeat_ngram_size=0, **settings
        )
    else:
        config = unfiltered_sampling_config(**settings, temperature=temperature, top_p=top_p)
    processors = list(logits_processor or [])

    processes = 1 if accelerator is None else accelerator.num_processes
    local = queries
    if processes > 1:
        with accelerator.split_between_processes(queries) as share:
            local = list(share)
        if seed is not None:
            seed += accelerator.process_index
    with unwrapped_for_generation(model, accelerator) as unwrapped:
        prompts = _tokenize(local, tokenizer, _max_prompt_tokens(unwrapped, max_new_tokens))
        rows = [prompt for prompt in prompts for _ in range(num_samples)]
        device = model_device(unwrapped)
        completions: list[str] = []
        bar = progress_bar(desc="Generating", total=len(rows), unit="seq", enabled=show_progress)
        with inference_mode(unwrapped), seeded(seed, device), bar:
            for start in range(0, len(rows), batch_size):
                batch = rows[start : start + batch_size]
                input_ids, attention_mask = pad_batch(batch, pad_id, device)
                for processor in processors:
                    if callable(getattr(processor, "reset", None)):
                        processor.reset(prompt_length=input_ids.shape[1])
                output = unwrapped.generate(
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    generation_config=config,
                    logits_processor=LogitsProcessorList(processors),
                )
                completions += tokenizer.batch_decode(
                    output[:, input_ids.shape[1] :], skip_special_tokens=True
                )
                bar.update(len(batch))
    result = [completions[i : i + num_samples] for i in range(0, len(completions), num_samples)]
    if processes > 1:
        from accelerate.utils import gather_object

        result = gather_object(result)
    return result


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


def _max_prompt_tokens(model: PreTrainedModel, max_new_tokens: int) -> int | None:
    """Room left for the prompt in the model's context, or ``None`` if the context is unknown."""
    context = getattr(model.config, "max_position_embeddings", None)
    if context is None:
        return None
    if max_new_tokens >= context:
        raise ValueError(
            f"max_new_tokens ({max_new_tokens}) must be smaller than the model's context "
            f"({context} tokens)"
        )
    return context - max_new_tokens


def _tokenize(
    queries: list[str], tokenizer: PreTrainedTokenizerBase, max_tokens: int | None
) -> list[list[int]]:
    """Token ids per query, cut from the left to ``max_tokens`` (warned once)."""
    prompts = [prompt_token_ids(tokenizer, query) for query in queries]
    empty = [i for i, p in enumerate(prompts) if not p]
    if empty:
        raise ValueError(f"queries{empty[:5]} give no tokens; every query needs at least one")
    too_long = 0 if max_tokens is None else sum(len(p) > max_tokens for p in prompts)
    if too_long:
        warnings.warn(
            f"{too_long} of {len(prompts)} queries exceed the {max_tokens} tokens left in the "
            "model's context for the prompt; they were cut from the left",
            stacklevel=3,
        )
        prompts = [p[-max_tokens:] for p in prompts]
    return prompts
