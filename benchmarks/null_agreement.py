"""The analytic null against the empirical one: null means, spreads and p-value decisions.

Owners each hold a few queries of a few samples (text in the word tokenizer of
``verify_speed.py``: word ``w{i}`` is token i, so N is exact). Half the owners' text is
unwatermarked (independent Zipf tokens: frequent pairs repeat, as in real text); half is
weakly watermarked under the owner's key (each token, with probability ``--strength``, is the
better of two Zipf draws for Waterfall's function k_p = 1 under the key, so p-values spread
around 0.05 and 0.01 instead of all reading 0). One ``waterdrum_result`` call per case scores
every owner with ``null="analytic"`` and with ``null_keys=K`` (the same texts, the same
owners); each owner's null mean, null standard deviation and p-value are compared.

Token ids are drawn from the top ``--active`` ids of the vocabulary: under a key that owns
nothing a token's permuted position is uniform whatever its id, and the exact kernel then
stops each shuffle after ``--active`` steps, so K in the thousands stays affordable at
N = 128,000.

Cases: several vocabulary sizes with ordinary owners (2 queries x 3 samples x 25 tokens),
then where the normal approximation is expected to break: very short sets (one sample of 4
tokens: 3 pairs), heavy pair repetition (samples that repeat two words, "w_a w_b w_a w_b ..."),
and KGW with gamma = 0.1 on short sets (a skewed term). Writes a Markdown table.

    python benchmarks/null_agreement.py --output-file benchmarks/results/null_agreement.md
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from verify_speed import build_tokenizer

from waterdrum_hf.schemes import KGWScheme, WaterfallScheme
from waterdrum_hf.schemes.permutation import permuted_positions
from waterdrum_hf.scoring import waterdrum_result
from waterdrum_hf.scoring.analytic_null import AnalyticNull, effective_pairs
from waterdrum_hf.scoring.verification import Verifier


@dataclass(frozen=True)
class Case:
    """One row of the table: a vocabulary, a scheme and the shape of every owner's data."""

    name: str
    vocab_size: int
    queries: int = 2
    samples: int = 3
    length: int = 25
    scheme: str = "waterfall"
    gamma: float | None = None
    repeat: bool = False


CASES = [
    Case("ordinary", 1_000),
    Case("ordinary", 8_000),
    Case("ordinary", 32_000),
    Case("ordinary", 128_000),
    Case("ordinary, KGW gamma 0.5", 32_000, scheme="kgw", gamma=0.5),
    Case("short: 1 sample of 4 tokens", 32_000, queries=1, samples=1, length=4),
    Case("repeated pairs: w_a w_b w_a ...", 32_000, queries=1, samples=3, length=25, repeat=True),
    Case("short, KGW gamma 0.1", 32_000, queries=1, samples=1, length=8, scheme="kgw", gamma=0.1),
]


def zipf_ids(rng: np.random.Generator, shape: tuple[int, ...], args: argparse.Namespace, n: int):
    """Zipf-distributed ids among the top ``--active`` ids of a vocabulary of ``n``."""
    active = min(args.active, n)
    weights = 1.0 / np.arange(1, active + 1) ** args.zipf
    return n - 1 - rng.choice(active, size=shape, p=weights / weights.sum())


