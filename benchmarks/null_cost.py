"""What a p-value costs: plain scoring against the analytic null and the empirical null, at the
paper's vocabulary size (N = 128,000), and the analytic null's own time measured directly.

Texts as in ``verify_speed.py`` (Zipf token ids, word tokenizer of exactly N words), one
query each, ``--owners`` owners of which two are forgotten; every call is
``waterdrum_result(..., return_details=True)`` (sets and per-owner values). Plain scoring and
the analytic null take turns, ``--repeats`` times after a warm-up; the empirical null with
each K of ``--empirical-keys`` is timed the same way. The analytic null's own cost is not the
difference of two totals (that sits below their noise): a clock around the null's own work
inside the analytic call (building it from the token pairs, ``Verifier.null_evidence``;
pooling it, ``read_null``; and every mean/sd it reads, ``AnalyticReading.statistics`` and
``query_means``) adds up its seconds in each repeat. Medians and ranges go to
``benchmarks/results/null_cost.json``.

    python benchmarks/null_cost.py --texts 100 --empirical-keys 20        # ~2 minutes
    python benchmarks/null_cost.py --texts 250 --empirical-keys 20 100
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import timing
from verify_speed import build_texts, build_tokenizer

from waterdrum_hf import NullConfig, Verifier, WaterDrumConfig
from waterdrum_hf.scoring import compute, nulls, waterdrum_result


class NullClock:
    """Seconds spent inside the analytic null's own functions, summed over the calls."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        return timed

    @contextmanager
    def around_the_null(self) -> Iterator[NullClock]:
        """Time the null's evidence, ``read_null`` and the analytic reading's methods while in
        the block."""
        patched = [
            (Verifier, "null_evidence"),
            (compute, "read_null"),
            (nulls.AnalyticReading, "statistics"),
            (nulls.AnalyticReading, "query_means"),
        ]
        originals = [getattr(owner, name) for owner, name in patched]
        for (owner, name), original in zip(patched, originals, strict=True):
            setattr(owner, name, self.wrap(original))
        try:
            yield self
        finally:
            for (owner, name), original in zip(patched, originals, strict=True):
                setattr(owner, name, original)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab-size", type=int, default=128_000)
    parser.add_argument("--texts", type=int, default=250)
    parser.add_argument("--length", type=int, default=175, help="tokens per text")
    parser.add_argument("--owners", type=int, default=20)
    parser.add_argument("--zipf", type=float, default=1.1)
    parser.add_argument("--empirical-keys", type=int, nargs="*", default=[20])
    parser.add_argument("--seed", type=int, default=0)
    timing.add_arguments(parser)
    args = parser.parse_args()
    timing.set_threads(args.threads)

    tokenizer = build_tokenizer(args.vocab_size)
    texts, owners = build_texts(args, args.vocab_size)
    score = functools.partial(
        waterdrum_result,
        texts,
        owners.tolist(),
        tokenizer,
        forget_ids=np.unique(owners)[:2].tolist(),
        return_details=True,
    )
    analytic_config = WaterDrumConfig(null=NullConfig("analytic"))
    clock = NullClock()
    own: list[float] = []

    def analytic() -> None:
        clock.seconds = 0.0
        with clock.around_the_null():
            score(config=analytic_config)
        own.append(clock.seconds)

    times = timing.interleaved({"plain": score, "analytic": analytic}, args.repeats, args.warmup)
    null_own = timing.Timing(tuple(own[-args.repeats :]))  # the timed repeats, not the warm-up
    plain = times["plain"]
    lines = [
        f"N = {args.vocab_size:,}, {args.texts} texts of {args.length} tokens, "
        f"{args.owners} owners (2 forgotten); median (min-max) of {args.repeats} runs",
        f"plain scoring:          {plain.describe()}",
        f"with the analytic null: {times['analytic'].describe()}",
        f"the analytic null's own work: {null_own.describe()} "
        f"({null_own.median / plain.median:.1%} of plain scoring)",
    ]
    results: dict[str, Any] = {
        "vocab_size": args.vocab_size,
        "texts": args.texts,
        "plain": plain.to_dict(),
        "analytic": times["analytic"].to_dict(),
        "analytic_null_own": null_own.to_dict(),
        "analytic_own_share": null_own.median / plain.median,
        "empirical": {},
    }
    for keys in args.empirical_keys:
        config = WaterDrumConfig(null=NullConfig("empirical", keys=keys))
        empirical = timing.repeat(functools.partial(score, config=config), args.repeats, 0)
        lines.append(
            f"empirical null K={keys}: {empirical.describe()} "
            f"({empirical.median / plain.median:.1f}x plain)"
        )
        results["empirical"][str(keys)] = empirical.to_dict()
    timing.write_results(args, __file__, results, lines)


if __name__ == "__main__":
    main()
