"""Scale of ``verify_dataset``: a million short generations, flat memory, one and two processes.

The data: ``--texts`` texts of ``--min-tokens``..``--max-tokens`` tokens of the built-in tiny
model's 4096-token BPE, cut from its training corpus at random offsets (real, Zipf-like text),
each owned by one of ``--owners`` keys derived with ``key_from_secret``. It is generated in a
subprocess and written to an Arrow dataset on disk (in chunks, so memory stays flat), together
with its first ``--small`` rows as a second dataset.

Every run is a subprocess that loads a dataset from disk and calls ``verify_dataset`` on it
(cache files of earlier runs removed first), so that its peak memory belongs to it alone:
``ru_maxrss`` of the process itself and, with ``num_proc``, of its largest worker. Peak RSS
includes the pages of the memory-mapped Arrow files that the run has read (the kernel drops
them under pressure), so a thread also samples the anonymous memory (``RssAnon``: heap and
buffers) of the process and its workers every 50 ms and reports the peak. Runs: the
small and the large dataset with one process, the large one with ``--num-proc`` processes, the
large one with one process at each of ``--batch-sizes``, and a call served from the cache.
Each setting runs in its own process, which warms the kernel, then scores ``--repeats`` times
(the cache files removed before each): seconds and texts/s are the median and range, memory
the peak over the repeats. A sample of scores is checked against
``verify_texts``. The last lines print the ratios: peak RSS and peak anonymous memory, large
over small (flat memory is ~1), and texts/s with ``--num-proc`` processes over one. Everything
goes to ``benchmarks/results/verify_dataset_scale.json``.

    python benchmarks/verify_dataset_scale.py --texts 40000 --batch-sizes 10000   # ~4 minutes
    python benchmarks/verify_dataset_scale.py --repeats 3       # 1,000,000 and 10,000 texts
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import timing

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=1_000_000, help="rows of the large run")
    parser.add_argument("--small", type=int, default=10_000, help="rows of the small run")
    parser.add_argument("--owners", type=int, default=8, help="owner keys")
    parser.add_argument("--min-tokens", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=1000, help="verify_dataset batch_size")
    parser.add_argument("--num-proc", type=int, default=2, help="processes of the parallel run")
    parser.add_argument("--batch-sizes", type=int, nargs="*", default=[], help="more batch sizes")
    parser.add_argument("--seed", type=int, default=0)
    timing.add_arguments(parser, repeats=5, threads=2)
    parser.add_argument("--workdir", help="where the datasets go (default: a temporary folder)")
    parser.add_argument("--child", choices=["data", "score"], help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--tokenizer", help=argparse.SUPPRESS)
    parser.add_argument("--proc", type=int, default=0, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def peak_rss_mib() -> tuple[float, float]:
    """Peak RSS (MiB) of this process and of its largest reaped child (Linux: KiB units)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return own, children


