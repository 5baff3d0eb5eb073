"""Step ``generation``: ``waterdrum_hf.generate`` at the paper's protocol shape.

50-token prompts, 10 samples per query, 200 new tokens, on random Llama-2-7B weights in bf16
(random weights rarely sample EOS, so every completion runs to its full length: the worst
case). Reports tokens per second at the batch ``batch_size="auto"`` picks (and at the fixed
batches of :attr:`Sizes.fixed_batches`), beside the device's measured copy bandwidth and the
decoding limit it sets: every decoding step reads all weights (about 13.5 GB) and the batch's
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
    peak_gib,
    release,
    reset_peak,
    timed,
    weight_bytes,
    word_texts,
    word_tokenizer,
)

PUBLISHED_VLLM = "vLLM, 7B-8B on one H100 (published): about 5,800 to 12,500 tokens/s"


class _Messages(logging.Handler):
    """Keeps what ``waterdrum_hf.generation`` logs (it says when it halves the batch)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def kv_bytes_per_token(setup: Setup, element: int) -> int:
    shape = setup.shape
    return 2 * shape.layers * shape.hidden_size * element  # keys and values, every layer


def time_generation(setup: Setup, model: Any, tokenizer: Any, batch: int | str) -> dict[str, Any]:
    """Sample the protocol's completions of enough queries for two batches; tokens/s."""
    from waterdrum_hf import SamplingConfig, auto_batch_size, generate

    sizes = setup.sizes
    start_batch = (
        auto_batch_size(model, sizes.prompt_tokens, sizes.new_tokens)
        if batch == "auto"
        else int(batch)
    )
    queries = word_texts(
        setup.shape.vocab_size,
        max(1, 2 * start_batch // sizes.num_samples),  # two batches, the last nearly full
        sizes.prompt_tokens,
        seed=2,
    )
    sampling = SamplingConfig(
        num_samples=sizes.num_samples, max_new_tokens=sizes.new_tokens, batch_size=batch, seed=0
    )
    handler = _Messages()
    logger = logging.getLogger("waterdrum_hf.generation")
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.INFO)
    reset_peak(setup.device)
    try:
        with timed(setup.device) as t:
            completions = generate(model, tokenizer, queries, sampling, show_progress=False)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
    lengths = [
        len(tokenizer(text, add_special_tokens=False)["input_ids"])
        for q in completions
        for text in q
    ]
    tokens = sum(lengths)
    return {
        "batch": str(batch),
        "start_batch": start_batch,
        "halved": [line for line in handler.lines if "Out of memory" in line],
        "queries": len(queries),
        "sequences": len(lengths),
        "mean_new_tokens": tokens / len(lengths),
        "seconds": t["seconds"],
        "tokens_per_s": tokens / t["seconds"],
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
    from waterdrum_hf import generate

    generate(model, tokenizer, ["w5 w6 w7"], num_samples=2, max_new_tokens=4, batch_size=2)
    rows: list[dict[str, Any]] = []
    for batch in ("auto", *sizes.fixed_batches):
        if budget.expired:
            rows.append({"batch": str(batch), "skipped": "time budget"})
            continue
        try:
            row = time_generation(setup, model, tokenizer, batch)
        except Exception as error:
            if not is_oom(error):
                raise
            release(setup.device)
            rows.append({"batch": str(batch), "skipped": "out of memory"})
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
            f"copy bandwidth {bandwidth:.0f} GB/s (bytes read + written, median of 10 copies)",
            PUBLISHED_VLLM,
        ],
    }
