"""Sampling speed of the vLLM engines (in process, and a ``vllm serve`` through the
``openai`` engine) beside transformers' ``generate`` (the library's default path) on the same
model, in one run.

Each model (the built-in tiny model; a ~40M-parameter Llama initialised at random, saved to a
temporary folder) answers the same completion queries with ``--samples`` completions each,
through :func:`~waterdrum_hf.generate` (``batch_size="auto"``, shared prefill, ``--threads``
torch threads), :class:`~waterdrum_hf.VLLMEngine` and :class:`~waterdrum_hf.CompletionServer`
(``--concurrency`` requests in flight), vLLM's CPU build in float32 without graph capture. The
three take turns, ``--repeats`` times after a warm-up, so each engine is idle while another
samples. tokens/s counts the completions' tokens (re-encoded); the ratios are ratios of
medians. Results: ``benchmarks/results/server_speed.json``. Run it with the Python of the
environment ``bash dev.sh vllm`` makes (vLLM beside the project):

    bash dev.sh vllm -k greedy                                 # makes ./.venv-vllm once
    .venv-vllm/bin/python benchmarks/server_speed.py           # ~6 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import timing
from generation_speed import add_workload_arguments, completion_tokens, workload

from waterdrum_hf.generation.engine import generate
from waterdrum_hf.generation.sampling import SamplingConfig
from waterdrum_hf.generation.server import CompletionServer
from waterdrum_hf.generation.vllm_engine import VLLMEngine
from waterdrum_hf.generation.vllm_process import vllm_server

UNCHUNKED = 65536
"""vLLM's token budget per step, above every run's prompt tokens: vLLM's CPU build (0.32) fails
a seeded request whose prefill is chunked ("CPU Generator does not use offset")."""

CPU_OPTIONS = (
    "--dtype", "float32", "--enforce-eager", "--max-model-len", "1024",
    "--max-num-batched-tokens", str(UNCHUNKED),
)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_workload_arguments(parser)
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    parser.add_argument("--kv-cache-gib", default="2", help="vLLM's CPU KV cache, in GiB")
    timing.add_arguments(parser, repeats=3)
    args = parser.parse_args()
    timing.set_threads(args.threads)
    os.environ["VLLM_CPU_KVCACHE_SPACE"] = args.kv_cache_gib

    models, tokenizer, queries = workload(args)
    sampling = SamplingConfig(num_samples=args.samples, max_new_tokens=args.max_new_tokens, seed=0)
    lines = [
        f"{len(queries)} queries x {args.samples} samples, {args.prompt_tokens}-token prompts, up "
        f"to {args.max_new_tokens} new tokens; transformers: {args.threads} torch threads; "
        f"vLLM (CPU build, float32, eager; server: {args.concurrency} requests in flight); tokens/s: "
        f"median (min-max) of {args.repeats} runs after {args.warmup} warm-up, taking turns"
    ]
    results: dict[str, Any] = {"queries": len(queries), "samples": args.samples, "models": {}}
    for name in args.models.split(","):
        with tempfile.TemporaryDirectory() as folder:
            models[name].save_pretrained(folder)
            tokenizer.save_pretrained(folder)
            keywords = {
                "dtype": "float32", "enforce_eager": True, "max_model_len": 1024,
                "max_num_batched_tokens": UNCHUNKED,
            }  # fmt: skip
            with VLLMEngine(folder, **keywords) as engine, vllm_server(
                sys.executable, folder, served_name=name, options=CPU_OPTIONS,
                log=Path(folder) / "server.log",
            ) as url:  # fmt: skip
                server = CompletionServer([url], name, max_concurrency=args.concurrency)
                runs = {
                    "transformers generate": functools.partial(
                        generate, models[name], tokenizer, queries, sampling, show_progress=False
                    ),
                    "vLLM in process": functools.partial(
                        engine.generate, queries, sampling, show_progress=False
                    ),
                    "vLLM server": functools.partial(
                        server.generate, queries, sampling, show_progress=False
                    ),
                }
                counts = {
                    setting: completion_tokens(tokenizer, run()) for setting, run in runs.items()
                }
                seconds = timing.interleaved(runs, args.repeats, args.warmup)
        speeds = {setting: seconds[setting].rate(counts[setting]) for setting in runs}
        parameters = sum(p.numel() for p in models[name].parameters()) / 1e6
        for setting, speed in speeds.items():
            lines.append(f"{name} ({parameters:.1f}M): {setting}: {speed.describe('tokens/s', 0)}")
        base = speeds["transformers generate"].median
        ratios = {s: speeds[s].median / base for s in ("vLLM in process", "vLLM server")}
        lines.append(
            f"{name}: / transformers generate: "
            + ", ".join(f"{s} {r:.2f}x" for s, r in ratios.items())
        )
        results["models"][name] = {
            "parameters_millions": parameters,
            "tokens_per_s": {setting: speed.to_dict() for setting, speed in speeds.items()},
            "ratio_to_transformers": ratios,
        }
    timing.write_results(args, __file__, results, lines)


if __name__ == "__main__":
    main()