def anonymous_mib(pid: int | str = "self") -> float:
    """Current anonymous RSS (MiB) of a process (0 if it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    line = next((ln for ln in status.splitlines() if ln.startswith("RssAnon:")), "RssAnon: 0")
    return int(line.split()[1]) / 1024


def child_pids() -> list[int]:
    """Processes whose parent is this one (the ``num_proc`` workers)."""
    me, pids = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == me:
                pids.append(int(entry.name))
    return pids


class AnonymousPeak(threading.Thread):
    """Samples the anonymous RSS of this process and of its largest worker; keeps the peaks."""

    def __init__(self, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.own = self.workers = 0.0
        self.done = threading.Event()

    def sample(self) -> None:
        self.own = max(self.own, anonymous_mib())
        self.workers = max([self.workers, *(anonymous_mib(pid) for pid in child_pids())])

    def run(self) -> None:
        self.sample()
        while not self.done.wait(self.interval):
            self.sample()

    def stop(self) -> AnonymousPeak:
        self.done.set()
        self.join()
        self.sample()
        return self


# ---- children ------------------------------------------------------------------------------


def make_data(args: argparse.Namespace) -> None:
    """Write the large and the small dataset under ``args.path``; print the tokenizer path."""
    from datasets import Dataset

    import waterdrum_hf.tiny as tiny
    from waterdrum_hf.data import toy_corpus
    from waterdrum_hf.keys import key_from_secret

    _, tokenizer = tiny.load(show_progress=False)
    corpus = "\n\n".join(toy_corpus()["text"])
    stream = np.array(tokenizer(corpus, add_special_tokens=False)["input_ids"])
    keys = [key_from_secret("benchmark secret", f"owner-{i}") for i in range(args.owners)]

    def rows(count: int, seed: int):
        rng = np.random.default_rng(seed)
        for start in range(0, count, 10_000):
            size = min(10_000, count - start)
            lengths = rng.integers(args.min_tokens, args.max_tokens + 1, size=size)
            offsets = rng.integers(0, len(stream) - args.max_tokens, size=size)
            windows = [stream[o : o + n].tolist() for o, n in zip(offsets, lengths, strict=True)]
            texts = tokenizer.batch_decode(windows, clean_up_tokenization_spaces=False)
            for i, text in enumerate(texts):
                yield {"text": text, "owner_id": keys[(start + i) % len(keys)]}

    root = Path(args.path)
    for name, count in (("large", args.texts), ("small", args.small)):
        generated = Dataset.from_generator(
            rows,
            gen_kwargs={"count": count, "seed": args.seed},
            cache_dir=str(root / f"generator-{name}"),
        )
        generated.save_to_disk(str(root / name))
        shutil.rmtree(root / f"generator-{name}")
    print(json.dumps({"tokenizer": tokenizer.name_or_path}))


def score(args: argparse.Namespace) -> None:
    """Verify one dataset; print seconds, texts/s, peak RSS and a correctness check."""
    from datasets import disable_progress_bars, load_from_disk
    from transformers import AutoTokenizer

    from waterdrum_hf.scoring.dataset_verification import verify_dataset
    from waterdrum_hf.scoring.verification import verify_texts

    disable_progress_bars()
    timing.set_threads(args.threads)
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    verify_texts(["warm up the compiled kernel"], 1, tokenizer)
    dataset = load_from_disk(args.path)
    baseline, anonymous_before = peak_rss_mib()[0], anonymous_mib()
    sampler = AnonymousPeak()
    sampler.start()
    seconds = []
    for repeat in range(args.repeats):  # each repeat scores afresh: the cache files removed
        if repeat:
            clear_cache_files(Path(args.path))
        start = time.perf_counter()
        scored = verify_dataset(
            dataset,
            text_column="text",
            id_column="owner_id",
            watermark_tokenizer=tokenizer,
            batch_size=args.batch_size,
            num_proc=args.proc or None,
        )
        seconds.append(time.perf_counter() - start)
    own, workers = peak_rss_mib()
    sampler.stop()
    sample = np.random.default_rng(1).choice(
        len(scored), size=min(1000, len(scored)), replace=False
    )
    rows = scored.select(np.sort(sample))
    expected = verify_texts(rows["text"], rows["owner_id"], tokenizer)
    got = np.asarray(rows["watermark_score"])
    agree = bool(np.allclose(got, expected, rtol=0, atol=1e-12, equal_nan=True))
    print(
        json.dumps(
            {
                "texts": len(scored),
                "seconds": seconds,
                "rss_before_mib": baseline,
                "peak_rss_mib": own,
                "peak_worker_rss_mib": workers,
                "anonymous_before_mib": anonymous_before,
                "peak_anonymous_mib": sampler.own,
                "peak_worker_anonymous_mib": sampler.workers,
                "matches_verify_texts": agree,
                "unscored": int(np.isnan(np.asarray(scored["watermark_score"])).sum()),
            }
        )
    )


# ---- parent --------------------------------------------------------------------------------


def child(args: argparse.Namespace, *extra: str) -> dict:
    """Run this script as a child; return the JSON of its last output line."""
    command = [sys.executable, __file__]
    names = (
        "owners",
        "min_tokens",
        "max_tokens",
        "batch_size",
        "seed",
        "texts",
        "small",
        "threads",
    )
    for name in names:
        command += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    command += extra  # last: its --batch-size wins
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def clear_cache_files(path: Path) -> None:
    for cache in path.glob("cache-*.arrow"):
        cache.unlink()


def repeated(args: argparse.Namespace, root: Path, tokenizer: str, run: tuple) -> dict:
    """One setting ``(dataset, processes, fresh, batch size)`` in one child process that scores
    ``args.repeats`` times (once when served from the cache): times as median and range,
    memory as the peak over the repeats."""
    name, proc, fresh, batch_size = run
    if fresh:
        clear_cache_files(root / name)
    extra = ["--child", "score", "--path", str(root / name), "--tokenizer", tokenizer]
    extra += ["--proc", str(proc), "--batch-size", str(batch_size)]
    outcome = child(args, *extra, "--repeats", str(args.repeats if fresh else 1))
    seconds = timing.Timing(tuple(outcome.pop("seconds")))
    return {
        "processes": proc or 1,
        "cached": not fresh,
        "batch_size": batch_size,
        "seconds": seconds.to_dict(),
        "texts_per_s": seconds.rate(outcome["texts"]).to_dict(),
        **outcome,
    }


def row(result: dict) -> str:
    """One printed line of a setting's results."""
    rate = result["texts_per_s"]
    return (
        f"{result['texts']:>10,} {result['processes']:>4} {result['batch_size']:>6} "
        f"{'hit' if result['cached'] else '':>5} {result['seconds']['median']:>8.2f} "
        f"{rate['median']:>7,.0f} ({rate['min']:,.0f}-{rate['max']:,.0f}) "
        f"{result['rss_before_mib']:>6.0f}M {result['peak_rss_mib']:>5.0f}M "
        f"{result['peak_worker_rss_mib']:>6.0f}M {result['anonymous_before_mib']:>6.0f}M "
        f"{result['peak_anonymous_mib']:>5.0f}M {result['peak_worker_anonymous_mib']:>6.0f}M "
        f"{result['unscored']:>5} {'ok' if result['matches_verify_texts'] else 'MISMATCH'}"
    )


