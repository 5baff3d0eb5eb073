"""EXP-edit verification speed: the compiled edit-distance statistic against a numpy and a
pure-Python implementation of the same statistic, measured in the same run.

Texts are ``--lengths`` tokens (64 and 200) whose ids follow a bounded Zipf law over a
Llama-3-sized vocabulary (frequent tokens have low ids and repeat, as in real BPE text).
What is timed, per text, with ``key_length`` 256 and ``gamma_edit`` 0 (the authors'):

* ``ours``: :meth:`EXPEditScheme.alignment_costs` of one text under its owner's key (the
  key's costs and the alignment over all 256 shifts), one text per call;
* ``ours_batch``: ``--texts`` texts in one call (both threads busy), per text;
* ``ours_null``: one text under its key and ``--null-keys`` more (what a p-value from the
  empirical null costs per text);
* ``numpy``: the same alignment in numpy, vectorised over the 256 shifts (Python loops over
  the text and the key positions), from the same cost table;
* ``python``: the authors' recurrence in plain Python, shift by shift (64 tokens only, as
  it takes seconds).

The baselines get the cost table ready-made (their time is the alignment alone); ours
includes computing it. Each baseline's result must equal ours to float32 precision. The
paper's 165.5 s per text (its Table 5) is quoted as the paper's: other hardware, other texts,
and presumably the authors' permutation test around the statistic, so the ratio to it is not
a like-for-like speed-up.

    python benchmarks/exp_edit_speed.py            # about a minute on 2 cores
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np
import timing

from waterdrum_hf.schemes.exp_edit.scheme import EXPEditScheme

PAPER_SECONDS = 165.5
"""The paper's verification time per text for adapted EXP-edit (Table 5; GPU: no)."""
VOCAB_SIZE = 128256
"""Llama-3's vocabulary (the paper's watermarking model)."""


def zipf_texts(count: int, length: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, VOCAB_SIZE + 1) ** 1.1
    return list(rng.choice(VOCAB_SIZE, size=(count, length), p=weights / weights.sum()))


def cost_table(scheme: EXPEditScheme, key: int, tokens: np.ndarray) -> np.ndarray:
    """``(len(tokens), key_length)``: ``log(1 - xi[j, tokens[i]])`` from the key's rows."""
    xi = scheme.key(key, VOCAB_SIZE)
    return np.log1p(-xi[:, tokens].T)


def numpy_statistic(costs: np.ndarray, gamma: float) -> float:
    """Least Levenshtein cost over the key's shifts, all shifts as one numpy vector."""
    k, n = costs.shape
    shifted = np.stack([np.roll(costs, -j, axis=1) for j in range(k)], axis=1)  # [i, jj, s]
    prev = np.arange(k + 1, dtype=np.float64)[:, None] * gamma * np.ones(n)
    for i in range(1, k + 1):
        cur = np.empty_like(prev)
        cur[0] = i * gamma
        for jj in range(1, k + 1):
            cur[jj] = np.minimum(
                np.minimum(prev[jj] + gamma, cur[jj - 1] + gamma),
                prev[jj - 1] + shifted[i - 1, jj - 1],
            )
        prev = cur
    return float(prev[k].min())


def python_statistic(costs: list[list[float]], gamma: float) -> float:
    """The authors' recurrence in plain Python, one shift at a time."""
    k, n = len(costs), len(costs[0])
    best = math.inf
    for shift in range(n):
        prev = [jj * gamma for jj in range(k + 1)]
        for i in range(1, k + 1):
            cur = [i * gamma] + [0.0] * k
            row = costs[i - 1]
            for jj in range(1, k + 1):
                cur[jj] = min(
                    prev[jj] + gamma, cur[jj - 1] + gamma, prev[jj - 1] + row[(shift + jj - 1) % n]
                )
            prev = cur
        best = min(best, prev[k])
    return best


def measure(args: argparse.Namespace, length: int) -> dict[str, Any]:
    scheme = EXPEditScheme()
    texts = zipf_texts(args.texts, length, seed=length)
    key = 20240601
    one = [texts[0]]
    ours = float(scheme.alignment_costs(one, np.array([[key]]), VOCAB_SIZE)[0][0, 0])
    costs = cost_table(scheme, key, texts[0])
    null_keys = np.array([[key, *range(1, args.null_keys + 1)]])
    runs: dict[str, Any] = {
        "ours": lambda: scheme.alignment_costs(one, np.array([[key]]), VOCAB_SIZE),
        "ours_batch": lambda: scheme.alignment_costs(
            texts, np.full((len(texts), 1), key), VOCAB_SIZE
        ),
        "ours_null": lambda: scheme.alignment_costs(one, null_keys, VOCAB_SIZE),
        "numpy": lambda: numpy_statistic(costs, 0.0),
    }
    if length <= 64:
        rows = costs.tolist()
        runs["python"] = lambda: python_statistic(rows, 0.0)
    for name in ("numpy", "python"):
        if name in runs:
            value = runs[name]()
            if not math.isclose(value, ours, rel_tol=1e-5):
                raise AssertionError(f"{name} statistic {value} != ours {ours} at {length} tokens")
    timings = timing.interleaved(runs, args.repeats, args.warmup)
    per_text = {
        name: t.per(len(texts)) if name == "ours_batch" else t for name, t in timings.items()
    }
    return {
        "tokens": length,
        "statistic": ours,
        "seconds_per_text": {name: t.to_dict() for name, t in per_text.items()},
        "numpy_over_ours": timings["numpy"].median / timings["ours"].median,
        **(
            {"python_over_ours": timings["python"].median / timings["ours"].median}
            if "python" in timings
            else {}
        ),
        "paper_over_ours": PAPER_SECONDS / timings["ours"].median,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[64, 200])
    parser.add_argument("--texts", type=int, default=32, help="texts in the batch timing")
    parser.add_argument("--null-keys", type=int, default=100, help="keys of the null timing")
    timing.add_arguments(parser, repeats=5)
    args = parser.parse_args()
    timing.set_threads(args.threads)
    results = {
        "vocab_size": VOCAB_SIZE,
        "key_length": EXPEditScheme().key_length,
        "gamma_edit": EXPEditScheme().gamma_edit,
        "paper_seconds_per_text": PAPER_SECONDS,
        "paper_note": "the paper's Table 5, other hardware and texts (not like for like)",
        "lengths": [measure(args, length) for length in args.lengths],
    }
    lines = []
    for row in results["lengths"]:
        times = row["seconds_per_text"]
        lines.append(
            f"{row['tokens']} tokens: ours {times['ours']['median'] * 1e3:.2f} ms per text "
            f"({times['ours_batch']['median'] * 1e3:.2f} ms in a batch of {args.texts}; "
            f"{times['ours_null']['median'] * 1e3:.1f} ms with {args.null_keys} null keys), "
            f"numpy {times['numpy']['median'] * 1e3:.0f} ms ({row['numpy_over_ours']:.0f}x)"
            + (
                f", pure Python {times['python']['median']:.2f} s ({row['python_over_ours']:.0f}x)"
                if "python" in times
                else ""
            )
            + f"; the paper's {PAPER_SECONDS} s is {row['paper_over_ours']:.0f}x ours "
            "(other hardware and texts)"
        )
    timing.write_results(args, __file__, results, lines)


if __name__ == "__main__":
    main()
