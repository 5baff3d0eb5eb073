"""Per-seed cost of one permutation: numpy's ``RandomState(seed).permutation(N)`` against the
compiled kernel of ``waterdrum_hf.schemes.permutation`` (``schemes/mt19937.py``) on one thread and on every core.

Each seed is shuffled in full (token 0 needed, so no early stop). The three take turns,
``--repeats`` times after a warm-up; medians and ranges (ms per seed) go to
``benchmarks/results/permutation_speed.json``.

    python benchmarks/permutation_speed.py
    python benchmarks/permutation_speed.py --seeds 500 --vocab-sizes 128000
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import timing

from waterdrum_hf.schemes import mt19937
from waterdrum_hf.schemes import permutation as _permutation
from waterdrum_hf.schemes.permutation import permuted_positions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=2000)
    parser.add_argument("--numpy-seeds", type=int, default=300)
    parser.add_argument("--vocab-sizes", type=int, nargs="+", default=[4096, 32000, 128000, 151936])
    timing.add_arguments(parser)
    args = parser.parse_args()
    timing.set_threads(args.threads)
    if _permutation.permutation_backend() != "numba":
        raise SystemExit("the numba backend is not active: nothing to compare")
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    permuted_positions(np.array([[1, 2]]), np.array([0]), 8)
    lines = [f"first call (compile or cache load): {time.perf_counter() - start:.2f} s"]
    results: dict[str, Any] = {}
    for n in args.vocab_sizes:
        seeds = np.column_stack(
            [rng.integers(0, 2**32, args.seeds), rng.integers(0, n, args.seeds)]
        )
        tokens = np.zeros(args.seeds, dtype=np.int64)
        bounds = np.arange(args.seeds + 1, dtype=np.int64)
        out = np.empty(args.seeds, dtype=np.int64)
        keys = seeds.astype(np.uint32)

        def numpy_run(n: int = n, seeds: np.ndarray = seeds) -> None:
            for seed in seeds[: args.numpy_seeds]:
                np.random.RandomState(tuple(int(s) for s in seed)).permutation(n)

        def one_thread(n: int = n, keys: np.ndarray = keys, tokens: np.ndarray = tokens,
                       bounds: np.ndarray = bounds, out: np.ndarray = out) -> None:  # fmt: skip
            mt19937.positions_kernel(keys, bounds, tokens, n, out, 0, 1)

        def all_cores(n: int = n, seeds: np.ndarray = seeds, tokens: np.ndarray = tokens) -> None:
            permuted_positions(seeds, tokens, n)

        times = timing.interleaved(
            {"numpy": numpy_run, "one_thread": one_thread, "all_cores": all_cores},
            args.repeats,
            args.warmup,
        )
        counts = {"numpy": args.numpy_seeds, "one_thread": args.seeds, "all_cores": args.seeds}
        per_seed = {name: times[name].per(counts[name] / 1e3) for name in counts}  # ms per seed
        reference, single, spread = (
            per_seed[k].median for k in ("numpy", "one_thread", "all_cores")
        )
        threads = mt19937.thread_count(args.seeds, n)
        lines.append(
            f"N={n:>6}: numpy {per_seed['numpy'].describe('ms/seed')}; ours 1 thread "
            f"{per_seed['one_thread'].describe('ms')} (x{reference / single:.1f}); {threads} threads "
            f"{per_seed['all_cores'].describe('ms')} (x{reference / spread:.1f})"
        )
        results[str(n)] = {"threads": threads, **{k: v.to_dict() for k, v in per_seed.items()}}
    timing.write_results(args, __file__, {"ms_per_seed": results}, lines)


if __name__ == "__main__":
    main()
