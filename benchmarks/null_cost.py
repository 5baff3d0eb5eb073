"""What a p-value costs: plain scoring against the empirical null (K = 20, 100) and the
analytic null, in one run at the paper's vocabulary size (N = 128,000).

Texts as in ``verify_speed.py`` (Zipf token ids, word tokenizer of exactly N words), one
query each, ``--owners`` owners of which two are forgotten; every call is
``waterdrum_result(..., return_details=True)`` (sets and per-owner values). Plain scoring and
the analytic null are timed ``--repeats`` times, interleaved, best time kept; each empirical
null once. Also timed: the empirical null's K = 20 token sums through the per-key route
(``Verifier.token_sums``, what the null used before keys were batched), against the batched
route on the same keys. The numba kernel is loaded before timing. Prints one line per
measurement and the ratio analytic / plain (goal: under 1.2).

    python benchmarks/null_cost.py --texts 250
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from verify_speed import build_texts, build_tokenizer

from waterdrum_hf.keys import random_keys
from waterdrum_hf.metric import waterdrum_result
from waterdrum_hf.verification import Verifier


def timed(function, *args, **kwargs) -> tuple[float, object]:
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab-size", type=int, default=128_000)
    parser.add_argument("--texts", type=int, default=250)
    parser.add_argument("--length", type=int, default=175, help="tokens per text")
    parser.add_argument("--owners", type=int, default=20)
    parser.add_argument("--zipf", type=float, default=1.1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    tokenizer = build_tokenizer(args.vocab_size)
    texts, owners = build_texts(args, args.vocab_size)
    forget = np.unique(owners)[:2].tolist()
    score = {"forget_ids": forget, "return_details": True}
    waterdrum_result(texts[:2], owners[:2].tolist(), tokenizer)  # load the compiled kernel

    plain, analytic = [], []
    for _ in range(args.repeats):
        plain.append(timed(waterdrum_result, texts, owners.tolist(), tokenizer, **score)[0])
        seconds, result = timed(
            waterdrum_result, texts, owners.tolist(), tokenizer, null="analytic", **score
        )
        analytic.append(seconds)
    print(
        f"N = {args.vocab_size:,}, {args.texts} texts of {args.length} tokens, "
        f"{args.owners} owners (2 forgotten)"
    )
    print(f"plain scoring:        {min(plain):8.2f} s")
    for keys in (20, 100):
        seconds, empirical = timed(
            waterdrum_result, texts, owners.tolist(), tokenizer, null_keys=keys, **score
        )
        print(
            f"empirical null K={keys:<3}: {seconds:8.2f} s  ({seconds / min(plain):.1f}x plain; "
            f"forget p = {empirical.forget.p_value:.3f})"
        )
    print(
        f"analytic null:        {min(analytic):8.2f} s  (forget p = {result.forget.p_value:.3g}, "
        f"null sd {result.forget.null_std:.4f} vs empirical K=100 {empirical.forget.null_std:.4f})"
    )
    verifier = Verifier(tokenizer)
    token_ids = verifier.token_ids(texts)
    keys = random_keys(20, seed=args.seed)
    per_key, old = timed(verifier.token_sums, token_ids, np.broadcast_to(keys, (len(texts), 20)))
    batched, new = timed(verifier.shared_key_sums, token_ids, keys)
    assert np.array_equal(old[0], new[0]), "the batched null must give the per-key sums"
    print(
        f"null token sums K=20: per-key route {per_key:.2f} s, batched {batched:.2f} s "
        f"({per_key / batched:.2f}x), bit-identical"
    )
    print(f"ratio analytic / plain: {min(analytic) / min(plain):.3f} (goal < 1.2)")


if __name__ == "__main__":
    main()
