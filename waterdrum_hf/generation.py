"""Sampling completions the way the WaterDrum paper does.

Each query is answered ``num_samples`` times by pure ancestral sampling: temperature 1, top-p 1
and *no* top-k by default. transformers would otherwise apply its global ``top_k=50`` (or a
checkpoint's own warpers) behind the caller's back, which changes the watermark signal.

:func:`unfiltered_sampling_config` is the one sampling configuration of the package (the
paraphraser uses it too); the torch plumbing (padding, pad id, device, modes, seeding,
unwrapping) lives in :mod:`waterdrum_hf._torch_plumbing`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from transformers import (
    GenerationConfig,
    LogitsProcessorList,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from waterdrum_hf._progress import progress_bar
from waterdrum_hf._torch_plumbing import (
    inference_mode,
    model_device,
    pad_batch,
    pad_token_id,
    seeded,
    unwrapped_for_generation,
)
from waterdrum_hf._validation import check_positive_int, check_string_list
from waterdrum_hf.prompting import prompt_token_ids


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
        raise ValueError(
            f"greedy decoding gives one completion per query: num_samples must be 1, got {num_samples}"
        )
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
