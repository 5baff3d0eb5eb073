"""Sampling completions the way the WaterDrum paper does.

Each query is answered ``num_samples`` times by pure ancestral sampling: temperature 1, top-p 1
and *no* top-k by default. transformers would otherwise apply its global ``top_k=50`` (or a
checkpoint's own warpers) behind the caller's back, which changes the watermark signal.

How to sample is a :class:`~waterdrum_hf.generation.sampling.SamplingConfig`; the torch plumbing
(padding, pad id, device, modes, seeding, unwrapping) lives in
:mod:`waterdrum_hf.utils.torch_plumbing`.

transformers' continuous batching (``model.generate_batch``, 5.23) is not offered: it takes no
user logits processors (a model owner's watermark) and draws from its own seed, and on the
tiny model on a CPU it gave 357 tokens/s against 3,034 for :func:`generate` (160 samples of
48 tokens, one thread).
"""

from __future__ import annotations

import copy
import inspect
import logging
import re
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import torch
from transformers import (
    GenerationConfig,
    LogitsProcessorList,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)
from transformers.cache_utils import DynamicCache, DynamicLayer
from transformers.modeling_outputs import CausalLMOutputWithPast

from waterdrum_hf.generation.prompting import prompt_token_ids
from waterdrum_hf.generation.sampling import PROMPT_BUCKET, SamplingConfig
from waterdrum_hf.utils.progress import progress_bar
from waterdrum_hf.utils.torch_plumbing import (
    GenerativeModel,
    free_memory,
    inference_mode,
    is_out_of_memory,
    model_device,
    pad_batch,
    pad_token_id,
    release_cached_memory,
    rng_state,
    seeded,
    set_rng_state,
    unwrapped_for_generation,
)
from waterdrum_hf.utils.validation import check_string_list

logger = logging.getLogger(__name__)

CPU_BATCH_SIZE = 64
"""Sequences per batch of ``batch_size="auto"`` on a CPU (measured: see
``benchmarks/generation_speed.py``)."""

CACHE_KEYWORD = (
    "cache" if "cache" in CausalLMOutputWithPast.__dataclass_fields__ else "past_key_values"
)
"""transformers' name for the KV cache in a model's outputs and in ``generate``'s keywords:
``cache`` from 5.24 (which deprecates ``past_key_values``), ``past_key_values`` before."""

AUTO_BATCH_SIZE_LIMIT = 1024
"""Most sequences per batch of ``batch_size="auto"`` on a GPU: past this, rows that finished
early and padding cost more than the larger batch saves."""


def generate(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    queries: Iterable[str],
    sampling: SamplingConfig | None = None,
    *,
    show_progress: bool | None = None,
    accelerator: Any | None = None,
    logits_processor: Sequence[Any] | None = None,
    **settings: Any,
) -> list[list[str]]:
    """Sample ``num_samples`` completions per query; return only the generated text.

    Queries are tokenised without adding special tokens when they already start with the
    tokenizer's BOS text (chat-templated queries), with them otherwise, and left-padded in
    batches of ``batch_size`` sequences. A query too long to leave room for ``max_new_tokens``
    in the model's context is cut from the left, with one warning per call. The model's
    train/eval mode and the caller's grad mode are restored afterwards; PEFT models work as
    they are.

    Batch size: ``"auto"`` takes the largest batch the device's free memory holds (estimated
    from the model's KV cache, logits and prompt activations; at most
    ``AUTO_BATCH_SIZE_LIMIT``) on a GPU, and ``CPU_BATCH_SIZE`` on a CPU (less if RAM is
    short). If a batch runs out of memory anyway, it is halved and retried with the random
    state rewound, as ``accelerate.utils.find_executable_batch_size`` does, and the smaller
    size is kept. Samples depend on the batches they were drawn in, so a given seed
    reproduces a result only with the same batch size: pass an int for results that must
    not depend on the hardware (an int is never changed; out of memory then raises).

    Shared prefill: a query's samples usually share a batch, and with ``shared_prefill`` its
    prompt (all but its last token) runs through the model once, and the KV cache is copied
    to each sample before sampling. This gives the samples of transformers' plain ``generate``
    on the same batches (the same seed gives the same completions up to floating-point
    rounding), for less prompt compute. It applies where the model keeps a plain dynamic KV
    cache (e.g. Llama, Qwen, Mistral without sliding window); other models take the plain path.

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
        sampling: how to sample (:class:`SamplingConfig`: samples per query, length,
            temperature, top-p, greedy, batch size, seed, shared prefill).
        show_progress: progress bar; ``None`` shows it on a terminal only.
        accelerator: the ``accelerate.Accelerator`` that prepared ``model``, if any.
        logits_processor: processors run on the logits after the model's (e.g. a model
            owner's own :class:`~waterdrum_hf.WaterfallLogitsProcessor`); one with a
            ``reset(prompt_length=...)`` method is reset before each batch.
        **settings: :class:`SamplingConfig` fields, a shorthand for ``sampling`` (e.g.
            ``generate(model, tokenizer, queries, num_samples=10, seed=0)``).

    Returns:
        ``out[i][s]``: completion ``s`` of query ``i``, special tokens removed. This is the
        shape :func:`waterdrum_hf.waterdrum_metrics` takes as ``predictions``.
    """
    if sampling is None:
        sampling = SamplingConfig(**settings)
    elif settings:
        raise TypeError(f"pass {sorted(settings)} inside `sampling`, not beside it.")
    queries = check_string_list(queries, "queries")
    seed, processes = sampling.seed, 1 if accelerator is None else accelerator.num_processes
    if accelerator is not None and processes > 1:
        with accelerator.split_between_processes(queries) as share:
            queries = list(share)
        if seed is not None:
            seed += accelerator.process_index
    with unwrapped_for_generation(model, accelerator) as unwrapped:
        completions = _sample_all(
            unwrapped,
            tokenizer,
            queries,
            replace(sampling, seed=seed),
            list(logits_processor or []),
            show_progress,
        )
    size = sampling.num_samples
    result = [completions[i : i + size] for i in range(0, len(completions), size)]
    if processes > 1:
        from accelerate.utils import gather_object

        result = gather_object(result)
    return result


