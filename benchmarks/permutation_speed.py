"""Per-seed cost of one permutation: numpy's ``RandomState(seed).permutation(N)`` against the
compiled kernel of ``waterdrum_hf.schemes.permutation`` on one thread and on every core.

Each seed is shuffled in full (token 0 needed, so no early stop). Best of ``--repeats``.

    python benchmarks/permutation_speed.py
    python benchmarks/permutation_speed.py --seeds 500 --vocab-sizes 128000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from waterdrum_hf.schemes import permutation as _permutation
from waterdrum_hf.schemes.permutation import permuted_positions


def best_seconds(run: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=2000)
    parser.add_argument("--numpy-seeds", type=int, default=300)
    parser.add_argument("--vocab-sizes", type=int, nargs="+", default=[4096, 32000, 128000, 151936])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if _permutation.permutation_backend() != "numba":
        raise SystemExit("the numba backend is not active: nothing to compare")
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    permuted_positions(np.array([[1, 2]]), np.array([0]), 8)
    print(f"first call (compile or cache load): {time.perf_counter() - start:.2f} s")
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
            _permutation._positions_kernel(keys, bounds, tokens, n, out, 0, 1)

        def all_cores(n: int = n, seeds: np.ndarray = seeds, tokens: np.ndarray = tokens) -> None:
            permuted_positions(seeds, tokens, n)

        reference = best_seconds(numpy_run, args.repeats) / args.numpy_seeds * 1e3
        single = best_seconds(one_thread, args.repeats) / args.seeds * 1e3
        spread = best_seconds(all_cores, args.repeats) / args.seeds * 1e3
        threads = _permutation._thread_count(args.seeds, n)
        print(
            f"N={n:>6}: numpy {reference:.3f} ms/seed, ours 1 thread {single:.3f} ms "
            f"(x{reference / single:.1f}), {threads} threads {spread:.3f} ms (x{reference / spread:.1f})"
        )


if __name__ == "__main__":
    main()