def main() -> None:
    args = parse_args()
    if args.child == "data":
        return make_data(args)
    if args.child == "score":
        return score(args)
    timing.set_threads(args.threads)
    root = Path(args.workdir or tempfile.mkdtemp(prefix="verify-dataset-scale-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        start = time.perf_counter()
        tokenizer = child(args, "--child", "data", "--path", str(root))["tokenizer"]
        lines = [
            f"data: {args.texts:,} + {args.small:,} texts in {time.perf_counter() - start:.0f} s; "
            f"seconds and texts/s: median (range) of {args.repeats} runs"
        ]
        runs = {
            "small": ("small", 0, True, args.batch_size),
            "large": ("large", 0, True, args.batch_size),
            "parallel": ("large", args.num_proc, True, args.batch_size),
            "cached": ("large", args.num_proc, False, args.batch_size),  # the parallel run's cache
            **{f"batch {b}": ("large", 0, True, b) for b in args.batch_sizes},
        }
        header = f"{'texts':>10} {'proc':>4} {'batch':>6} {'cache':>5} {'seconds':>8} "
        header += f"{'texts/s (range)':>23} {'RSS: before':>7} {'peak':>6} {'worker':>7} "
        lines.append(header + f"{'anon: before':>7} {'peak':>6} {'worker':>7} {'NaN':>5} check")
        results = {label: repeated(args, root, tokenizer, run) for label, run in runs.items()}
        lines += [row(result) for result in results.values()]
        small, large, parallel = results["small"], results["large"], results["parallel"]
        ratios = {
            "peak_rss_large_over_small": large["peak_rss_mib"] / small["peak_rss_mib"],
            "peak_anonymous_large_over_small": large["peak_anonymous_mib"]
            / small["peak_anonymous_mib"],
            "texts_per_s_parallel_over_one": parallel["texts_per_s"]["median"]
            / large["texts_per_s"]["median"],
        }
        lines += [
            f"peak RSS, {large['texts']:,} over {small['texts']:,} texts (1 process): "
            f"{ratios['peak_rss_large_over_small']:.2f}",
            f"peak anonymous, {large['texts']:,} over {small['texts']:,} texts (1 process): "
            f"{ratios['peak_anonymous_large_over_small']:.2f}",
            f"texts/s, {args.num_proc} processes over 1 ({large['texts']:,} texts, medians): "
            f"{ratios['texts_per_s_parallel_over_one']:.2f}",
        ]
        timing.write_results(args, __file__, {"runs": results, "ratios": ratios}, lines)
    finally:
        if not args.workdir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