def _sample_all(
    model: GenerativeModel,
    tokenizer: PreTrainedTokenizerBase,
    queries: list[str],
    sampling: SamplingConfig,
    processors: list[Any],
    show_progress: bool | None,
) -> list[str]:
    """Every sample of every query, in order, in batches (halved on out of memory with
    ``batch_size="auto"``)."""
    pad_id = pad_token_id(tokenizer)
    config = sampling.generation_config(pad_id)
    prompts = _tokenize(queries, tokenizer, _max_prompt_tokens(model, sampling.max_new_tokens))
    owners = [query for query in range(len(prompts)) for _ in range(sampling.num_samples)]
    device = model_device(model)
    automatic = sampling.batch_size == "auto"
    size = (
        auto_batch_size(model, max(map(len, prompts), default=1), sampling.max_new_tokens, device)
        if automatic
        else int(sampling.batch_size)
    )
    static = _uses_static_cache(model, sampling.cache, device)
    if static:
        config = _static_cache_config(config, sampling.compile_backend, device)
    share_prefill = (
        not static
        and sampling.shared_prefill
        and sampling.num_samples > 1
        and _has_plain_kv_cache(model)
    )
    graphs_before = compiled_graphs()
    completions: list[str] = []
    bar = progress_bar(desc="Generating", total=len(owners), unit="seq", enabled=show_progress)
    with inference_mode(model), seeded(sampling.seed, device), bar, _quiet_compiler(static):
        start = 0
        while start < len(owners):
            batch = owners[start : start + size]
            # The static path fills every batch to one size: one shape, one compiled graph.
            rows = batch + batch[-1:] * (min(size, len(owners)) - len(batch)) if static else batch
            before = rng_state(device) if automatic else None
            try:
                new_tokens = _sample_batch(
                    model,
                    [prompts[query] for query in rows],
                    batch if share_prefill else None,
                    config,
                    processors,
                    pad_id,
                    device,
                    multiple=PROMPT_BUCKET if static else 1,
                )[: len(batch)]
            except Exception as error:
                if before is None or not (len(batch) > 1 and is_out_of_memory(error)):
                    raise  # `before` is kept with batch_size="auto" alone
                # Out of memory: retry with half (the error is gone).
                set_rng_state(before, device)
                release_cached_memory()
                size = len(batch) // 2
                logger.info("Out of memory: generating %d sequences per batch from now on", size)
                continue
            completions += tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
            start += len(batch)
            bar.update(len(batch))
    if static:
        logger.info(
            "Static KV cache: %d graphs compiled for %d sequences in batches of %d",
            compiled_graphs() - graphs_before,
            len(owners),
            size,
        )
    return completions


COMPILER_NOTICES = (
    "TensorFloat32 tensor cores for float32 matrix multiplication available but not enabled",
    "`torch.jit.script_method` is deprecated",
    "The CUDA Graph is empty",
)
"""What torch's compiler says while the static path compiles, none of it the caller's to act on:
a float32-matmul hint for models that run in bf16 (inductor, on a GPU with TF32), a
deprecation inside torch's own imports (torch 2.11's inductor imports ``torch.utils.mkldnn``),
and the empty CUDA graph that ``reduce-overhead`` captures for a compiled region without
compute (a reshape between graph breaks; pytorch/pytorch#149653), seen on an H200."""


