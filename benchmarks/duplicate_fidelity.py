"""How faithful a duplicate can be and how strong its watermark stays, on the built-in corpus.

The paper's duplicates copy a forget owner's text (exact) or paraphrase it (semantic, GPT-4)
and carry a retain owner's watermark. Here every passage of the built-in corpus's owners is
duplicated under the next owner's key, at each point of a grid of the knobs this scale has:

* ``paraphrase``: Waterfall by paraphrasing with the built-in small model (the reproduction's
  watermarking) at kappa 0.5, 1, 2 (the paper's) and 4;
* ``substitution``: Waterfall by substituting tokens of the text itself
  (:mod:`waterdrum_hf.experiments.reproduction.substitution`) at kappa 1, 2 and 4, each with a
  preference for the source token (``copy_bias``) of 2 and 8.

Exact duplicates start from the original text, semantic ones from the small model's
unwatermarked paraphrase of it (kappa 0, as the reproduction makes them). Per point: fidelity,
the ROUGE-L recall of the duplicate against the original text, and strength, the duplicate's
Waterfall verification score under its key; each a mean with its 95 % t interval over the
passages. The paper's fidelity is 1.00 for exact duplicates (literal copies, unwatermarked) and
0.69 for semantic ones; its strength, the score its watermarked texts read, is not published
per duplicate, so the corpus's own watermark (paraphrase at kappa 2) is the yardstick here.

    python benchmarks/duplicate_fidelity.py            # 5 owners x 10 passages (minutes)
    python benchmarks/duplicate_fidelity.py --quick    # 2 owners x 2 passages, two points
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

RESULTS = Path(__file__).resolve().parent / "results" / "duplicate_fidelity"
PARAPHRASE_KAPPAS = (0.5, 1.0, 2.0, 4.0)
SUBSTITUTION = tuple((kappa, bias) for kappa in (1.0, 2.0, 4.0) for bias in (2.0, 8.0))
PAPER_FIDELITY = {"exact": 1.00, "semantic": 0.69}
"""ROUGE-L recall of the paper's duplicates against their forget text (unwatermarked data)."""


def interval(values: list[float]) -> dict[str, float]:
    """Mean and 95 % Student's t interval over the passages."""
    array = np.asarray(values, dtype=float)
    low, high = stats.t.interval(0.95, len(array) - 1, loc=array.mean(), scale=stats.sem(array))
    return {"mean": float(array.mean()), "low": float(low), "high": float(high)}


def measure(duplicates: list[str], sources: list[str], keys: list[int], tokenizer: Any) -> dict:
    """Each duplicate's fidelity to its source and its watermark score under its key."""
    from waterdrum_hf.baselines import rouge_l_recall
    from waterdrum_hf.scoring.verification import verify_texts

    return {
        "fidelity": [float(v) for v in rouge_l_recall(duplicates, sources)],
        "strength": [float(v) for v in verify_texts(duplicates, keys, tokenizer)],
    }


def run(quick: bool, output_dir: Path, show_progress: bool) -> dict[str, Any]:
    from waterdrum_hf import tiny
    from waterdrum_hf.data import toy_corpus
    from waterdrum_hf.experiments.pipeline import CachedPipeline
    from waterdrum_hf.experiments.reproduction.substitution import substitution_watermark
    from waterdrum_hf.keys import random_keys
    from waterdrum_hf.utils.torch_plumbing import torch_threads

    owners, passages = (2, 2) if quick else (5, 10)
    corpus = toy_corpus(owners, max_passages_per_owner=passages)
    keys = random_keys(owners, seed=0).tolist()  # secret, never shown
    originals = list(corpus["text"])
    own = [keys[o] for o in corpus["owner_id"]]
    other = [keys[(o + 1) % owners] for o in corpus["owner_id"]]  # the duplicate's owner
    model, tokenizer = tiny.load(show_progress=show_progress)
    pipeline = CachedPipeline(model, tokenizer, output_dir / "cache", show_progress=show_progress)
    paraphrase = {"seed": 0, "no_repeat_ngram_size": 3}  # as the reproduction paraphrases
    points: list[dict[str, Any]] = []
    start = time.perf_counter()
    with torch_threads(1):
        corpus_texts, _ = pipeline.watermark("corpus", originals, own, kappa=2.0, **paraphrase)
        reference = measure(corpus_texts, originals, own, tokenizer)
        paraphrased, _ = pipeline.watermark("paraphrase", originals, other, kappa=0.0, **paraphrase)
        sources = {"exact": originals, "semantic": paraphrased}
        kappas = PARAPHRASE_KAPPAS[2:3] if quick else PARAPHRASE_KAPPAS
        for kind, texts in sources.items():
            for kappa in kappas:
                name = f"{kind}-paraphrase-{kappa:g}"
                duplicates, _ = pipeline.watermark(name, texts, other, kappa=kappa, **paraphrase)
                points.append({"kind": kind, "method": "paraphrase", "kappa": kappa,
                               **measure(duplicates, originals, other, tokenizer)})  # fmt: skip
            for kappa, bias in SUBSTITUTION[2:3] if quick else SUBSTITUTION:
                duplicates = substitution_watermark(
                    model, tokenizer, texts, other, kappa=kappa, copy_bias=bias
                )
                points.append({"kind": kind, "method": "substitution", "kappa": kappa,
                               "copy_bias": bias,
                               **measure(duplicates, originals, other, tokenizer)})  # fmt: skip
    command = " ".join(["python", "benchmarks/duplicate_fidelity.py", *sys.argv[1:]])
    return {
        "command": command,
        "owners": owners,
        "passages_per_owner": passages,
        "reference": reference,
        "points": points,
        "paper_fidelity": PAPER_FIDELITY,
        "seconds": round(time.perf_counter() - start, 1),
    }


