"""Why the demo runs torch on one thread: its two kinds of work at 1 and at 2 threads.

The demo fine-tunes and unlearns the built-in model (batches of 4 passages) and samples from it
(the demo's queries: 24-token prompts, 4 samples of 96 tokens). Each is timed at 1 and at 2
torch threads, taking turns (median and range of ``--repeats`` runs after a warm-up), and each
is run once more at both thread counts from the same start to see whether the thread count
moves the values: the trained weights (a digest) and the greedy completions.

    python benchmarks/demo_threads.py            # about 15 s on 2 cores
"""

from __future__ import annotations

import argparse
import copy
import functools
import hashlib
from typing import Any

import timing
import torch

from waterdrum_hf import completion_queries, generate, tiny
from waterdrum_hf.data import toy_corpus

THREADS = (1, 2)


def passages(count: int) -> list[str]:
    return [t for t in toy_corpus()["text"] if len(t.split()) > 60][:count]


def train_steps(model: Any, tokenizer: Any, texts: list[str], steps: int) -> Any:
    """``steps`` AdamW steps of causal-LM loss on batches of 4 texts (the demo's batch)."""
    model = copy.deepcopy(model).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)
    torch.manual_seed(0)
    for step in range(steps):
        batch = texts[(4 * step) % len(texts) :][:4]
        inputs = tokenizer(
            batch, return_tensors="pt", padding=True, truncation=True, max_length=128
        )
        labels = inputs["input_ids"].masked_fill(inputs["attention_mask"] == 0, -100)
        loss = model(**inputs, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return model


def sample(model: Any, tokenizer: Any, queries: list[str], *, greedy: bool = False) -> Any:
    return generate(
        model, tokenizer, queries, num_samples=1 if greedy else 4, max_new_tokens=96, seed=0,
        greedy=greedy, show_progress=False,
    )  # fmt: skip


def at_threads(threads: int, work: Any) -> Any:
    torch.set_num_threads(threads)
    return work()


def digest(model: Any) -> str:
    state = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        state.update(name.encode() + tensor.detach().contiguous().numpy().tobytes())
    return state.hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=8, help="training steps per timed run")
    timing.add_arguments(parser, repeats=3, threads=1)
    args = parser.parse_args()
    model, tokenizer = tiny.load(show_progress=False)
    texts = passages(32)
    queries = completion_queries(texts[:16], tokenizer, prefix_tokens=24)
    work = {
        "fine-tuning": functools.partial(train_steps, model, tokenizer, texts, args.steps),
        "sampling": functools.partial(sample, model, tokenizer, queries),
    }
    lines = [
        f"{timing.machine()['cpu_count']} cores; each work at 1 and 2 torch threads, median "
        f"(min-max) seconds of {args.repeats} runs after {args.warmup} warm-up, taking turns"
    ]
    results: dict[str, Any] = {}
    for name, run in work.items():
        runs = {
            f"{t} thread{'s' * (t > 1)}": functools.partial(at_threads, t, run) for t in THREADS
        }
        seconds = timing.interleaved(runs, args.repeats, args.warmup)
        one, two = (seconds[k] for k in runs)
        results[name] = {k: v.to_dict() for k, v in seconds.items()}
        results[name]["speedup_2_over_1"] = one.median / two.median
        lines.append(
            f"{name}: 1 thread {one.describe()}, 2 threads {two.describe()}; "
            f"2 threads take {two.median / one.median:.2f}x the time of 1"
        )
    trained = {t: digest(at_threads(t, work["fine-tuning"])) for t in THREADS}
    greedy = {t: at_threads(t, functools.partial(sample, model, tokenizer, queries, greedy=True))
              for t in THREADS}  # fmt: skip
    results["same_weights_at_1_and_2_threads"] = trained[1] == trained[2]
    results["same_greedy_completions_at_1_and_2_threads"] = greedy[1] == greedy[2]
    lines.append(
        f"the same start trained at 1 and 2 threads: weights {'equal' if trained[1] == trained[2] else 'differ'}"
        f"; greedy completions {'equal' if greedy[1] == greedy[2] else 'differ'}"
    )
    timing.write_results(args, __file__, results, lines)


if __name__ == "__main__":
    main()