def owner_texts(
    rng: np.random.Generator, case: Case, keys: np.ndarray, strength: np.ndarray, args
) -> list[list[list[str]]]:
    """Per owner, per query, its samples: watermarked where ``strength`` > 0 (token by token,
    all texts at once, so the exact kernel runs once per step)."""
    n = case.vocab_size
    rows = len(keys) * case.queries * case.samples
    owner_of = np.repeat(np.arange(len(keys)), case.queries * case.samples)
    if case.repeat:  # two words, alternating: one or two distinct pairs per sample
        pair = zipf_ids(rng, (rows, 2), args, n)
        ids = pair[:, np.arange(case.length) % 2]
    else:
        ids = zipf_ids(rng, (rows, case.length), args, n)
        challengers = zipf_ids(rng, (rows, case.length), args, n)
        marked = rng.random((rows, case.length)) < strength[owner_of][:, None]
        for j in range(1, case.length):
            seeds = np.stack([keys[owner_of], ids[:, j - 1]], axis=1)
            own = permuted_positions(seeds, ids[:, j], n)
            other = permuted_positions(seeds, challengers[:, j], n)
            better = np.cos(2 * np.pi * other / n) > np.cos(2 * np.pi * own / n)
            ids[:, j] = np.where(marked[:, j] & better, challengers[:, j], ids[:, j])
    words = [" ".join(f"w{i}" for i in row) for row in ids]
    per_owner = case.queries * case.samples
    return [
        [
            words[o * per_owner + q * case.samples : o * per_owner + (q + 1) * case.samples]
            for q in range(case.queries)
        ]
        for o in range(len(keys))
    ]


def effective_pairs_of(case: Case, tokenizer, texts: list[list[list[str]]]) -> float:
    """Median effective number of pairs of an owner's value (token pooling)."""
    verifier = Verifier(tokenizer, scheme=scheme_of(case))
    moments = verifier.scheme.null_moments(case.vocab_size)
    values = []
    for owner in texts:
        token_ids = verifier.token_ids([s for query in owner for s in query])
        contexts, tokens, sample_of = verifier.countable_pairs(token_ids)
        null = AnalyticNull(contexts, tokens, sample_of, len(token_ids), moments)
        counts = np.bincount(sample_of, minlength=len(token_ids))
        query_tokens = counts.reshape(case.queries, case.samples).sum(axis=1)
        weights = 1.0 / (case.queries * np.repeat(query_tokens, case.samples))
        values.append(effective_pairs(null.pair_weights(np.arange(len(token_ids)), weights)[0]))
    return float(np.median(values))


def scheme_of(case: Case) -> KGWScheme | WaterfallScheme:
    return KGWScheme(case.gamma) if case.scheme == "kgw" else WaterfallScheme(1)


def run_case(case: Case, args: argparse.Namespace) -> dict[str, float]:
    rng = np.random.default_rng(args.seed)
    keys = rng.choice(2**32, size=2 * args.owners, replace=False).astype(np.int64)
    # The repeated-pairs case is all unwatermarked: two alternating words carry no watermark.
    marked = np.arange(2 * args.owners) >= args.owners
    strength = np.where(marked & (not case.repeat), args.strength, 0.0)
    texts = owner_texts(rng, case, keys, strength, args)
    nested = [query for owner in texts for query in owner]
    references = np.repeat(keys, case.queries).tolist()
    tokenizer = build_tokenizer(case.vocab_size)
    common = {"scheme": scheme_of(case), "return_details": True}
    start = time.perf_counter()
    analytic = waterdrum_result(nested, references, tokenizer, null="analytic", **common)
    analytic_s = time.perf_counter() - start
    start = time.perf_counter()
    empirical = waterdrum_result(
        nested, references, tokenizer, null_keys=args.keys, null_seed=args.seed, **common
    )
    empirical_s = time.perf_counter() - start
    names = list(analytic.per_owner)  # owner-1.. in key order: unwatermarked first
    a = [analytic.per_owner[name] for name in names]
    e = [empirical.per_owner[name] for name in names]
    std_ratio = np.array([x.null_std / y.null_std for x, y in zip(a, e, strict=True)])
    mean_gap = np.array(
        [(x.null_mean - y.null_mean) / y.null_std for x, y in zip(a, e, strict=True)]
    )
    p_a, p_e = np.array([x.p_value for x in a]), np.array([y.p_value for y in e])
    clean = strength == 0
    row = {
        "std_ratio_median": float(np.median(std_ratio)),
        "std_ratio_iqr": float(np.subtract(*np.percentile(std_ratio, [75, 25]))),
        "mean_gap_max": float(np.abs(mean_gap).max()),
        "p_gap_median": float(np.median(np.abs(p_a - p_e))),
        "effective_pairs": effective_pairs_of(case, tokenizer, texts),
        "analytic_s": analytic_s,
        "empirical_s": empirical_s,
    }
    for alpha in (0.05, 0.01):
        row[f"agree_{alpha}"] = float(np.mean((p_a <= alpha) == (p_e <= alpha)))
        row[f"clean_analytic_{alpha}"] = float(np.mean(p_a[clean] <= alpha))
        row[f"clean_empirical_{alpha}"] = float(np.mean(p_e[clean] <= alpha))
        if (~clean).any():
            row[f"marked_analytic_{alpha}"] = float(np.mean(p_a[~clean] <= alpha))
            row[f"marked_empirical_{alpha}"] = float(np.mean(p_e[~clean] <= alpha))
    return row


