"""Sampling speed of ``generate``: the old default (batch 16, plain prefill) against
``batch_size="auto"`` with the shared prefill (the new default), in one run.

Two models: the built-in tiny model and a ~40M-parameter Llama initialised at random from a
config (nothing is downloaded; it uses the tiny model's tokenizer). Both answer the same
completion queries (``--prompt-tokens``-token prefixes of the tiny model's corpus), with
``--samples`` completions each. A third line per model runs ``"auto"`` without the shared
prefill, to tell the two changes apart. tokens/s counts the completions' tokens (re-encoded;
the seed makes every repeat sample the same tokens). The settings take turns, ``--repeats``
times after a warm-up, with ``--threads`` torch threads; each is reported as the median
tokens/s and its range, the ratios as ratios of medians. The results go to
``benchmarks/results/generation_speed.json`` (``generation_speed_sweep.json`` with ``--sweep``).

    python benchmarks/generation_speed.py --queries 8 --max-new-tokens 16   # ~2 minutes on 2 cores
    python benchmarks/generation_speed.py                       # 160 sequences of 64 tokens
    python benchmarks/generation_speed.py --sweep 16,64,256     # tokens/s per fixed batch size
"""

from __future__ import annotations

import argparse
import functools
from typing import Any

import timing
import torch

import waterdrum_hf.tiny as tiny
from waterdrum_hf.data.corpus import toy_corpus
from waterdrum_hf.generation.engine import auto_batch_size, generate
from waterdrum_hf.generation.prompting import completion_queries

OLD_DEFAULT = 16


def random_llama(tokenizer: Any, seed: int) -> Any:
    """A ~40M-parameter Llama with random weights over ``tokenizer``'s vocabulary."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=512,
        intermediate_size=1536,
        num_hidden_layers=11,
        num_attention_heads=8,
        num_key_value_heads=8,
        max_position_embeddings=1024,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    return LlamaForCausalLM(config).eval()


def sample(
    model: Any, tokenizer: Any, queries: list[str], args: argparse.Namespace, **settings: Any
) -> int:
    """Completion tokens of one ``generate`` call."""
    out = generate(
        model,
        tokenizer,
        queries,
        num_samples=args.samples,
        max_new_tokens=args.max_new_tokens,
        seed=0,
        show_progress=False,
        **settings,
    )
    return completion_tokens(tokenizer, out)


def completion_tokens(tokenizer: Any, out: list[list[str]]) -> int:
    """Tokens of every completion, re-encoded."""
    return sum(len(tokenizer(c, add_special_tokens=False)["input_ids"]) for s in out for c in s)


def add_workload_arguments(parser: argparse.ArgumentParser) -> None:
    """What a sampling-speed script times: queries, samples per query, lengths, models."""
    parser.add_argument("--queries", type=int, default=16, help="queries per model")
    parser.add_argument("--samples", type=int, default=10, help="completions per query")
    parser.add_argument("--prompt-tokens", type=int, default=50, help="query length in tokens")
    parser.add_argument("--max-new-tokens", type=int, default=64, help="tokens per completion")
    parser.add_argument("--models", default="tiny,llama-40m", help="comma-separated")


def workload(args: argparse.Namespace) -> tuple[dict[str, Any], Any, list[str]]:
    """The models by name (the built-in one, a random ~40M Llama), their tokenizer and the
    completion queries (``--prompt-tokens``-token prefixes of the built-in corpus)."""
    model, tokenizer = tiny.load(show_progress=False)
    models = {"tiny": model, "llama-40m": random_llama(tokenizer, seed=0)}
    texts = [t for t in toy_corpus()["text"] if len(t) > 8 * args.prompt_tokens][: args.queries]
    return models, tokenizer, completion_queries(texts, tokenizer, prefix_tokens=args.prompt_tokens)


def measure(
    model: Any,
    tokenizer: Any,
    queries: list[str],
    args: argparse.Namespace,
    settings: dict[str, dict[str, Any]],
) -> dict[str, timing.Timing]:
    """Tokens/s of each setting (a Timing of rates), the settings taking turns."""
    runs = {
        name: functools.partial(sample, model, tokenizer, queries, args, **options)
        for name, options in settings.items()
    }
    tokens = {name: run() for name, run in runs.items()}
    seconds = timing.interleaved(runs, args.repeats, args.warmup)
    return {name: seconds[name].rate(tokens[name]) for name in runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_workload_arguments(parser)
    parser.add_argument("--sweep", help="comma-separated fixed batch sizes to time instead")
    timing.add_arguments(parser)
    args = parser.parse_args()
    if args.sweep and not args.results:
        args.results = timing.RESULTS / "generation_speed_sweep.json"
    timing.set_threads(args.threads)

    models, tokenizer, queries = workload(args)
    rows = len(queries) * args.samples
    lines = [
        f"{len(queries)} queries x {args.samples} samples = {rows} sequences, "
        f"{args.prompt_tokens}-token prompts, up to {args.max_new_tokens} new tokens; "
        f"{torch.get_num_threads()} torch threads; tokens/s: median (min-max) of "
        f"{args.repeats} runs after {args.warmup} warm-up"
    ]
    results: dict[str, Any] = {"sequences": rows, "models": {}}
    for name in args.models.split(","):
        model = models[name]
        parameters = sum(p.numel() for p in model.parameters()) / 1e6
        if args.sweep:
            sizes = list(map(int, args.sweep.split(",")))
            speeds = measure(
                model, tokenizer, queries, args, {f"batch {b}": {"batch_size": b} for b in sizes}
            )
        else:
            auto = min(rows, auto_batch_size(model, args.prompt_tokens + 1, args.max_new_tokens))
            speeds = measure(
                model,
                tokenizer,
                queries,
                args,
                {
                    f"batch {OLD_DEFAULT} (old default)": {
                        "batch_size": OLD_DEFAULT,
                        "shared_prefill": False,
                    },
                    f"auto (batch {auto})": {"shared_prefill": False},
                    f"auto (batch {auto}) + shared prefill (new default)": {},
                },
            )
        for setting, speed in speeds.items():
            lines.append(
                f"{name} ({parameters:.1f}M parameters): {setting}: {speed.describe('tokens/s', 0)}"
            )
        if not args.sweep:
            old, unshared, new = (s.median for s in speeds.values())
            lines.append(
                f"{name}: ratio new/old {new / old:.2f}x (batch size {unshared / old:.2f}x, "
                f"shared prefill {new / unshared:.2f}x)"
            )
        results["models"][name] = {
            "parameters_millions": parameters,
            "tokens_per_s": {setting: speed.to_dict() for setting, speed in speeds.items()},
        }
    timing.write_results(args, __file__, results, lines)


if __name__ == "__main__":
    main()