def knob(point: dict[str, Any]) -> str:
    if point["method"] == "paraphrase":
        return f"paraphrase, kappa {point['kappa']:g}"
    return f"substitution, kappa {point['kappa']:g}, copy_bias {point['copy_bias']:g}"


def cell(summary: dict[str, float]) -> str:
    return f"{summary['mean']:.3f} [{summary['low']:.3f}, {summary['high']:.3f}]"


def markdown(results: dict[str, Any]) -> str:
    reference = {k: interval(v) for k, v in results["reference"].items()}
    n = results["owners"] * results["passages_per_owner"]
    lines = [
        "# Duplicates: fidelity against watermark strength",
        "",
        f"`{results['command']}` ({results['seconds'] / 60:.1f} minutes). {n} passages "
        f"({results['owners']} owners x {results['passages_per_owner']}), each duplicated under "
        "the next owner's key; each cell the mean [95 % t interval] over the passages. "
        "Fidelity: ROUGE-L recall of the duplicate against the original passage (the paper's "
        f"duplicates: exact {results['paper_fidelity']['exact']:.2f}, semantic "
        f"{results['paper_fidelity']['semantic']:.2f}). Strength: the duplicate's Waterfall "
        "verification score under its key. The corpus's own watermark (paraphrase, kappa 2) "
        f"reads fidelity {cell(reference['fidelity'])} and strength "
        f"{cell(reference['strength'])}.",
        "",
        "| duplicate | watermarking | fidelity | strength |",
        "| --- | --- | --- | --- |",
    ]
    for point in results["points"]:
        fidelity, strength = interval(point["fidelity"]), interval(point["strength"])
        lines.append(f"| {point['kind']} | {knob(point)} | {cell(fidelity)} | {cell(strength)} |")
    lines += ["", "![fidelity against strength](fidelity_strength.png)", ""]
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path) -> None:
    from waterdrum_hf.report import new_figure, save_figure

    fig, axes = new_figure(9.0, 4.0, ncols=2)
    reference = {k: interval(v) for k, v in results["reference"].items()}
    for ax, kind in zip(axes, ("exact", "semantic"), strict=True):
        for method, marker in (("paraphrase", "o"), ("substitution", "s")):
            chosen = [p for p in results["points"] if p["kind"] == kind and p["method"] == method]
            xs = [interval(p["fidelity"])["mean"] for p in chosen]
            ys = [interval(p["strength"])["mean"] for p in chosen]
            ax.plot(xs, ys, marker=marker, linestyle="", label=method)
            for x, y, p in zip(xs, ys, chosen, strict=True):
                ax.annotate(knob(p).split(", ", 1)[1], (x, y), fontsize=6)
        ax.axvline(results["paper_fidelity"][kind], color="grey", linestyle="--",
                   label="the paper's fidelity")  # fmt: skip
        ax.axhline(reference["strength"]["mean"], color="black", linestyle=":",
                   label="the corpus's own watermark")  # fmt: skip
        ax.set_xlim(0, 1.05)
        ax.set_xlabel("fidelity (ROUGE-L recall against the original)")
        ax.set_ylabel("strength (verification score under its key)")
        ax.set_title(f"{kind} duplicates")
    axes[-1].legend(fontsize=7)
    save_figure(fig, path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke test (2 owners, 2 points)")
    parser.add_argument("--output-dir", type=Path, help="results folder (quick: a temporary one)")
    parser.add_argument("--progress", action="store_true", help="progress bars")
    args = parser.parse_args(argv)
    default = Path(tempfile.gettempdir()) / "duplicate-fidelity-quick" if args.quick else RESULTS
    out = args.output_dir or default
    out.mkdir(parents=True, exist_ok=True)
    results = run(args.quick, out, args.progress)
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    (out / "results.md").write_text(markdown(results))
    plot(results, out / "fidelity_strength.png")
    print(markdown(results))


if __name__ == "__main__":
    main()