@contextmanager
def _quiet_compiler(static: bool) -> Iterator[None]:
    """Drop :data:`COMPILER_NOTICES` while the static path compiles (nothing else)."""
    with warnings.catch_warnings():
        if static:
            for notice in COMPILER_NOTICES:
                warnings.filterwarnings("ignore", re.escape(notice))
        yield


def compiled_graphs() -> int:
    """Graphs ``torch.compile`` has compiled in this process so far (torch's own count): a
    warm static path adds none."""
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def _uses_static_cache(model: GenerativeModel, cache: str, device: torch.device) -> bool:
    """Whether to decode with a static, compiled KV cache: ``cache="static"`` (refused for a
    model that cannot compile whole), or ``"auto"`` on CUDA for a model that can."""
    if cache == "dynamic":
        return False
    base = model.get_base_model() if callable(getattr(model, "get_base_model", None)) else model
    supported = bool(getattr(base, "_can_compile_fullgraph", False)) and not getattr(
        base.config, "is_encoder_decoder", False
    )
    if cache == "static" and not supported:
        raise ValueError(
            f"{type(base).__name__} does not support a static KV cache (transformers cannot "
            "compile it whole): sample with cache='dynamic' or 'auto'."
        )
    return supported and (cache == "static" or device.type == "cuda")


def _static_cache_config(
    config: GenerationConfig, backend: str, device: torch.device
) -> GenerationConfig:
    """``config`` with a static KV cache, whose decoding step transformers compiles with
    ``backend`` (CUDA graphs with inductor on a GPU; on other devices, asked for explicitly)."""
    from transformers import CompileConfig

    static = copy.deepcopy(config)
    static.cache_implementation = "static"
    compile_config = CompileConfig(
        backend=backend,
        mode="reduce-overhead" if backend == "inductor" and device.type == "cuda" else "default",
    )
    # transformers' own switch for compiling off CUDA (a class attribute, typed None there).
    compile_config._compile_all_devices = device.type != "cuda"  # type: ignore[assignment]
    static.compile_config = compile_config
    return static


