"""What ``confidence=`` costs: the metric with intervals against the same call without, on
synthetic word texts (a word-level tokenizer built here, no download). Best of ``--repeats``.

    python benchmarks/interval_cost.py
    python benchmarks/interval_cost.py --queries 20000 --owners 200
"""

from __future__ import annotations

import argparse
import functools
import timeit

import numpy as np
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from waterdrum_hf.metric import waterdrum_result

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
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
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

    def best(**options) -> float:
        run = functools.partial(waterdrum_result, predictions, references, **common, **options)
        return min(timeit.repeat(run, number=1, repeat=args.repeats))

    plain = best()
    bounded = best(confidence=0.95, bootstrap_resamples=args.resamples)
    print(
        f"{args.queries} queries x {args.samples} samples x {args.words} words, {args.owners} "
        f"owners, {args.resamples} resamples (sets, AUROC and every owner)"
    )
    print(f"without intervals: {plain:.3f} s")
    print(f"with intervals:    {bounded:.3f} s  (+{bounded - plain:.3f} s, x{bounded / plain:.2f})")


if __name__ == "__main__":
    main()
