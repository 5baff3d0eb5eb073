"""Step ``generation``: ``waterdrum_hf.generate`` at the paper's protocol shape.

50-token prompts, 10 samples per query, 200 new tokens, on random Llama-2-7B weights in bf16
(random weights rarely sample EOS, so every completion runs to its full length: the worst
case). Reports tokens per second warm (one untimed call at each shape, then the median and range
of :attr:`Sizes.timed_repeats` calls; the first call's seconds on their own) on three paths
(:data:`PATHS`) at the batches of (``"auto"``: the one ``batch_size="auto"`` picks)
:attr:`Sizes.batches`, beside the device's measured copy bandwidth and the decoding
limit it sets: every decoding step reads all weights (about 13.5 GB) and the batch's
KV cache, so a batch of ``B`` rows makes at most ``B * bandwidth / bytes read`` tokens per
second.
"""

from __future__ import annotations

import logging
from typing import Any

from benchmarks.gpu.common import (
    Budget,
    Setup,
    build_model,
    copy_bandwidth,
    is_oom,
    median,
    peak_gib,
    release,
    reset_peak,
    timed,
    weight_bytes,
    word_texts,
    word_tokenizer,
)


class _Messages(logging.Handler):
    """Keeps what ``waterdrum_hf.generation.engine`` logs (it says when it halves the batch)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def kv_bytes_per_token(setup: Setup, element: int) -> int:
    shape = setup.shape
    return 2 * shape.layers * shape.hidden_size * element  # keys and values, every layer


PATHS: dict[str, dict[str, Any]] = {
    "waterdrum": {"cache": "dynamic"},
    "transformers": {"cache": "dynamic", "shared_prefill": False},
    "static": {"cache": "static"},
}
"""The paths timed at each batch: ``waterdrum_hf.generate`` (dynamic cache, shared prefill),
transformers' plain ``generate`` on the same batches (no shared prefill) and the static,
compiled path (``SamplingConfig(cache="static")``)."""


def time_generation(
    setup: Setup, model: Any, tokenizer: Any, batch: int | str, path: str
) -> dict[str, Any]:
    """One batch of the protocol's completions on ``path``: one untimed call at the shape
    (its seconds, start-up and compiling included, reported on their own), then
    ``sizes.timed_repeats`` timed calls at the same shape; tokens/s of their median."""
    from waterdrum_hf import SamplingConfig, auto_batch_size, generate

    sizes = setup.sizes
    rows = (
        auto_batch_size(model, sizes.prompt_tokens, sizes.new_tokens)
        if batch == "auto"
        else int(batch)
    )
    queries = word_texts(
        setup.shape.vocab_size, max(1, rows // sizes.num_samples), sizes.prompt_tokens, seed=2
    )
    sampling = SamplingConfig(
        num_samples=sizes.num_samples,
        max_new_tokens=sizes.new_tokens,
        batch_size=rows,  # the same shape on every call
        seed=0,
        **PATHS[path],
        # The CPU smoke run traces the static path without generating code.
        **({} if setup.cuda or path != "static" else {"compile_backend": "eager"}),
    )
    handler = _Messages()
    logger = logging.getLogger("waterdrum_hf.generation.engine")
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.INFO)
    reset_peak(setup.device)
    seconds, tokens = [], 0
    try:
        for _ in range(1 + sizes.timed_repeats):
            with timed(setup.device) as t:
                completions = generate(model, tokenizer, queries, sampling, show_progress=False)
            seconds.append(t["seconds"])
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
    lengths = [
        len(tokenizer(text, add_special_tokens=False)["input_ids"])
        for q in completions
        for text in q
    ]
    tokens = sum(lengths)
    warm = seconds[1:]
    return {
        "batch": str(batch),
        "path": path,
        "start_batch": rows,
        "log": handler.lines,
        "queries": len(queries),
        "sequences": len(lengths),
        "mean_new_tokens": tokens / len(lengths),
        "first_seconds": seconds[0],
        "repeats": len(warm),
        "seconds": median(warm),
        "seconds_range": [min(warm), max(warm)],
        "tokens_per_s": tokens / median(warm),
        "tokens_per_s_range": [tokens / max(warm), tokens / min(warm)],
        "peak_gib": peak_gib(setup.device),
    }


def bandwidth_limit(setup: Setup, model: Any, bandwidth_gbs: float, batch: int) -> dict[str, Any]:
    """Tokens/s that reading the weights (and the KV cache) at ``bandwidth_gbs`` allows."""
    sizes = setup.sizes
    weights = weight_bytes(model)
    element = next(model.parameters()).element_size()
    mean_context = sizes.prompt_tokens + sizes.new_tokens / 2
    kv = batch * kv_bytes_per_token(setup, element) * mean_context
    return {
        "weights_gb": weights / 1e9,
        "steps_per_s_weights_only": bandwidth_gbs * 1e9 / weights,
        "tokens_per_s_limit_weights": batch * bandwidth_gbs * 1e9 / weights,
        "tokens_per_s_limit_weights_kv": batch * bandwidth_gbs * 1e9 / (weights + kv),
        "kv_gb_per_step": kv / 1e9,
    }


def run(setup: Setup, budget: Budget) -> dict[str, Any]:
    sizes = setup.sizes
    bandwidth = copy_bandwidth(setup.device, sizes.copy_mib)
    model = build_model(setup).eval()
    tokenizer = word_tokenizer(setup.shape.vocab_size)
    rows: list[dict[str, Any]] = []
    for batch in sizes.batches:
        for path in PATHS:
            if budget.expired:
                rows.append({"batch": str(batch), "path": path, "skipped": "time budget"})
                continue
            try:
                row = time_generation(setup, model, tokenizer, batch, path)
            except Exception as error:
                if not is_oom(error):
                    raise
                release(setup.device)
                rows.append({"batch": str(batch), "path": path, "skipped": "out of memory"})
                continue
            row.update(bandwidth_limit(setup, model, bandwidth, row["start_batch"]))
            row["share_of_limit"] = row["tokens_per_s"] / row["tokens_per_s_limit_weights_kv"]
            rows.append(row)
    del model
    release(setup.device)
    return {
        "rows": rows,
        "copy_bandwidth_gbs": bandwidth,
        "notes": [
            f"{sizes.prompt_tokens}-token prompts, {sizes.num_samples} samples per query, "
            f"{sizes.new_tokens} new tokens, random {setup.shape.name} weights in {setup.dtype}",
            f"each row: one untimed call at its batch (first_seconds: start-up and, on the "
            f"static path, compiling), then the median of {sizes.timed_repeats} timed calls",
            f"copy bandwidth {bandwidth:.0f} GB/s (bytes read + written, median of 10 copies)",
        ],
    }
