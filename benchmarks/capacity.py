"""Why calibration (D2) falls short at small scale: model capacity and memorisation against
the carry-over of an owner's watermark.

The reproduction's D2 R² is 0.86 / 0.70 / 0.70 against the paper's 0.96-0.99. The suspected
cause is carry-over: a model trained on k % of an owner's passages writes that owner's
watermark into its completions of the owner's *other* passages, so the forget value rises
faster than k and the line through the origin fits badly. This script tests it: it retrains
the reproduction's no-duplicate setting (retain side plus k % of the forget set, every k) on
base models of three capacities (:data:`waterdrum_hf.tiny.SIZES`: ``1m``, ``4m``, ``16m``;
same tokenizer, corpus and pretraining steps) and at two degrees of memorisation (10
fine-tuning epochs, and the reproduction's 30), on the same watermarked data (watermarked once
by the default small model), at k = 0, 10, 50 and 100 %. For every cell and seed it records:

* D2: the R² of the forget value against k through the origin (and after subtracting the
  k = 0 value, the paper's relaxation);
* carry-over: WaterDrum's forget value over the forget queries *not* trained on, at the
  smallest k between 0 and 100 %, minus the same queries' value on the k = 0 model
  (:func:`~waterdrum_hf.experiments.reproduction.analysis.trained_split`, the reproduction's
  own reading of carry-over);
* D1: the AUROC of per-query values on the k = 0 model (retain positive);
* memorisation: the mean per-token negative log-likelihood of the training texts on the
  k = 100 % model (low: memorised).

Cells are means over seeds with 95 % t-intervals over seeds. If carry-over explains the
shortfall, cells with less carry-over have higher R².

    python benchmarks/capacity.py            # full: 1m/4m/16m x 10/30 epochs x 3 seeds;
                                             # writes benchmarks/results/capacity/
    python benchmarks/capacity.py --sizes 1m,4m   # the same without the 16m model
    python benchmarks/capacity.py --quick    # smoke test: the default model and a small
                                             # variant (100 pretraining steps), 5/15 epochs,
                                             # the reproduction's quick data, 1 seed
    python benchmarks/capacity.py --render   # only summarise the committed rows again

Cost: each run ends with the full study's CPU time from nothing (``full_estimate_seconds`` in
results.json, and its first line in results.md): measured for the cells it calibrated or read
from a cache (their recorded build time), and scaled from those for the rest by each size's
measured seconds per trained token (the 16m cells take most of it). The
``4m`` and ``16m`` variants are pretrained once (cached under ``$HF_HOME``); with the default
``--cache-from`` the reproduction's matching models (``1m`` at 30 epochs) are reused.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import platform
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "capacity"
REPRODUCTION = ROOT / "benchmarks" / "results" / "reproduction"
FRACTIONS = (0.0, 0.1, 0.5, 1.0)
"""Shares k of the full run: the issue's carry-over reads at 10 %; four points fit D2."""
QUICK_FRACTIONS = (0.0, 0.5, 1.0)
FULL_SIZES = ("1m", "4m", "16m")
"""The base-model sizes of the full study (names in ``waterdrum_hf.tiny.SIZES``)."""
COLUMNS = {  # name: (heading, format)
    "r2": ("D2 R²", "{:.3f}"),
    "r2_offset": ("D2 R² (offset)", "{:.3f}"),
    "carry_over": ("carry-over", "{:+.3f}"),
    "auroc": ("D1 AUROC", "{:.3f}"),
    "nll": ("training NLL (k = 100 %)", "{:.2f}"),
}
RANGES = {"r2": (-math.inf, 1.0), "r2_offset": (-math.inf, 1.0), "auroc": (0.0, 1.0),
          "carry_over": (-2.0, 2.0), "nll": (0.0, math.inf)}  # fmt: skip
