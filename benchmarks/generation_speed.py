"""Sampling speed of ``generate``: the old default (batch 16, plain prefill) against
``batch_size="auto"`` with the shared prefill (the new default), in one run.

Two models: the built-in tiny model and a ~40M-parameter Llama initialised at random from a
config (nothing is downloaded; it uses the tiny model's tokenizer). Both answer the same
completion queries (``--prompt-tokens``-token prefixes of the tiny model's corpus), with
``--samples`` completions each. A third line per model runs ``"auto"`` without the shared
prefill, to tell the two changes apart. tokens/s counts the completions' tokens (re-encoded);
each setting runs once after a short warm-up, with torch's default thread count.

    python benchmarks/generation_speed.py                      # both models, ~3 minutes on 2 cores
    python benchmarks/generation_speed.py --sweep 16,64,256    # tokens/s per fixed batch size
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import torch

import waterdrum_hf.tiny as tiny
from waterdrum_hf.data.corpus import toy_corpus
from waterdrum_hf.generation import auto_batch_size, generate
from waterdrum_hf.prompting import completion_queries

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


def tokens_per_second(
    model: Any, tokenizer: Any, queries: list[str], args: argparse.Namespace, **settings: Any
) -> float:
    """Completion tokens generated per second of one ``generate`` call."""
    start = time.perf_counter()
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
    seconds = time.perf_counter() - start
    tokens = sum(len(tokenizer(c, add_special_tokens=False)["input_ids"]) for s in out for c in s)
    return tokens / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=16, help="queries per model")
    parser.add_argument("--samples", type=int, default=10, help="completions per query")
    parser.add_argument("--prompt-tokens", type=int, default=50, help="query length in tokens")
    parser.add_argument("--max-new-tokens", type=int, default=64, help="tokens per completion")
    parser.add_argument("--models", default="tiny,llama-40m", help="comma-separated")
    parser.add_argument("--sweep", help="comma-separated fixed batch sizes to time instead")
    args = parser.parse_args()

    model, tokenizer = tiny.load(show_progress=False)
    models = {"tiny": model, "llama-40m": random_llama(tokenizer, seed=0)}
    texts = [t for t in toy_corpus()["text"] if len(t) > 8 * args.prompt_tokens][: args.queries]
    queries = completion_queries(texts, tokenizer, prefix_tokens=args.prompt_tokens)
    rows = len(queries) * args.samples
    print(
        f"{len(queries)} queries x {args.samples} samples = {rows} sequences, "
        f"{args.prompt_tokens}-token prompts, up to {args.max_new_tokens} new tokens; "
        f"{torch.get_num_threads()} torch threads"
    )
    for name in args.models.split(","):
        model = models[name]
        parameters = sum(p.numel() for p in model.parameters()) / 1e6
        generate(
            model, tokenizer, queries[:2], num_samples=2, max_new_tokens=4, show_progress=False
        )
        if args.sweep:
            for size in map(int, args.sweep.split(",")):
                speed = tokens_per_second(model, tokenizer, queries, args, batch_size=size)
                print(f"{name} ({parameters:.1f}M parameters): batch {size}: {speed:.0f} tokens/s")
            continue
        auto = min(rows, auto_batch_size(model, args.prompt_tokens + 1, args.max_new_tokens))
        old = tokens_per_second(
            model, tokenizer, queries, args, batch_size=OLD_DEFAULT, shared_prefill=False
        )
        unshared = tokens_per_second(model, tokenizer, queries, args, shared_prefill=False)
        new = tokens_per_second(model, tokenizer, queries, args)
        print(
            f"{name} ({parameters:.1f}M parameters): batch {OLD_DEFAULT} (old default) "
            f"{old:.0f} tokens/s; auto (batch {auto}) {unshared:.0f} tokens/s, with the shared "
            f"prefill (new default) {new:.0f} tokens/s; ratio new/old {new / old:.2f}x "
            f"(batch size {unshared / old:.2f}x, shared prefill {new / unshared:.2f}x)"
        )


if __name__ == "__main__":
    main()
