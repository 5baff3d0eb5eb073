"""Sampling speed of the ``openai`` engine against a ``vllm serve`` process, beside
transformers' ``generate`` (the library's default path) on the same model, in one run.

Each model (the built-in tiny model; a ~40M-parameter Llama initialised at random, saved to a
temporary folder) is served by vLLM's CPU build from its own environment (``--vllm-python``,
the one ``bash dev.sh vllm`` makes) in float32 without graph capture, and answers the same
completion queries with ``--samples`` completions each, through
:class:`~waterdrum_hf.CompletionServer` (``--concurrency`` requests in flight) and through
:func:`~waterdrum_hf.generate` (``batch_size="auto"``, shared prefill, ``--threads`` torch
threads). The two take turns, ``--repeats`` times after a warm-up, so the server is idle while
transformers samples and the reverse. tokens/s counts the completions' tokens (re-encoded); the
ratio is the ratio of medians. Results: ``benchmarks/results/server_speed.json``.

    bash dev.sh vllm -k greedy          # makes ./.venv-vllm once
    python benchmarks/server_speed.py   # ~5 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import functools
import tempfile
from pathlib import Path
from typing import Any

import timing
from generation_speed import random_llama

import waterdrum_hf.tiny as tiny
from waterdrum_hf.data.corpus import toy_corpus
from waterdrum_hf.generation.engine import generate
from waterdrum_hf.generation.prompting import completion_queries
from waterdrum_hf.generation.sampling import SamplingConfig
from waterdrum_hf.generation.server import CompletionServer
from waterdrum_hf.generation.vllm_process import vllm_server

CPU_OPTIONS = ("--dtype", "float32", "--enforce-eager", "--max-model-len", "1024")


def tokens(tokenizer: Any, out: list[list[str]]) -> int:
    return sum(len(tokenizer(c, add_special_tokens=False)["input_ids"]) for s in out for c in s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=16, help="queries per model")
    parser.add_argument("--samples", type=int, default=10, help="completions per query")
    parser.add_argument("--prompt-tokens", type=int, default=50, help="query length in tokens")
    parser.add_argument("--max-new-tokens", type=int, default=64, help="tokens per completion")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    parser.add_argument("--models", default="tiny,llama-40m", help="comma-separated")
    parser.add_argument(
        "--vllm-python", default=".venv-vllm/bin/python", help="Python of vLLM's environment"
    )
    timing.add_arguments(parser, repeats=3)
    args = parser.parse_args()
    timing.set_threads(args.threads)
    if not Path(args.vllm_python).is_file():
        parser.error(f"--vllm-python {args.vllm_python} does not exist: run bash dev.sh vllm once")

    model, tokenizer = tiny.load(show_progress=False)
    models = {"tiny": model, "llama-40m": random_llama(tokenizer, seed=0)}
    texts = [t for t in toy_corpus()["text"] if len(t) > 8 * args.prompt_tokens][: args.queries]
    queries = completion_queries(texts, tokenizer, prefix_tokens=args.prompt_tokens)
    sampling = SamplingConfig(num_samples=args.samples, max_new_tokens=args.max_new_tokens, seed=0)
    lines = [
        f"{len(queries)} queries x {args.samples} samples, {args.prompt_tokens}-token prompts, up "
        f"to {args.max_new_tokens} new tokens; transformers: {args.threads} torch threads; "
        f"vLLM (CPU build, float32, eager): {args.concurrency} requests in flight; tokens/s: "
        f"median (min-max) of {args.repeats} runs after {args.warmup} warm-up, taking turns"
    ]
    results: dict[str, Any] = {"queries": len(queries), "samples": args.samples, "models": {}}
    for name in args.models.split(","):
        with tempfile.TemporaryDirectory() as folder:
            models[name].save_pretrained(folder)
            tokenizer.save_pretrained(folder)
            with vllm_server(
                args.vllm_python, folder, served_name=name, options=CPU_OPTIONS,
                environment={"VLLM_CPU_KVCACHE_SPACE": "2"}, log=Path(folder) / "server.log",
            ) as url:  # fmt: skip
                server = CompletionServer([url], name, max_concurrency=args.concurrency)
                runs = {
                    "transformers generate": functools.partial(
                        generate, models[name], tokenizer, queries, sampling, show_progress=False
                    ),
                    "vLLM server": functools.partial(
                        server.generate, queries, sampling, show_progress=False
                    ),
                }
                counts = {setting: tokens(tokenizer, run()) for setting, run in runs.items()}
                seconds = timing.interleaved(runs, args.repeats, args.warmup)
        speeds = {setting: seconds[setting].rate(counts[setting]) for setting in runs}
        parameters = sum(p.numel() for p in models[name].parameters()) / 1e6
        for setting, speed in speeds.items():
            lines.append(f"{name} ({parameters:.1f}M): {setting}: {speed.describe('tokens/s', 0)}")
        ratio = speeds["vLLM server"].median / speeds["transformers generate"].median
        lines.append(f"{name}: vLLM server / transformers generate = {ratio:.2f}x")
        results["models"][name] = {
            "parameters_millions": parameters,
            "tokens_per_s": {setting: speed.to_dict() for setting, speed in speeds.items()},
            "ratio": ratio,
        }
    timing.write_results(args, __file__, results, lines)


if __name__ == "__main__":
    main()
