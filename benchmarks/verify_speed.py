"""Verification speed: waterdrum-hf's ``verify_texts`` against waterfall 0.3.4's ``verify``.

Both score the same texts: ``--texts`` texts of ``--length`` tokens whose ids follow a bounded
Zipf law (frequent tokens have low ids, as in real BPE text), written as words ``w{id}`` of a
word-level tokenizer whose ``vocab_size`` is exactly N, so that tokenising returns the drawn
ids. Each text belongs to one of ``--owners`` keys and is scored under that key; waterfall
scores every text against every id it is given, so it gets one call per key with that key's
texts. Scores must agree to 1e-6.

Every measurement runs in its own subprocess, so that peak memory (``ru_maxrss``) belongs to
it alone; the one-off numba compile (or load from the on-disk cache) is timed separately and
excluded; in it the call is timed ``--repeats`` times after a warm-up (median and range).
Also reported: texts/s when each text is scored under 20 keys (``Verifier``'s null reference
path). The last line prints waterfall's median time over ours for every N; everything goes to
``benchmarks/results/verify_speed.json``.

    python benchmarks/verify_speed.py --texts 100 --multi-keys 2   # a few minutes on 2 cores
    python benchmarks/verify_speed.py                       # 1000 texts, N = 4096 and 128000
    python benchmarks/verify_speed.py --texts 200 --fresh-compile
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import timing

MEASUREMENTS = ("ours", "ours_multi_key", "waterfall")


def build_tokenizer(vocab_size: int) -> Any:
    """Word-level tokenizer: word ``w{i}`` is token i, ``vocab_size`` base tokens plus an eos."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.WordLevel({f"w{i}": i for i in range(vocab_size)}, unk_token="w0"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend)
    tokenizer.add_special_tokens({"eos_token": "<eos>"})
    assert tokenizer.vocab_size == vocab_size
    return tokenizer


def build_texts(args: argparse.Namespace, vocab_size: int) -> tuple[list[str], np.ndarray]:
    """Zipf-distributed token texts and their owner keys (deterministic in ``args.seed``)."""
    rng = np.random.default_rng(args.seed)
    weights = 1.0 / np.arange(1, vocab_size + 1) ** args.zipf
    ids = rng.choice(vocab_size, size=(args.texts, args.length), p=weights / weights.sum())
    texts = [" ".join(f"w{i}" for i in row) for row in ids]
    owner_keys = rng.integers(0, 2**32, size=args.owners)
    return texts, owner_keys[np.arange(args.texts) % args.owners]


def current_rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """One measurement (``args.worker``) at ``args.vocab_size``, in this process."""
    tokenizer = build_tokenizer(args.vocab_size)
    texts, keys = build_texts(args, args.vocab_size)
    result: dict[str, Any] = {}
    if args.worker == "waterfall":
        from waterfall.WatermarkerBase import Watermarker

        watermarker = Watermarker(tokenizer=tokenizer)
        groups = [(key, np.flatnonzero(keys == key)) for key in np.unique(keys)]
        watermarker.verify(texts[:2], id=[0], k_p=[1])  # warm imports and lazy inits

        def run() -> np.ndarray:
            scores = np.empty(len(texts))
            for key, members in groups:
                batch = [texts[i] for i in members]
                scores[members] = watermarker.verify(batch, id=[int(key)], k_p=[1])[:, 0, 0]
            return scores
    else:
        import waterdrum_hf
        from waterdrum_hf.schemes.permutation import (
            permutation_backend,
            permuted_positions,
        )

        start = time.perf_counter()
        permuted_positions(np.array([[1, 2]]), np.array([0]), args.vocab_size)
        result["first_call_s"] = time.perf_counter() - start
        result["backend"] = permutation_backend()
        if args.worker == "ours":

            def run() -> np.ndarray:
                return waterdrum_hf.verify_texts(texts, keys.tolist(), tokenizer, k_p=1)
        else:
            verifier = waterdrum_hf.Verifier(tokenizer, k_p=1, show_progress=False)

            def run() -> np.ndarray:
                return verifier.null_reference(texts, num_keys=args.multi_keys).scores

    timing.set_threads(args.threads)
    baseline = current_rss_mib()
    scores = run()
    result["seconds"] = timing.repeat(run, args.repeats, args.warmup).to_dict()
    result["peak_rss_mib"] = peak_rss_mib()
    result["peak_over_baseline_mib"] = result["peak_rss_mib"] - baseline
    np.save(args.scores_out, scores)
    return result


