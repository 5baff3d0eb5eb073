"""The model owner's own watermark (the paper's dilution study): the deployed model
watermarks its outputs under a key of its own, and the data owners still verify theirs.

This is the reproduction's resilience experiment (:func:`~waterdrum_hf.experiments.reproduction.resilience.diluted_values`, the code
behind ``resilience`` in ``waterdrum reproduce``), run for four model-owner schemes and every
seed instead of Waterfall on the first seed:

* ``none``: no model owner's watermark;
* ``waterfall``: adapted Waterfall, kappa 2 (the reproduction's ``dilution_kappa``);
* ``kgw``: KGW, gamma 0.5, delta 2 (the paper's setting);
* ``its``: ITS, inverse transform sampling (Kuditipudi et al., 2023), key length 256
  (:mod:`waterdrum_hf.schemes.its.scheme`): a distortion-free sampler, the paper's third row;
* ``unigram``: the Unigram watermark (Zhao et al., 2023), gamma 0.5, delta 2
  (:mod:`waterdrum_hf.schemes.unigram.scheme`), not in the paper: a logit-bias scheme like KGW with
  one fixed green list.

The model owner's key differs per seed and from every data owner's. The data owners' scheme
is Waterfall (the reproduction's default). Each model of the reproduction's no-duplicate
setting (retrained on the retain side plus k % of the forget set) samples its completions with
the model owner's watermark; D1 is the AUROC on the k = 0 model, D2 the R^2 of the forget
value against k. The trained models stay in the stage cache under ``--cache-from`` (default:
``benchmarks/results/reproduction/cache``, shared with ``benchmarks/reproduce_paper.py``), so
a second run, or one after a reproduction, reuses the stages whose settings match.

    python benchmarks/dilution.py            # full: the scheme comparison's size (3 seeds,
                                             # k = 0, 20, ..., 100 %); writes
                                             # benchmarks/results/dilution/
    python benchmarks/dilution.py --quick    # smoke test: 4 owners, k = 0, 50, 100 %, 1 seed
    python benchmarks/dilution.py --render   # only summarise the committed results again
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "dilution"
REPRODUCTION = ROOT / "benchmarks" / "results" / "reproduction"
PAPER = {  # the paper's table "watermarking for a model owner" (WaterDrum-Ax): D1 AUROC, D2 R^2
    "none": (0.964, 0.963),
    "waterfall": (0.923, 0.936),
    "kgw": (0.944, 0.948),
    "its": (0.955, 0.965),
    "unigram": None,  # not in the paper
}
LABELS = {
    "none": "none",
    "waterfall": "adapted Waterfall (kappa 2)",
    "kgw": "KGW (gamma 0.5, delta 2)",
    "its": "ITS (Kuditipudi et al., key length 256)",
    "unigram": "Unigram (gamma 0.5, delta 2)",
}
GAMMA, DELTA = 0.5, 2.0
SETTINGS_SHOWN = (
    "owners", "forget", "passages_per_owner", "fractions", "seeds", "epochs", "num_samples",
    "max_new_tokens", "dilution_kappa",
)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke test (a few minutes)")
    parser.add_argument("--output-dir", type=Path, help="results folder (quick: a temporary one)")
    parser.add_argument(
        "--cache-from",
        type=Path,
        help="a reproduction output folder whose cache/ holds (or will hold) the models "
        "(default: the reproduction's results folder; quick: the results folder)",
    )
    parser.add_argument("--progress", action="store_true", help="progress bars")
    parser.add_argument(
        "--render", action="store_true", help="only summarise results.json again (seconds)"
    )
    args = parser.parse_args()
    out = args.output_dir or (
        Path(tempfile.gettempdir()) / "dilution-quick" if args.quick else RESULTS
    )
    if args.render:
        render(out)
        return
    config = reproduction_config(
        args.quick, args.cache_from or (out if args.quick else REPRODUCTION), args.progress
    )
    from waterdrum_hf.utils.torch_plumbing import torch_threads

    start = time.perf_counter()
    with torch_threads(1):
        per_seed = run(config)
    seconds = time.perf_counter() - start
    results = {
        "per_seed": per_seed,
        "summary": summarise(per_seed),
        "paper": PAPER,
        "config": {k: v for k, v in asdict(config).items() if k in SETTINGS_SHOWN},
        "gamma": GAMMA,
        "delta": DELTA,
        "seconds": round(seconds, 1),
        "machine": f"{platform.machine()}, {platform.system()}",
        "command": "python benchmarks/dilution.py" + (" --quick" if args.quick else ""),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    (out / "results.md").write_text(markdown(results))
    print(markdown(results))
    print(f"wrote {out}/results.md and results.json in {seconds / 60:.1f} min")


def reproduction_config(quick: bool, cache_from: Path, progress: bool) -> Any:
    """The reproduction's configuration of the no-duplicate setting at a scheme comparison's
    size (:attr:`ReproductionConfig.COMPARISON`: k = 0, 20, ..., 100 %; 3 seeds), or its quick
    one (k = 0, 50, 100 %); its output folder only holds the stage cache."""
    from waterdrum_hf.experiments.reproduction import ReproductionConfig

    common = {
        "output_dir": str(cache_from),
        "settings": ("no_duplicate",),
        "show_progress": progress,
    }
    if quick:
        return ReproductionConfig.quick(**common)
    return ReproductionConfig(**{**ReproductionConfig.COMPARISON, **common})


def run(config: Any) -> dict[int, dict[str, dict[str, float]]]:
    """Seed -> {"auroc": {scheme: value}, "r2": {scheme: value}}."""
    from waterdrum_hf.experiments.reproduction.experiment import Reproduction
    from waterdrum_hf.experiments.reproduction.resilience import diluted_values, model_owner_key
    from waterdrum_hf.schemes import KGWScheme
    from waterdrum_hf.schemes.its.scheme import ITSWatermark
    from waterdrum_hf.schemes.unigram.scheme import UnigramWatermark
    from waterdrum_hf.schemes.waterfall.processor import WaterfallLogitsProcessor

    reproduction = Reproduction(config)
    (data,) = reproduction.prepare()
    measured = reproduction.calibrate(data, baselines=False)
    vocab_size = reproduction.tokenizer.vocab_size
    per_seed = {}
    for seed in config.seeds:
        key = model_owner_key(data, seed)  # secret: never shown
        processors = {
            "waterfall": WaterfallLogitsProcessor(vocab_size, key, kappa=config.dilution_kappa),
            "kgw": KGWScheme(gamma=GAMMA).logits_processor(vocab_size, key, delta=DELTA),
            "its": ITSWatermark().logits_processor(vocab_size, key),
            "unigram": UnigramWatermark(gamma=GAMMA, delta=DELTA).logits_processor(vocab_size, key),
        }
        print(
            f"seed {seed}: sampling every model under each model owner's watermark ...", flush=True
        )
        per_seed[seed] = diluted_values(reproduction, data, measured[seed], processors, seed)
        print(f"    D1 AUROC {per_seed[seed]['auroc']}, D2 R2 {per_seed[seed]['r2']}", flush=True)
    return per_seed


RANGES = {"auroc": (0.0, 1.0), "r2": (-math.inf, 1.0)}
"""The range each measure can take: an interval over seeds is cut to it."""


def summarise(per_seed: dict[int, dict[str, dict[str, float]]]) -> dict[str, dict[str, dict]]:
    """Per measure and scheme: the mean over seeds and its 95 % Student's t interval (the
    library's :func:`~waterdrum_hf.seed_interval`), cut to the measure's range (NaN where a
    seed has no value; no interval from one seed)."""
    from waterdrum_hf import seed_interval

    summary: dict[str, dict[str, dict]] = {}
    for measure, bounds in RANGES.items():
        summary[measure] = {}
        for scheme in PAPER:
            values = np.array([s[measure][scheme] for s in per_seed.values()], dtype=float)
            cell = {"mean": math.nan, "low": math.nan, "high": math.nan, "n": len(values)}
            if np.isfinite(values).all():
                value = seed_interval(values, bounds=bounds)
                cell["mean"] = value.value
                if value.ci_low is not None and value.ci_high is not None:
                    cell["low"], cell["high"] = value.ci_low, value.ci_high
            summary[measure][scheme] = cell
    return summary


def markdown(results: dict) -> str:
    summary, seeds = results["summary"], results["config"]["seeds"]
    lines = [
        "# The model owner's own watermark (dilution)",
        "",
        f"Command: `{results['command']}` ({results['seconds'] / 60:.1f} minutes on "
        f"{results['machine']}). The data owners' watermark: Waterfall; {len(seeds)} seed(s); "
        "with several seeds, the mean [its 95 % Student's t interval over seeds, cut to the range "
        "the measure can take]. The paper's numbers are from "
        "its appendix table of watermarking for a model owner (WaterDrum-Ax, Llama-2-7B), "
        "which has no Unigram row.",
        "",
        "| model owner's watermark | D1 AUROC (ours) | D1 AUROC (paper) | D2 R² (ours) | D2 R² (paper) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for scheme, label in LABELS.items():
        auroc, r2 = summary["auroc"][scheme], summary["r2"][scheme]
        paper = results["paper"][scheme]  # None: not in the paper
        paper_auroc, paper_r2 = [f"{v:.3f}" for v in paper] if paper else ["–", "–"]
        ours_auroc, ours_r2 = fmt(auroc, len(seeds)), fmt(r2, len(seeds))
        lines.append(f"| {label} | {ours_auroc} | {paper_auroc} | {ours_r2} | {paper_r2} |")
    return "\n".join(lines) + "\n"


def fmt(value: dict[str, float], seeds: int) -> str:
    """``mean [low, high]`` over seeds (the value alone for one seed)."""
    if not math.isfinite(value["mean"]):
        return "–"
    if seeds == 1:
        return f"{value['mean']:.3f}"
    return f"{value['mean']:.3f} [{value['low']:.3f}, {value['high']:.3f}]"


def render(out: Path) -> None:
    """Summarise ``out``'s results.json again from its per-seed values and rewrite it and
    results.md (after a change of how they are summarised or shown: no rerun)."""
    results = json.loads((out / "results.json").read_text())
    per_seed = {int(seed): values for seed, values in results["per_seed"].items()}
    results["summary"] = summarise(per_seed)
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    (out / "results.md").write_text(markdown(results))


if __name__ == "__main__":
    main()