"""The range each column can take: its interval over seeds is cut to it."""
FULL_TEXTS = 50
"""Training texts of the full run: the reproduction's 5 owners x 10 passages."""
PRETRAIN_TOKENS_PER_STEP = 256
"""The tiny recipe's pretraining batch: one block of 256 tokens."""
NULL_KEYS = 10
"""Null keys per verification: the study reads raw values only, so few suffice."""


@dataclass(frozen=True)
class Plan:
    """What one run measures: base-model sizes (names in ``tiny.SIZES``, or ``quick``: a small
    variant with little pretraining), fine-tuning epochs, seeds and shares k."""

    quick: bool
    sizes: tuple[str, ...]
    epochs: tuple[int, ...]
    seeds: tuple[int, ...]
    fractions: tuple[float, ...]

    @classmethod
    def of(
        cls,
        quick: bool,
        seeds: int,
        sizes: Sequence[str] = FULL_SIZES,
        epochs: Sequence[int] = (10, 30),
    ) -> Plan:
        """The quick plan, or the full one with ``seeds`` seeds, ``sizes`` (names in
        ``tiny.SIZES``, ``1m`` among them: the costs are scaled from it) and ``epochs``."""
        if quick:
            return cls(True, ("1m", "quick"), (5, 15), (0,), QUICK_FRACTIONS)
        from waterdrum_hf import tiny

        unknown = [name for name in sizes if name not in tiny.SIZES]
        if unknown or "1m" not in sizes:
            raise ValueError(f"--sizes must include 1m and name only {', '.join(tiny.SIZES)}.")
        if seeds < 1 or not epochs or min(epochs) < 1:
            raise ValueError("--seeds and every --epochs must be positive.")
        return cls(False, tuple(sizes), tuple(epochs), tuple(range(seeds)), FRACTIONS)