def spawn(
    args: argparse.Namespace, worker: str, vocab_size: int, scores_out: Path
) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter; returns its result and its scores."""
    command = [
        sys.executable, __file__, "--worker", worker, "--vocab-size", str(vocab_size),
        "--scores-out", str(scores_out), "--texts", str(args.texts), "--length", str(args.length),
        "--owners", str(args.owners), "--zipf", str(args.zipf), "--seed", str(args.seed),
        "--multi-keys", str(args.multi_keys), "--repeats", str(args.repeats),
        "--warmup", str(max(args.warmup - 1, 0)), "--threads", str(args.threads),
    ]  # fmt: skip
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false"}
    if args.fresh_compile:
        env["NUMBA_CACHE_DIR"] = str(scores_out.with_suffix(".numba-cache"))
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{worker} at N={vocab_size} failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["scores"] = np.load(scores_out)
    return result


def compare(
    args: argparse.Namespace, vocab_size: int, workdir: Path
) -> tuple[list[str], dict[str, Any]]:
    """Measure everything at one N; return the printed lines and the results."""
    results = {
        worker: spawn(args, worker, vocab_size, workdir / f"{worker}-{vocab_size}.npy")
        for worker in MEASUREMENTS
    }
    ours, multi, theirs = (results[w] for w in MEASUREMENTS)
    difference = float(np.max(np.abs(ours["scores"] - theirs["scores"])))
    if not difference <= 1e-6:
        raise AssertionError(f"N={vocab_size}: scores differ from waterfall by {difference:.3g}")
    times = {name: timing.Timing(tuple(r["seconds"]["runs"])) for name, r in results.items()}
    ratio = times["waterfall"].median / times["ours"].median
    lines = [
        f"N={vocab_size}: {args.texts} texts x {args.length} tokens, {args.owners} owner keys",
        f"  scores equal to waterfall (max |diff| {difference:.1e})",
        f"  ours ({ours['backend']}): first call (compile or cache load) {ours['first_call_s']:.2f} s",
    ]
    for name, label in (
        ("ours", "ours"),
        ("waterfall", "waterfall"),
        ("ours_multi_key", f"ours, {args.multi_keys} keys per text"),
    ):
        r = results[name]
        lines.append(
            f"  {label}: {times[name].describe()}, {times[name].rate(args.texts).describe('texts/s', 1)}, "
            f"peak RSS {r['peak_rss_mib']:.0f} MiB (+{r['peak_over_baseline_mib']:.0f} MiB in the calls)"
        )
    lines.append(f"  ratio of medians waterfall/ours x{ratio:.1f}")
    summary = {
        name: {k: v for k, v in r.items() if k != "scores"}
        | {"ms_per_text": times[name].per(args.texts / 1e3).to_dict()}
        for name, r in results.items()
    }
    return lines, {"max_abs_difference": difference, "ratio_waterfall_over_ours": ratio, **summary}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--length", type=int, default=200, help="tokens per text")
    parser.add_argument(
        "--owners", type=int, default=20, help="distinct keys; text i -> i %% owners"
    )
    parser.add_argument("--zipf", type=float, default=1.2, help="Zipf exponent of the token ids")
    parser.add_argument("--vocab-sizes", type=int, nargs="+", default=[4096, 128000])
    parser.add_argument("--multi-keys", type=int, default=20, help="keys per text, multi-key run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--fresh-compile", action="store_true", help="empty numba cache: time a real compile"
    )
    timing.add_arguments(parser)
    parser.add_argument("--worker", choices=MEASUREMENTS, help=argparse.SUPPRESS)
    parser.add_argument("--vocab-size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--scores-out", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if args.worker:
        print(json.dumps(measure(args)))
        return
    lines: list[str] = []
    results: dict[str, Any] = {"texts": args.texts, "length": args.length, "vocab_sizes": {}}
    with tempfile.TemporaryDirectory() as workdir:
        for n in args.vocab_sizes:
            printed, results["vocab_sizes"][str(n)] = compare(args, n, Path(workdir))
            lines += printed
    lines.append(
        "ratio waterfall/ours: "
        + ", ".join(
            f"N={n} x{results['vocab_sizes'][str(n)]['ratio_waterfall_over_ours']:.1f}"
            for n in args.vocab_sizes
        )
    )
    timing.write_results(args, __file__, results, lines)


if __name__ == "__main__":
    main()