def table(rows: list[tuple[Case, dict[str, float]]]) -> str:
    head = (
        "| case | N | scheme | pairs/owner | eff. pairs | sd ratio (IQR) | max mean gap (sd) | "
        "median abs p gap | agree at 0.05 / 0.01 | unwatermarked rejected at 0.05 / 0.01, "
        "analytic vs empirical | watermarked rejected at 0.05 / 0.01, analytic vs empirical "
        "| analytic s | empirical s |"
    )
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for case, r in rows:
        scheme = "waterfall k_p 1" if case.scheme == "waterfall" else f"kgw gamma {case.gamma}"
        pairs = case.queries * case.samples * (case.length - 1)
        lines.append(
            f"| {case.name} | {case.vocab_size:,} | {scheme} | {pairs} | "
            f"{r['effective_pairs']:.0f} | {r['std_ratio_median']:.3f} "
            f"({r['std_ratio_iqr']:.3f}) | {r['mean_gap_max']:.3f} | {r['p_gap_median']:.4f} | "
            f"{r['agree_0.05']:.1%} / {r['agree_0.01']:.1%} | "
            f"{r['clean_analytic_0.05']:.1%} vs {r['clean_empirical_0.05']:.1%} / "
            f"{r['clean_analytic_0.01']:.1%} vs {r['clean_empirical_0.01']:.1%} | "
            + (
                f"{r['marked_analytic_0.05']:.1%} vs {r['marked_empirical_0.05']:.1%} / "
                f"{r['marked_analytic_0.01']:.1%} vs {r['marked_empirical_0.01']:.1%} | "
                if "marked_analytic_0.05" in r
                else "(none) | "
            )
            + f"{r['analytic_s']:.2f} | {r['empirical_s']:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=2000, help="K of the empirical null")
    parser.add_argument("--owners", type=int, default=150, help="owners per kind per case")
    parser.add_argument("--strength", type=float, default=0.3, help="share of marked tokens")
    parser.add_argument("--active", type=int, default=1000, help="ids used, from the top")
    parser.add_argument("--zipf", type=float, default=1.1, help="Zipf exponent of the ids")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-file", help="write the Markdown table here too")
    args = parser.parse_args()
    rows = []
    for case in CASES:
        rows.append((case, run_case(case, args)))
        print(f"{case.name}, N={case.vocab_size}: {rows[-1][1]}", file=sys.stderr, flush=True)
    text = (
        f"{args.owners} unwatermarked and {args.owners} watermarked owners per case "
        f"(strength {args.strength}), K = {args.keys} null keys, ids among the top "
        f"{args.active} of N (Zipf {args.zipf}), seed {args.seed}. Per owner: sd ratio = "
        "analytic / empirical null standard deviation (median, and its interquartile range); "
        "mean gap = (analytic - empirical null mean) / empirical sd; p gap = |analytic p - "
        "empirical p|; agree = share of owners with the same decision (p <= alpha) under "
        "both nulls. Sampling error of the empirical sd at this K: about "
        f"{1 / np.sqrt(2 * args.keys):.1%}.\n\n" + table(rows) + "\n"
    )
    print(text)
    if args.output_file:
        Path(args.output_file).write_text(
            "# Analytic against empirical null\n\n"
            "`python benchmarks/null_agreement.py " + " ".join(sys.argv[1:]) + "`\n\n" + text
        )


if __name__ == "__main__":
    main()