def auto_batch_size(
    model: PreTrainedModel, prompt_tokens: int, max_new_tokens: int, device: Any = None
) -> int:
    """The batch ``generate(batch_size="auto")`` starts with, in sequences.

    On a GPU: the largest batch whose KV cache (counted twice: the cache grows by copies and
    the allocator fragments), sampling logits and prompt activations fit in 80 % of the free
    memory, at most ``AUTO_BATCH_SIZE_LIMIT``. On a CPU: ``CPU_BATCH_SIZE``, fewer if that
    would take more than half of the available RAM. Elsewhere (MPS, XPU, ...):
    ``CPU_BATCH_SIZE``, left to the out-of-memory back-off.
    """
    device = model_device(model) if device is None else torch.device(device)
    limit = CPU_BATCH_SIZE if device.type != "cuda" else AUTO_BATCH_SIZE_LIMIT
    free = free_memory(device)
    per_sequence = _bytes_per_sequence(model, prompt_tokens, max_new_tokens)
    if free is None or per_sequence is None:
        return limit
    share = 0.8 if device.type == "cuda" else 0.5
    return max(1, min(limit, int(free * share) // per_sequence))


def _bytes_per_sequence(
    model: PreTrainedModel, prompt_tokens: int, max_new_tokens: int
) -> int | None:
    """Estimated device memory one sequence of a batch needs while sampling; ``None`` when
    the model's config does not name its sizes."""
    config = model.config
    if callable(getattr(config, "get_text_config", None)):
        config = config.get_text_config(decoder=True)
    try:
        layers, heads, hidden = (
            config.num_hidden_layers, config.num_attention_heads, config.hidden_size
        )  # fmt: skip
        vocab = config.vocab_size
    except AttributeError:
        return None
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or hidden // heads
    intermediate = getattr(config, "intermediate_size", None) or 4 * hidden
    element = next(model.parameters()).element_size()
    tokens = prompt_tokens + max_new_tokens
    kv_cache = 2 * layers * kv_heads * head_dim * tokens * element
    logits = vocab * (4 * 4 + element)  # float32 copy, processed scores, probabilities, ...
    prompt = prompt_tokens * (4 * hidden + 2 * intermediate + heads * prompt_tokens) * element
    total: int = 2 * kv_cache + logits + prompt
    return total


def _sample_batch(
    model: GenerativeModel,
    prompts: list[list[int]],
    owners: list[int] | None,
    config: GenerationConfig,
    processors: list[Any],
    pad_id: int,
    device: torch.device,
    *,
    multiple: int = 1,
) -> torch.Tensor:
    """The new token ids of one batch, left-padded to a ``multiple`` of tokens. With
    ``owners`` (the query of each row; a query's rows are adjacent), each query's prompt is
    prefilled once and its KV cache copied to its rows; transformers' ``generate`` then runs
    only the last prompt token."""
    input_ids, attention_mask = pad_batch(prompts, pad_id, device, multiple=multiple)
    for processor in processors:
        if callable(getattr(processor, "reset", None)):
            processor.reset(prompt_length=input_ids.shape[1])
    cache: dict[str, Any] = {}
    if owners is not None and input_ids.shape[1] > 1 and len(set(owners)) < len(owners):
        cache = _shared_prompt_cache(model, input_ids, attention_mask, owners)
    output = model.generate(
        input_ids=input_ids,
        attention_mask=attention_mask,
        generation_config=config,
        logits_processor=LogitsProcessorList(processors),
        **cache,
    )
    new_tokens: torch.Tensor = output[:, input_ids.shape[1] :]
    return new_tokens


def _shared_prompt_cache(
    model: GenerativeModel,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    owners: list[int],
) -> dict[str, Any]:
    """``{CACHE_KEYWORD: cache}``, a ``DynamicCache`` of every row's prompt but its last token,
    computed once per query and copied to its rows; ``{}`` when the model's cache is not a
    plain one.

    Positions come from the attention mask as transformers' ``generate`` makes them, so the
    cache equals the one ``generate`` would build for each row.
    """
    firsts = [row for row, owner in enumerate(owners) if row == 0 or owner != owners[row - 1]]
    unique_ids = input_ids[firsts, :-1]
    unique_mask = attention_mask[firsts, :-1]
    positions = (unique_mask.cumsum(-1) - 1).masked_fill(unique_mask == 0, 0)
    out = model(
        input_ids=unique_ids,
        attention_mask=unique_mask,
        position_ids=positions,
        use_cache=True,
        logits_to_keep=1,
    )
    cache: Any = getattr(out, CACHE_KEYWORD, None)
    if not _is_plain_kv_cache(cache) or cache.get_seq_length() != unique_ids.shape[1]:
        return {}
    starts = torch.zeros(len(owners), dtype=torch.long, device=input_ids.device)
    starts[firsts] = 1
    cache.batch_select_indices(starts.cumsum(0) - 1)  # row -> its query's prefilled row
    return {CACHE_KEYWORD: cache}


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
    room: int = context - max_new_tokens
    return room


def _tokenize(
    queries: list[str], tokenizer: PreTrainedTokenizerBase, max_tokens: int | None
) -> list[list[int]]:
    """Token ids per query, cut from the left to ``max_tokens`` (warned once)."""
    prompts = [prompt_token_ids(tokenizer, query) for query in queries]
    empty = [i for i, p in enumerate(prompts) if not p]
    if empty:
        raise ValueError(f"queries{empty[:5]} give no tokens; every query needs at least one")
    if max_tokens is None:
        return prompts
    too_long = sum(len(p) > max_tokens for p in prompts)
    if too_long:
        warnings.warn(
            f"{too_long} of {len(prompts)} queries exceed the {max_tokens} tokens left in the "
            "model's context for the prompt; they were cut from the left",
            stacklevel=3,
        )
        prompts = [p[-max_tokens:] for p in prompts]
    return prompts


def _has_plain_kv_cache(model: GenerativeModel) -> bool:
    """Whether a prompt can be prefilled apart from ``generate``: a decoder-only model that
    takes ``logits_to_keep`` (no full-vocabulary logits for the prompt) and whose generation
    config asks for no special cache. The cache itself is checked after the prefill."""
    base = model.get_base_model() if callable(getattr(model, "get_base_model", None)) else model
    generation_config = getattr(base, "generation_config", None)
    return (
        not getattr(base.config, "is_encoder_decoder", False)
        and "logits_to_keep" in inspect.signature(base.forward).parameters
        and getattr(generation_config, "cache_implementation", None) is None
        and getattr(generation_config, "use_cache", True) is not False
    )


def _is_plain_kv_cache(cache: Any) -> bool:
    """A ``DynamicCache`` of full-attention layers only: rows of it can be copied (no sliding
    window, linear attention or quantisation state to keep consistent)."""
    layers: Any = getattr(cache, "layers", None)
    return (
        isinstance(cache, DynamicCache)
        and bool(layers)
        and all(type(layer) is DynamicLayer for layer in layers)
    )
