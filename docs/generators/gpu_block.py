"""The GPU guide's block (docs/guides/gpu.md): what ``python -m benchmarks.gpu`` measured on a
lent GPU, rendered from the committed ``benchmarks/results/gpu/*/results.json``
(``docs/generators/update_docs.py`` writes it)."""

from __future__ import annotations

import json
from typing import Any

from doc_blocks import ROOT

RESULTS = ROOT / "benchmarks" / "results" / "gpu"
RUNS = ("training_generation", "verification_callback", "fsdp", "h200", "h200_score")
"""The committed runs, oldest first: a step measured again in a later run replaces its rows."""
FLOORS = ROOT / ".ci" / "floors.txt"
AX_QUERIES = 20 * 400
"""WaterDrum-Ax's queries (20 owners x 400 abstracts): the paper's protocol samples 10 x 200
tokens for each, about 16M tokens per evaluated model."""


def runs() -> dict[str, dict[str, Any]]:
    return {run: json.loads((RESULTS / run / "results.json").read_text()) for run in RUNS}


def load() -> dict[str, dict[str, Any]]:
    """Step name -> its results, each from the latest run that measured it."""
    steps: dict[str, dict[str, Any]] = {}
    for results in runs().values():
        steps.update(results["steps"])
    return steps


def versions() -> str:
    """Which device and software measured each step (each step's latest run), said once per
    set of versions."""
    committed = runs()
    latest: dict[str, str] = {}
    for run, results in committed.items():
        latest.update({step: run for step in results["steps"]})
    said: dict[str, list[str]] = {}
    for step, run in latest.items():
        env = committed[run]["environment"]
        found = env["versions"]
        own = found.get("waterdrum-hf") or "not recorded"
        own = "a source tree" if own.startswith("0+") else own
        key = (
            f"{env['device']}, torch {found['torch']}, transformers {found['transformers']}, "
            f"waterdrum-hf {own}"
        )
        said.setdefault(key, []).append(step)
    pins = [word for word in FLOORS.read_text().split() if "==" in word]  # not a comment's words
    floors = {name: pin for name, _, pin in (word.partition("==") for word in pins)}
    below = [f"{name} {floors[name]}" for name in ("torch", "transformers") if name in floors]
    parts = [f"{', '.join(steps)} on {key}" for key, steps in said.items()]
    return "; ".join(parts) + f" (declared floors: {' and '.join(below)})"


def generation_rows(rows: list[dict[str, Any]]) -> list[str]:
    """The generation table: each row warm (the median and range of timed calls after an
    untimed one) with its first call; rows of an older suite (no ``path``) marked as including
    start-up."""
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


def speed_ups(rows: list[dict[str, Any]]) -> list[str]:
    """Each path against transformers' plain ``generate`` at the same batch (ratio of
    medians), saying whether their warm ranges overlap; the settings not measured."""
    plain = {r["batch"]: r for r in rows if r.get("path") == "transformers" and "skipped" not in r}
    lines = []
    for row in rows:
        base = plain.get(row["batch"])
        if "skipped" in row or base is None or row is base or "path" not in row:
            continue
        apart = row["tokens_per_s_range"][0] > base["tokens_per_s_range"][1] or (
            row["tokens_per_s_range"][1] < base["tokens_per_s_range"][0]
        )
        lines.append(
            f"- {row['path']} at batch {row['batch']}: {row['tokens_per_s'] / base['tokens_per_s']:.2f}x"
            f" plain `generate` (ranges {'apart' if apart else 'overlapping'})"
        )
    skipped = [f"{r['path']} at batch {r['batch']}" for r in rows if "skipped" in r]
    if skipped:
        lines.append(f"- not measured (the run's time budget ran out): {', '.join(skipped)}")
    return lines


def callback_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The callback table, then what an evaluation costs once the first has compiled."""
    (plain,) = [r for r in rows if r["max_queries_per_owner"] == "none"]
    lines = [
        "| max_queries_per_owner | evaluation, median (s) | all evaluations (s) | callback's "
        "share of the run | run time vs no callback |",
        "| --- | --- | --- | --- | --- |",
    ]
    measured = [r for r in rows if r is not plain and "skipped" not in r]
    for row in measured:
        lines.append(
            f"| {row['max_queries_per_owner']} | {row['eval_s']:.1f} | {row['callback_s']:.1f} | "
            f"{row['callback_share']:.0%} | +{row['overhead_vs_no_callback']:.0%} |"
        )
    steps, every = 30, 10  # the step's run: 30 steps, an evaluation every 10
    for row in measured:
        training = plain["train_runtime_s"] * every / steps
        lines += [
            "",
            f"At {row['max_queries_per_owner']} queries per owner the {row['evaluations']} "
            f"evaluations took {row['callback_s']:.1f} s in all and {row['eval_s']:.1f} s at the "
            "median: the first compiles the static path. Once compiled, an evaluation every "
            f"{every} steps "
            f"costs {row['eval_s']:.1f} / ({plain['train_runtime_s']:.1f} x {every}/{steps} + "
            f"{row['eval_s']:.1f}) = {row['eval_s'] / (training + row['eval_s']):.0%} of the run "
            "(arithmetic on the measured seconds, not a measured run).",
        ]
    return lines


def score_lines(row: dict[str, Any], generation: list[dict[str, Any]]) -> list[str]:
    """The end-to-end ``waterdrum score`` and the paper's protocol at the fastest warm rate."""
    best = max(
        (r for r in generation if "skipped" not in r and "path" in r),
        key=lambda r: r["tokens_per_s"],
    )
    tokens = AX_QUERIES * 10 * 200
    seconds = tokens / best["tokens_per_s"]
    return [
        f"`waterdrum score` of a LoRA adapter (r 8) of the 7B shape, loaded from disk: "
        f"{row['queries']} queries x 10 samples x 200 tokens = {row['new_tokens']:,} tokens in "
        f"{row['command_s']:.1f} s (loading {row['load_model_s']:.1f} s, sampling "
        f"{row['sample_s']:.1f} s with its first-call compile, the rest {row['rest_s']:.1f} s: "
        "data, verification, report).",
        "",
        f"The paper's protocol on WaterDrum-Ax: {AX_QUERIES:,} queries x 10 x 200 = "
        f"{tokens:,} tokens per model; at the fastest warm rate above ({best['path']}, batch "
        f"{best['batch']}: {best['tokens_per_s']:,.0f} tokens/s, base weights without an "
        f"adapter) that is {tokens:,} / {best['tokens_per_s']:,.0f} = {seconds:,.0f} s, "
        f"{seconds / 60:.0f} minutes, plus loading and one compile.",
    ]


def render_gpu() -> str:
    steps = load()
    training, generation = steps["training"]["rows"], steps["generation"]["rows"]
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
        *speed_ups(generation),
        "",
        "`WaterDrumCallback` in a 30-step KL LoRA run, evaluating at step 0 and every 10 steps "
        "(4 owners):",
        "",
        *callback_lines(steps["callback"]["rows"]),
    ]
    if "score" in steps:
        lines += ["", *score_lines(steps["score"]["rows"][0], generation)]
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
