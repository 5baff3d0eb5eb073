"""The GPU guide's block (docs/guides/gpu.md): what ``python -m benchmarks.gpu`` measured on a
lent GPU, rendered from the committed ``benchmarks/results/gpu/*/results.json``
(``benchmarks/update_docs.py`` writes it)."""

from __future__ import annotations

import json
from typing import Any

from doc_blocks import ROOT

RESULTS = ROOT / "benchmarks" / "results" / "gpu"
RUNS = ("training_generation", "verification_callback", "fsdp")
FLOORS = ROOT / ".ci" / "floors.txt"


def load() -> dict[str, dict[str, Any]]:
    """Step name -> its results, from every committed run."""
    steps: dict[str, dict[str, Any]] = {}
    for run in RUNS:
        results = json.loads((RESULTS / run / "results.json").read_text())
        steps.update(results["steps"])
    return steps


def versions() -> str:
    """Which torch and transformers (and library) the committed runs used, said once."""
    seen = []
    for run in RUNS:
        found = json.loads((RESULTS / run / "results.json").read_text())["environment"]["versions"]
        seen.append(
            f"torch {found['torch']}, transformers {found['transformers']}, waterdrum-hf "
            f"{found.get('waterdrum-hf') or 'not recorded'}"
        )
    pins = [word for word in FLOORS.read_text().split() if "==" in word]  # not a comment's words
    floors = {name: pin for name, _, pin in (word.partition("==") for word in pins)}
    below = [f"{name} {floors[name]}" for name in ("torch", "transformers") if name in floors]
    return "; ".join(dict.fromkeys(seen)) + f" (below the declared floors, {' and '.join(below)})"


def generation_rows(rows: list[dict[str, Any]]) -> list[str]:
    """The generation table: warm rows (a ``path``, medians of repeats after an untimed call)
    with their range and first call; rows of the older suite marked as including start-up."""
    lines = [
        "| path | batch | tokens/s | first call (s) | peak GPU memory (GiB) | share of the "
        "bandwidth limit (weights + KV cache) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        if "skipped" in row:
            continue
        batch = f"auto ({row['start_batch']})" if row["batch"] == "auto" else row["batch"]
        if "path" in row:
            low, high = row["tokens_per_s_range"]
            speed = (
                f"{row['tokens_per_s']:,.0f} ({low:,.0f}-{high:,.0f}, {row['repeats']} warm calls)"
            )
            path, first = row["path"], f"{row['first_seconds']:.1f}"
        else:
            speed = f"{row['tokens_per_s']:,.0f} (includes start-up)"
            path, first = "waterdrum", "–"
        lines.append(
            f"| {path} | {batch} | {speed} | {first} | {row['peak_gib']:.1f} | "
            f"{row['tokens_per_s'] / row['tokens_per_s_limit_weights_kv']:.0%} of "
            f"{row['tokens_per_s_limit_weights_kv']:,.0f} |"
        )
    return lines


def render_gpu() -> str:
    steps = load()
    training, generation = steps["training"]["rows"], steps["generation"]["rows"]
    callback = steps["callback"]["rows"]
    verification = steps["verification"]["rows"]
    fsdp = steps["fsdp"]["rows"][0]
    warm = all("path" in row for row in generation)
    lines = [
        f"Software: {versions()}.",
        "",
        "Training, LoRA r 8 on the Llama-2-7B shape (random bf16 weights), 8 x 256 tokens per "
        "side and step:",
        "",
        "| method | reference | gradient checkpointing | step (s) | tokens/s | peak GPU memory (GiB) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in training:
        lines.append(
            f"| {row['method']} | {row['reference'].replace('_', ' ')} | "
            f"{'on' if row['checkpointing'] else 'off'} | {row['step_s']:.2f} | "
            f"{row['tokens_per_s']:,.0f} | {row['peak_gib']:.1f} |"
        )
    dtypes = {row["loss_dtype"] for row in training} | {row["log_prob_dtype"] for row in training}
    lines += [
        "",
        f"Losses and log-probabilities: {', '.join(sorted(dtypes))} (logits bf16); the "
        "reference sits on the policy's device in every setting.",
        "",
        "Generation at the paper's protocol (50-token prompts, 10 samples, 200 new tokens)"
        + (
            ", warm: one untimed call at each batch, then the median (range) of timed calls:"
            if warm
            else ". These rows time two batches of which the first pays the start-up at a new "
            "shape, so they read below the steady state; a warm re-measurement replaces them:"
        ),
        "",
        *generation_rows(generation),
        "",
        "`WaterDrumCallback` in a 30-step KL LoRA run, evaluating at step 0 and every 10 steps "
        "(4 owners"
        + ("):" if warm else "; measured with the same start-up at each evaluation's shapes):"),
        "",
        "| max_queries_per_owner | callback's share of the run | run time vs no callback |",
        "| --- | --- | --- |",
    ]
    for row in callback:
        if row["max_queries_per_owner"] == "none":
            continue
        lines.append(
            f"| {row['max_queries_per_owner']} | {row['callback_share']:.0%} | "
            f"+{row['overhead_vs_no_callback']:.0%} |"
        )
    shuffle = verification[-1]
    lines += [
        "",
        f"Verification on the machine's CPU, {shuffle['texts']:,} texts at N = "
        f"{shuffle['vocab_size']:,}: {shuffle['verify_s']:.2f} s, "
        f"{shuffle['shuffle_share_of_verify']:.0%} of it the exact shuffles. Under FSDP2 (one "
        f"process, parameters as {fsdp['parameter_type']}) the callback evaluated "
        f"{fsdp['evaluations']} times through the sharded model.",
    ]
    return "\n".join(lines)
