"""What ``confidence=`` costs: the metric with intervals against the same call without, on
synthetic word texts (a word-level tokenizer built here, no download). The two calls take
turns, ``--repeats`` times after a warm-up; medians and ranges go to
``benchmarks/results/interval_cost.json``.

    python benchmarks/interval_cost.py
    python benchmarks/interval_cost.py --queries 20000 --owners 200
"""

from __future__ import annotations

import argparse
import functools

import numpy as np
import timing
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from waterdrum_hf import IntervalConfig, WaterDrumConfig
from waterdrum_hf.scoring import waterdrum_result

VOCAB = 4096


def word_tokenizer() -> PreTrainedTokenizerFast:
    backend = Tokenizer(models.WordLevel({f"w{i}": i for i in range(VOCAB)}, unk_token="w0"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=backend)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--owners", type=int, default=20)
    parser.add_argument("--samples", type=int, default=2, help="samples per query")
    parser.add_argument("--words", type=int, default=100, help="words per sample")
    parser.add_argument("--resamples", type=int, default=1000)
    timing.add_arguments(parser)
    args = parser.parse_args()
    timing.set_threads(args.threads)
    rng = np.random.default_rng(0)
    predictions = [
        [" ".join(f"w{i}" for i in rng.integers(0, VOCAB, args.words)) for _ in range(args.samples)]
        for _ in range(args.queries)
    ]
    keys = rng.integers(0, 2**32, args.owners).tolist()
    references = [keys[q % args.owners] for q in range(args.queries)]
    common = {
        "watermark_tokenizer": word_tokenizer(),
        "forget_ids": keys[:2],
        "return_details": True,
    }

    run = functools.partial(waterdrum_result, predictions, references, **common)
    interval = IntervalConfig(confidence=0.95, resamples=args.resamples)
    bounded = functools.partial(run, config=WaterDrumConfig(interval=interval))
    times = timing.interleaved({"plain": run, "intervals": bounded}, args.repeats, args.warmup)
    plain, with_intervals = times["plain"], times["intervals"]
    extra = with_intervals.median - plain.median
    ratio = with_intervals.median / plain.median
    lines = [
        f"{args.queries} queries x {args.samples} samples x {args.words} words, {args.owners} "
        f"owners, {args.resamples} resamples (sets, AUROC and every owner)",
        f"without intervals: {plain.describe()}",
        f"with intervals:    {with_intervals.describe()}",
        f"medians: +{extra:.3f} s, x{ratio:.2f}",
    ]
    results = {
        "queries": args.queries,
        "owners": args.owners,
        "resamples": args.resamples,
        "plain": plain.to_dict(),
        "intervals": with_intervals.to_dict(),
        "extra_seconds": extra,
        "ratio": ratio,
    }
    timing.write_results(args, __file__, results, lines)


if __name__ == "__main__":
    main()