def tiny_size(name: str) -> Any:
    """The :class:`~waterdrum_hf.tiny.TinySize` a plan's size name stands for."""
    from waterdrum_hf import tiny

    if name == "quick":
        return tiny.TinySize(160, 320, 2, 4, steps=100)
    return tiny.SIZES[name]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke test (a few minutes)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 (full run)")
    parser.add_argument(
        "--sizes", default="1m,4m,16m", help="base-model sizes, comma-separated (full run)"
    )
    parser.add_argument("--epochs", default="10,30", help="fine-tuning epochs (full run)")
    parser.add_argument("--output-dir", type=Path, help="results folder (quick: a temporary one)")
    parser.add_argument(
        "--cache-from",
        type=Path,
        help="a folder whose cache/ holds (or will hold) the models (default: the "
        "reproduction's results folder; quick: the results folder)",
    )
    parser.add_argument("--progress", action="store_true", help="progress bars")
    parser.add_argument(
        "--render", action="store_true", help="only summarise results.json's rows again"
    )
    args = parser.parse_args()
    epochs = [int(e) for e in args.epochs.split(",")]
    plan = Plan.of(args.quick, args.seeds, args.sizes.split(","), epochs)
    out = args.output_dir or (
        Path(tempfile.gettempdir()) / "capacity-quick" if plan.quick else RESULTS
    )
    if args.render:
        render(out)
        return
    from waterdrum_hf.utils.torch_plumbing import torch_threads

    # Samples without a countable token are counted in each value's details, not logged at
    # every scoring.
    logging.getLogger("waterdrum_hf.scoring").setLevel(logging.ERROR)
    start = time.perf_counter()
    with torch_threads(1):  # as the reproduction's timings; a busy CPU loses with more
        rows, timings, token_seconds = run(
            plan, args.cache_from or (out if plan.quick else REPRODUCTION), args.progress
        )
    seconds = time.perf_counter() - start
    results = {
        "plan": asdict(plan),
        "rows": rows,
        "summary": summarise(rows),
        "timings": timings,
        "token_seconds": token_seconds,
        "full_estimate_seconds": estimate_seconds(timings, token_seconds, Plan.of(False, 3)),
        "seconds": round(seconds, 1),
        "machine": f"{platform.machine()}, {platform.system()}",
        "command": command(plan),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    (out / "results.md").write_text(markdown(results))
    plot(results, out / "capacity.png")
    print(markdown(results))
    print(f"wrote {out}/results.md, results.json and capacity.png in {seconds / 60:.1f} min")


def render(out: Path) -> None:
    """Summarise ``out``'s results.json again from its rows and rewrite it, results.md and the
    plot (after a change of how they are summarised or shown: no rerun)."""
    results = json.loads((out / "results.json").read_text())
    results["summary"] = summarise(results["rows"])
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    (out / "results.md").write_text(markdown(results))
    plot(results, out / "capacity.png")


def command(plan: Plan) -> str:
    """The command line that runs ``plan``."""
    if plan.quick:
        return "python benchmarks/capacity.py --quick"
    return (
        f"python benchmarks/capacity.py --seeds {len(plan.seeds)} --sizes {','.join(plan.sizes)} "
        f"--epochs {','.join(map(str, plan.epochs))}"
    )


def base_config(plan: Plan, cache_from: Path, progress: bool) -> Any:
    """The reproduction's configuration of the no-duplicate setting (its quick one for a
    quick plan), with the plan's shares and seeds."""
    from waterdrum_hf.experiments.reproduction import ReproductionConfig

    common = {
        "output_dir": str(cache_from),
        "settings": ("no_duplicate",),
        "fractions": plan.fractions,
        "seeds": plan.seeds,
        "null_keys": NULL_KEYS,
        "show_progress": progress,
    }
    if plan.quick:  # one held-out passage per owner: the study reads no MIA
        return ReproductionConfig.quick(**common, holdout_per_owner=1)
    return ReproductionConfig(**common)


def run(
    plan: Plan, cache_from: Path, progress: bool
) -> tuple[list[dict], list[dict], dict[str, float]]:
    """One row per size, epochs and seed; the seconds of each stage (pretraining a size,
    calibrating a cell) with what sets their cost; and every full-run size's seconds per
    trained token (:func:`training_token_seconds`)."""
    from waterdrum_hf import tiny
    from waterdrum_hf.experiments.reproduction.experiment import Reproduction

    config = base_config(plan, cache_from, progress)
    (data,) = Reproduction(config).prepare()  # watermarked once, by the default small model
    rows, timings = [], []
    for name in plan.sizes:
        size = tiny_size(name)
        built = not tiny.cache_path(size=size).is_dir()
        start = time.perf_counter()
        path = tiny.built_path(size=size, show_progress=progress)
        seconds = time.perf_counter() - start
        timings.append({"stage": "pretrain", "size": name, "built": built, "seconds": seconds})
        for epochs in plan.epochs:
            reproduction = Reproduction(replace(config, model=str(path), epochs=epochs))
            reproduction.open_pipeline()
            params = reproduction.model.num_parameters()
            cache = reproduction.pipeline.cache
            reused, reused_seconds = cache.reused, cache.reused_seconds
            start = time.perf_counter()
            measured = reproduction.calibrate(data, baselines=False)
            timings.append(
                {
                    "stage": "calibrate",
                    "size": name,
                    "epochs": epochs,
                    "params": params,
                    "models": len(plan.fractions) * len(plan.seeds),
                    "texts": len(data.retain) + len(data.forget),
                    "seconds": time.perf_counter() - start,
                    "reused": cache.reused - reused,
                    "reused_build_seconds": cache.reused_seconds - reused_seconds,
                }
            )
            for seed in plan.seeds:
                row = cell(measured[seed], plan.fractions)
                row["nll"] = training_nll(reproduction, measured[seed][1.0]["stage"], data)
                rows.append({"size": name, "params": params, "epochs": epochs, "seed": seed, **row})
                print(f"{name} x {epochs} epochs, seed {seed}: {format_row(row)}", flush=True)
    texts = data.retain + data.forget
    return rows, timings, training_token_seconds(Plan.of(False, 1).sizes, texts)


def cell(calibration: dict[float, dict[str, Any]], fractions: Sequence[float]) -> dict[str, float]:
    """D2 (R² and offset R²), carry-over and D1 of one size, epochs and seed."""
    from waterdrum_hf.experiments.reproduction.analysis import d1, d2

    fits = d2(calibration, "waterdrum")
    return {
        "r2": fits["r2"],
        "r2_offset": fits["r2_offset"],
        "carry_over": carry_over(calibration, fractions),
        "auroc": d1(calibration[0.0], "waterdrum"),
    }


def carry_over(calibration: dict[float, dict[str, Any]], fractions: Sequence[float]) -> float:
    """The forget queries not trained on, at the smallest k strictly between 0 and 100 %:
    their value minus the same queries' value on the k = 0 model (the reproduction's
    ``trained_split``; NaN when no such k trains on part of the forget set)."""
    from waterdrum_hf.experiments.reproduction.analysis import trained_split

    for fraction in fractions:
        if 0 < fraction < 1:
            _, untrained, before = trained_split(calibration[fraction], calibration[0.0])
            return untrained - before
    return math.nan


def training_nll(reproduction: Any, stage: Any, data: Any) -> float:
    """Mean per-token negative log-likelihood of the texts the k = 100 % model trained on."""
    from waterdrum_hf.baselines import min_k_percent_prob

    model = reproduction.pipeline.load(stage)
    texts = data.retain + data.forget
    return float(-np.nanmean(min_k_percent_prob(model, reproduction.tokenizer, texts, k=1.0)))


def interval(
    values: Sequence[float], bounds: tuple[float, float] = (-math.inf, math.inf)
) -> dict[str, float]:
    """Mean and 95 % t-interval over seeds (the library's :func:`~waterdrum_hf.seed_interval`),
    cut to ``bounds`` (NaN seeds left out; no interval below two)."""
    from waterdrum_hf import seed_interval

    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    if not finite.size:
        return {"mean": math.nan, "low": math.nan, "high": math.nan, "n": 0}
    value = seed_interval(finite, bounds=bounds)
    low, high = (math.nan if v is None else v for v in (value.ci_low, value.ci_high))
    return {"mean": value.value, "low": low, "high": high, "n": int(finite.size)}


def summarise(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per size and epochs (in the rows' order): every column's mean and interval over seeds."""
    groups: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["size"], row["epochs"]), []).append(row)
    return [
        {
            "size": size,
            "epochs": epochs,
            "params": members[0]["params"],
            **{
                column: interval([m[column] for m in members], RANGES[column]) for column in COLUMNS
            },
        }
        for (size, epochs), members in groups.items()
    ]


def association(summary: Sequence[Mapping[str, Any]], column: str = "carry_over") -> float:
    """Pearson correlation, over cells, of a column's mean (carry-over, training NLL) with
    mean D2 R² (NaN below three cells or without spread): negative if less of it goes with
    better calibration."""
    pairs = np.array([(s[column]["mean"], s["r2"]["mean"]) for s in summary])
    pairs = pairs[np.isfinite(pairs).all(axis=1)]
    if len(pairs) < 3 or (pairs.std(axis=0) == 0).any():
        return math.nan
    return float(np.corrcoef(pairs.T)[0, 1])


def built_seconds(timing: Mapping[str, Any]) -> float:
    """A calibration stage's cost from nothing: its own seconds plus the recorded build time
    of the models and generations it read from an earlier run's cache."""
    return float(timing["seconds"] + timing["reused_build_seconds"])


def estimate_seconds(
    timings: Sequence[Mapping[str, Any]], token_seconds: Mapping[str, float], plan: Plan
) -> dict[str, float]:
    """The full plan's CPU time from nothing, from a run's stage timings: measured where the
    run has the stage, estimated where not. A cell the run calibrated on the plan's data
    costs its :func:`built_seconds`; another costs about models x (epochs + 2) x texts
    (training, plus about two epochs' worth of sampling and scoring) times the rate of the
    ``1m`` cells, scaled from ``1m`` to its size by their seconds per trained token
    (:func:`training_token_seconds`). Pretraining a size costs its measured seconds where
    the run built it, else its steps x tokens per step x its seconds per token."""
    from waterdrum_hf import tiny

    models = len(plan.fractions) * len(plan.seeds)
    calibrations = [t for t in timings if t["stage"] == "calibrate"]
    per_unit = float(
        np.median(
            [
                built_seconds(t) / (t["models"] * (t["epochs"] + 2) * t["texts"])
                for t in calibrations
                if t["size"] == "1m"
            ]
        )
    )
    measured = {
        (t["size"], t["epochs"]): built_seconds(t)
        for t in calibrations
        if t["models"] == models and t["texts"] == FULL_TEXTS
    }
    calibrate = sum(
        measured.get(
            (name, epochs),
            per_unit
            * token_seconds[name]
            / token_seconds["1m"]
            * models
            * (epochs + 2)
            * FULL_TEXTS,
        )
        for name in plan.sizes
        for epochs in plan.epochs
    )
    built = {t["size"]: t["seconds"] for t in timings if t["stage"] == "pretrain" and t["built"]}
    pretrain = sum(
        built.get(name, tiny.SIZES[name].steps * PRETRAIN_TOKENS_PER_STEP * token_seconds[name])
        for name in plan.sizes
        if name != "1m"  # the default build exists wherever the reproduction ran
    )
    return {"calibrate": calibrate, "pretrain": pretrain, "total": calibrate + pretrain}


def training_token_seconds(names: Sequence[str], texts: Sequence[str]) -> dict[str, float]:
    """Seconds per trained token (forward, backward and AdamW step on a batch of 4 texts,
    median of 4 steps) of each named size's architecture, built with 1 pretraining step in a
    temporary folder: what scales the measured costs to sizes this run does not train."""
    import torch

    from waterdrum_hf import tiny

    seconds = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            size = replace(tiny.SIZES[name], steps=1)
            model, tokenizer = tiny.load(folder, size=size, show_progress=False)
            batch = tokenizer(list(texts[:4]), return_tensors="pt", padding=True)
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
            model.train()
            times = []
            for _ in range(5):
                start = time.perf_counter()
                model(**batch, labels=batch["input_ids"]).loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                times.append(time.perf_counter() - start)
            tokens = int(batch["attention_mask"].sum())
            seconds[name] = float(np.median(times[1:])) / tokens  # the first step warms up
    return seconds


def format_row(values: Mapping[str, float]) -> str:
    return ", ".join(
        f"{key} {COLUMNS[key][1].format(values[key])}" for key in COLUMNS if key in values
    )


def cell_text(value: Mapping[str, float], form: str) -> str:
    """``mean [low, high]`` (the mean alone without an interval)."""
    if not math.isfinite(value["mean"]):
        return "–"
    text = form.format(value["mean"])
    if math.isfinite(value["low"]):
        text += f" [{form.format(value['low'])}, {form.format(value['high'])}]"
    return text


def markdown(results: Mapping[str, Any]) -> str:
    """One table: a row per size and epochs, a column per measurement; then the association."""
    plan = results["plan"]
    reused = [t for t in results["timings"] if t["stage"] == "calibrate" and t["reused"]]
    cache = (
        f", reading {sum(t['reused'] for t in reused)} models and generations that an earlier "
        f"run built in {sum(t['reused_build_seconds'] for t in reused) / 60:.0f} minutes"
        if reused
        else ""
    )
    lines = [
        "# Calibration (D2) against model capacity and memorisation",
        "",
        f"Command: `{results['command']}` ({results['seconds'] / 60:.1f} minutes on "
        f"{results['machine']}{cache}; the full study from nothing: about "
        f"{scratch_hours(results):.1f} hours on one thread, measured where built and estimated "
        "where not). Setting: the reproduction's no-duplicate setting, k = "
        f"{', '.join(f'{f:.0%}' for f in plan['fractions'])}; seeds "
        f"{', '.join(map(str, plan['seeds']))}. Cells: mean over seeds [95 % t-interval over "
        "seeds; none with one seed]. Carry-over: at the smallest k above 0, the forget queries "
        "not trained on, minus the same queries on the k = 0 model. Training NLL: per token, "
        "on the k = 100 % model's training texts (lower: more memorised).",
        "",
        "| base model | parameters | epochs | " + " | ".join(h for h, _ in COLUMNS.values()) + " |",
        "| --- | --- | --- |" + " --- |" * len(COLUMNS),
    ]
    for entry in results["summary"]:
        cells = [cell_text(entry[c], form) for c, (_, form) in COLUMNS.items()]
        lines.append(
            f"| {entry['size']} | {entry['params'] / 1e6:.2f}M | {entry['epochs']} | "
            + " | ".join(cells)
            + " |"
        )
    lines += [
        "",
        f"Correlation over the {len(results['summary'])} cells with mean D2 R²: of mean "
        f"carry-over, {correlation_text(results)} (negative: less carry-over, better "
        f"calibration); of mean training NLL, {correlation_text(results, 'nll')} (negative: "
        "more memorised, better calibration).",
        "",
        "![D2 R², carry-over and D1 against parameters; D2 R² against training NLL](capacity.png)",
    ]
    return "\n".join(lines) + "\n"


def scratch_hours(results: Mapping[str, Any]) -> float:
    """The full study's hours from nothing on one thread (:func:`estimate_seconds`)."""
    return float(results["full_estimate_seconds"]["total"] / 3600)


def correlation_text(results: Mapping[str, Any], column: str = "carry_over") -> str:
    """:func:`association` of the committed summary, signed to two places."""
    r = association(results["summary"], column)
    return "undefined" if not math.isfinite(r) else f"{r:+.2f}"


def plot(results: Mapping[str, Any], path: Path) -> None:
    """D2 R², carry-over and D1 against the parameter count, one line per epochs (error bars:
    the intervals over seeds); then D2 R² against training NLL, a point per cell (means)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = ("r2", "carry_over", "auroc")
    figure, axes = plt.subplots(1, len(panels) + 1, figsize=(17, 3.8))
    for ax, column in zip(axes[:-1], panels, strict=True):
        for epochs in results["plan"]["epochs"]:
            points = [e for e in results["summary"] if e["epochs"] == epochs]
            ax.errorbar(
                [p["params"] for p in points],
                [p[column]["mean"] for p in points],
                yerr=error_bars(points, column),
                marker="o",
                capsize=3,
                label=f"{epochs} epochs",
            )
        ax.set_xscale("log")
        ax.set_xlabel("base model parameters")
        ax.set_title(COLUMNS[column][0], fontsize=9)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    memorisation = axes[-1]
    for epochs in results["plan"]["epochs"]:
        points = [e for e in results["summary"] if e["epochs"] == epochs]
        x = [p["nll"]["mean"] for p in points]
        y = [p["r2"]["mean"] for p in points]
        memorisation.plot(x, y, "o", label=f"{epochs} epochs")
        for p, xi, yi in zip(points, x, y, strict=True):
            memorisation.annotate(p["size"], (xi, yi), xytext=(4, 4), textcoords="offset points")
    memorisation.set_xlabel(COLUMNS["nll"][0] + " (lower: more memorised)")
    memorisation.set_title(
        f"D2 R² against memorisation (means; r = {correlation_text(results, 'nll')})", fontsize=9
    )
    memorisation.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def error_bars(points: Sequence[Mapping[str, Any]], column: str) -> np.ndarray:
    """Matplotlib's asymmetric error bars (2 x n) from each point's interval (0 without one)."""
    spread = [
        [p[column]["mean"] - p[column]["low"], p[column]["high"] - p[column]["mean"]]
        for p in points
    ]
    return np.nan_to_num(np.array(spread).T)


if __name__ == "__main__":
    main()
