"""Sampling completions the way the WaterDrum paper does (section 5 of the reference).

Each query is answered ``num_samples`` times by pure ancestral sampling: temperature 1, top-p 1
and *no* top-k by default. transformers would otherwise apply its global ``top_k=50`` (or a
checkpoint's own warpers) behind the caller's back, which changes the watermark signal.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from ._progress import progress_bar
from ._sampling import seeded, unfiltered_sampling_config
from ._validation import check_string_list
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
) -> list[list[str]]:
    """Sample ``num_samples`` completions per query; return only the generated text.

    Queries are tokenised without adding special tokens when they already start with the
    tokenizer's BOS text (chat-templated queries), with them otherwise, and left-padded in
    batches of ``batch_size`` sequences. A query too long to leave room for ``max_new_tokens``
    in the model's context is cut from the left, with one warning per call. The model's
    train/eval mode and the caller's grad mode are restored afterwards; PEFT models work as
    they are.

    Args:
        model: a causal LM (or a ``peft.PeftModel`` wrapping one).
        tokenizer: its tokenizer; its pad token is used, else its EOS token.
        queries: prompts, e.g. from :func:`waterdrum_hf.completion_queries`.
        num_samples: completions per query.
        max_new_tokens: cap on each completion's length in tokens.
        temperature: sampling temperature (> 0).
        top_p: nucleus mass in (0, 1]; 1 samples from the full distribution.
        batch_size: sequences per forward pass.
        seed: seeds torch for a reproducible call, leaving the global RNG state untouched.
        show_progress: progress bar; ``None`` shows it on a terminal only.

    Returns:
        ``out[i][s]``: completion ``s`` of query ``i``, special tokens removed.
    """
    queries = check_string_list(queries, "queries")
    for name, value in [
        ("num_samples", num_samples),
        ("max_new_tokens", max_new_tokens),
        ("batch_size", batch_size),
    ]:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
    pad_id = (
        tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    )
    if pad_id is None:
        raise ValueError("tokenizer has neither a pad token nor an EOS token; set one of them")

    prompts = _tokenize(queries, tokenizer, _max_prompt_tokens(model, max_new_tokens))
    config = unfiltered_sampling_config(
        temperature=temperature,
        top_p=top_p,
        num_return_sequences=1,
        max_new_tokens=max_new_tokens,
        pad_token_id=pad_id,
    )
    rows = [prompt for prompt in prompts for _ in range(num_samples)]
    device = next(model.parameters()).device
    completions: list[str] = []
    bar = progress_bar(desc="Generating", total=len(rows), unit="seq", enabled=show_progress)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad(), seeded(seed, device), bar:
            for start in range(0, len(rows), batch_size):
                batch = rows[start : start + batch_size]
                input_ids, attention_mask = _left_pad(batch, pad_id, device)
                output = model.generate(
                    input_ids=input_ids, attention_mask=attention_mask, generation_config=config
                )
                completions += tokenizer.batch_decode(
                    output[:, input_ids.shape[1] :], skip_special_tokens=True
                )
                bar.update(len(batch))
    finally:
        model.train(was_training)
    return [completions[i : i + num_samples] for i in range(0, len(completions), num_samples)]


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


def _left_pad(
    batch: list[list[int]], pad_id: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(ids) for ids in batch)
    input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, ids in enumerate(batch):
        if ids:
            input_ids[row, width - len(ids) :] = torch.tensor(ids)
            attention_mask[row, width - len(ids) :] = 1
    return input_ids.to(device), attention_mask.to(device)
