"""How WaterDrum's values hold when the text it reads is edited: every attack of
:mod:`waterdrum_hf.attacks` at strengths 0, 0.1, 0.2, 0.3 and 0.5, on the demo's setting.

For each watermark scheme (Waterfall, adapted KGW) the demo's own stages are built or reused
(:func:`waterdrum_hf.experiments.demo.watermark_corpus` and ``train_models``, in the demo's
stage cache: with the default ``--cache`` the models ``python benchmarks/update_readme_demo.py``
trained are reused, not retrained): the owners' watermarked passages, the original model
(trained on every owner) and the retrained one (without the forget owners). Both complete the
demo's queries; each attack edits every completion before verification. For every seed (the
sampling seed of the completions *and* the attack's seed; seed 0 gives the demo's own
completions) it records:

* the forget and retain values of both models;
* D1: the AUROC of per-query values on the retrained model (retain positive);
* the share of owners still detected at p < 0.01 (the analytic null): on the original model
  every owner's data was trained on; on the retrained model the retain owners' (and, as a
  false alarm, the share of forget owners detected).

Values are means over seeds with 95 % t-intervals over seeds. Where the words come from:
substitution and insertion use the built-in model's embedding neighbours ("synonyms");
copy_paste pastes the owners' original, unwatermarked passages; paraphrase rewrites with the
built-in model, unwatermarked.

    python benchmarks/robustness.py            # full: writes benchmarks/results/robustness/
    python benchmarks/robustness.py --quick    # smoke test: the demo's --quick setting, one
                                               # seed, strengths 0 and 0.5 (under 3 minutes)
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import platform
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "robustness"
DEMO_CACHE = ROOT / "benchmarks" / "results" / "demo" / "cache"
STRENGTHS = (0.0, 0.1, 0.2, 0.3, 0.5)
ALPHA = 0.01
"""An owner counts as detected at p < ALPHA."""
SCHEMES = ("waterfall", "kgw")
COLUMNS = {  # name: (heading, format)
    "original_forget": ("original: forget", "{:+.3f}"),
    "original_retain": ("original: retain", "{:+.3f}"),
    "retrained_forget": ("retrained: forget", "{:+.3f}"),
    "retrained_retain": ("retrained: retain", "{:+.3f}"),
    "auroc": ("D1 AUROC (retrained)", "{:.3f}"),
    "detected_original": (f"owners detected, original (p < {ALPHA})", "{:.2f}"),
    "detected_retain": (f"retain owners detected, retrained (p < {ALPHA})", "{:.2f}"),
    "false_forget": (f"forget owners detected, retrained (p < {ALPHA})", "{:.2f}"),
    "skipped": ("samples without a countable token (both models)", "{:.1f}"),
}


SHARES = ("auroc", "detected_original", "detected_retain", "false_forget")
"""Columns bounded by [0, 1]."""


@dataclass(frozen=True)
class Plan:
    """What one run measures."""

    quick: bool
    seeds: tuple[int, ...]
    strengths: tuple[float, ...]
    schemes: tuple[str, ...] = SCHEMES

    @classmethod
    def of(cls, quick: bool, seeds: int) -> Plan:
        if quick:
            return cls(True, (0,), (0.0, 0.5))
        return cls(False, tuple(range(seeds)), STRENGTHS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke test (under 3 minutes)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 (full run)")
    parser.add_argument("--output-dir", type=Path, help="results folder (quick: a temporary one)")
    parser.add_argument("--cache", type=Path, help="stage cache (default: the demo's)")
    parser.add_argument("--progress", action="store_true", help="progress bars")
    parser.add_argument(
        "--rerender",
        action="store_true",
        help="rewrite the summary, results.md and the plot from the results folder's "
        "results.json rows (after a change to their presentation; nothing is re-run)",
    )
    args = parser.parse_args()
    plan = Plan.of(args.quick, args.seeds)
    out = args.output_dir or (
        Path(tempfile.gettempdir()) / "robustness-quick" if plan.quick else RESULTS
    )
    if args.rerender:
        results = json.loads((out / "results.json").read_text())
        write(results | {"summary": summarise(results["rows"])}, out)
        return
    cache = args.cache or (out / "cache" if plan.quick else DEMO_CACHE)
    from waterdrum_hf.utils.torch_plumbing import torch_threads

    # Samples left without a countable token (e.g. all words cut) are counted in the results
    # ("skipped"), not logged at every scoring.
    logging.getLogger("waterdrum_hf.scoring").setLevel(logging.ERROR)
    start = time.perf_counter()
    with torch_threads(1):  # the tiny model gains nothing from more (and a busy CPU loses)
        rows = [row for s in plan.schemes for row in run_scheme(s, plan, cache, args.progress)]
    seconds = time.perf_counter() - start
    results = {
        "plan": asdict(plan),
        "alpha": ALPHA,
        "rows": rows,
        "summary": summarise(rows),
        "seconds": round(seconds, 1),
        "machine": f"{platform.machine()}, {platform.system()}",
        "command": "python benchmarks/robustness.py" + (" --quick" if plan.quick else ""),
    }
    write(results, out)
    print(f"done in {seconds / 60:.1f} min")


def write(results: dict[str, Any], out: Path) -> None:
    """results.json, results.md and robustness.png into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    (out / "results.md").write_text(markdown(results))
    plot(results, out / "robustness.png")
    print(f"wrote {out}/results.md, results.json and robustness.png")


@dataclass(frozen=True)
class Setting:
    """One scheme's demo data and what the attacks and the metric need beside the texts."""

    scheme: str
    data: Any  # waterdrum_hf.experiments.demo.DemoData (holds the owners' secret keys)
    tokenizer: Any  # the watermarking tokenizer (the built-in model's: it paraphrased)
    inputs: dict[str, dict[str, Any]]  # each attack's extra arguments (attack_inputs)


def run_scheme(scheme: str, plan: Plan, cache: Path, show: bool) -> list[dict]:
    """Every attack, strength and seed on one scheme's demo models."""
    from waterdrum_hf import tiny
    from waterdrum_hf.experiments.demo import DemoConfig, train_models, watermark_corpus
    from waterdrum_hf.experiments.pipeline import CachedPipeline

    config = DemoConfig.quick(scheme=scheme) if plan.quick else DemoConfig(scheme=scheme)
    model, tokenizer = tiny.load(show_progress=show)
    pipeline = CachedPipeline(model, tokenizer, cache, show_progress=show)
    print(f"== {scheme}: the demo's data and models (cached stages) ...", flush=True)
    data = watermark_corpus(config, pipeline)
    stages = train_models(config, pipeline, data)
    queries = data.queries(config, tokenizer)
    setting = Setting(scheme, data, tokenizer, attack_inputs(model, tokenizer, data.originals))
    rows = []
    for seed in plan.seeds:
        completions = {
            name: pipeline.completions(
                name, stage, queries, num_samples=config.num_samples,
                max_new_tokens=config.max_new_tokens, seed=seed,
            )
            for name, stage in stages.items()
        }  # fmt: skip
        for attack, strength in attack_grid(plan.strengths):
            started = time.perf_counter()
            values = measure(completions, attack, strength, seed, setting)
            seconds = round(time.perf_counter() - started, 1)
            rows.append({"scheme": scheme, "attack": attack, "strength": strength, "seed": seed,
                         **values, "seconds": seconds})  # fmt: skip
            print(f"   seed {seed} {attack:>12} {strength:.1f}: {format_row(values)}", flush=True)
    return rows


def attack_grid(strengths: tuple[float, ...]) -> list[tuple[str, float]]:
    """Every attack at every strength; strength 0 (no edit, the same for all) once, as
    ``("none", 0.0)``."""
    from waterdrum_hf import attacks

    grid = [("none", 0.0)] if 0.0 in strengths else []
    return grid + [(a, s) for a in attacks.names() for s in strengths if s > 0]


def attack_inputs(model: Any, tokenizer: Any, originals: list[str]) -> dict[str, dict]:
    """What each attack is given: the built-in model's embedding neighbours for substitution
    and insertion, the owners' unwatermarked passages for copy_paste, the built-in model as
    the paraphraser."""
    with_model = {"model": model, "tokenizer": tokenizer}
    return {
        "none": {},
        "deletion": {},
        "truncation": {},
        "substitution": with_model,
        "insertion": with_model,
        "paraphrase": with_model,
        "copy_paste": {"source": originals},
    }


def measure(
    completions: dict[str, list[list[str]]],
    attack: str,
    strength: float,
    seed: int,
    setting: Setting,
) -> dict[str, float]:
    """The values of both models after the attack (see the module's docstring)."""
    from waterdrum_hf.config import NullConfig, WaterDrumConfig
    from waterdrum_hf.schemes import resolve_scheme
    from waterdrum_hf.scoring import waterdrum_result

    config = WaterDrumConfig(scheme=resolve_scheme(setting.scheme), null=NullConfig("analytic"))
    results = {
        name: waterdrum_result(
            attacked(samples, attack, strength, seed, setting.inputs[attack]),
            setting.data.references,
            setting.tokenizer,
            config=config,
            forget_ids=setting.data.forget_ids,
            return_details=True,
        )
        for name, samples in completions.items()
    }
    original, retrained = results["original"], results["retrained"]
    return {
        "skipped": original.num_skipped + retrained.num_skipped,
        "original_forget": original.forget.value,
        "original_retain": original.retain.value,
        "retrained_forget": retrained.forget.value,
        "retrained_retain": retrained.retain.value,
        "auroc": retrained.separability_auroc,
        "detected_original": detected_share(original, None),
        "detected_retain": detected_share(retrained, False),
        "false_forget": detected_share(retrained, True),
    }


def attacked(
    samples: list[list[str]], attack: str, strength: float, seed: int, inputs: dict
) -> list[list[str]]:
    """Each query's samples after the attack (all samples edited in one call)."""
    from waterdrum_hf import attacks

    if attack == "none":
        return samples
    flat = attacks.apply([t for s in samples for t in s], attack, strength, seed, **inputs)
    bounds = np.cumsum([0, *map(len, samples)])
    return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def detected_share(result: Any, forget: bool | None) -> float:
    """Share of the owners (``forget``: those of that side; ``None``: all) whose p-value is
    below :data:`ALPHA` (an owner without a p-value counts as not detected)."""
    owners = [o for o in result.per_owner.values() if forget is None or o.forget == forget]
    hits = [o.p_value is not None and o.p_value < ALPHA for o in owners]
    return float(np.mean(hits)) if hits else math.nan


def summarise(rows: list[dict]) -> list[dict]:
    """Mean and 95 % t-interval over seeds of every column, per scheme, attack and strength
    (clipped to [0, 1] for AUROCs and shares, and at 0 for counts)."""
    from scipy import stats

    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault((row["scheme"], row["attack"], row["strength"]), []).append(row)
    summary = []
    for (scheme, attack, strength), members in groups.items():
        entry: dict[str, Any] = {"scheme": scheme, "attack": attack, "strength": strength}
        for column in COLUMNS:
            values = np.array([m[column] for m in members], dtype=float)
            mean = float(np.nanmean(values)) if np.isfinite(values).any() else math.nan
            half = math.nan
            if np.isfinite(values).sum() > 1:
                finite = values[np.isfinite(values)]
                sem = finite.std(ddof=1) / math.sqrt(len(finite))
                half = float(stats.t.ppf(0.975, len(finite) - 1) * sem)
            low, high = mean - half, mean + half
            if column in SHARES:  # an AUROC or a share: the interval stays in [0, 1]
                low, high = max(low, 0.0), min(high, 1.0)
            elif column == "skipped":  # a count
                low = max(low, 0.0)
            entry[column] = {"mean": mean, "low": low, "high": high}
        summary.append(entry)
    return summary


def format_row(values: dict[str, float]) -> str:
    return ", ".join(f"{key} {COLUMNS[key][1].format(values[key])}" for key in COLUMNS)


def cell(value: dict[str, float], form: str) -> str:
    """``mean [low, high]`` (the mean alone without an interval)."""
    text = form.format(value["mean"])
    if math.isfinite(value["low"]):
        text += f" [{form.format(value['low'])}, {form.format(value['high'])}]"
    return text


def markdown(results: dict) -> str:
    """Tables per scheme: one row per attack and strength, one column per measurement."""
    plan = results["plan"]
    lines = [
        "# WaterDrum under text attacks (the demo's setting)",
        "",
        f"Command: `{results['command']}` ({results['seconds'] / 60:.1f} minutes on "
        f"{results['machine']}). Seeds: {', '.join(map(str, plan['seeds']))} (each the "
        "sampling seed of the completions and the attack's seed); cells are the mean over "
        "seeds with its 95 % t-interval over seeds (none with one seed; AUROCs and shares "
        "clipped to [0, 1], counts at 0). Strength is the share "
        "of each completion's words the attack affects; 0 is the unedited text. Detection: "
        f"an owner's value has p < {results['alpha']} under the analytic null.",
        "",
        "Words: substitution and insertion use the built-in model's input-embedding "
        "neighbours; copy_paste pastes the owners' unwatermarked passages; paraphrase "
        "rewrites with the built-in model, unwatermarked.",
    ]
    for scheme in plan["schemes"]:
        lines += [
            "",
            f"## {scheme}",
            "",
            "| attack | strength | " + " | ".join(h for h, _ in COLUMNS.values()) + " |",
        ]
        lines.append("| --- | --- |" + " --- |" * len(COLUMNS))
        for entry in (e for e in results["summary"] if e["scheme"] == scheme):
            cells = [cell(entry[c], form) for c, (_, form) in COLUMNS.items()]
            lines.append(
                f"| {entry['attack']} | {entry['strength']:.1f} | " + " | ".join(cells) + " |"
            )
    return "\n".join(lines) + "\n"


def plot(results: dict, path: Path) -> None:
    """One figure: per scheme (rows), D1 AUROC, owners detected on the original model and the
    original model's retain value against strength, one line per attack (error bars: the
    intervals over seeds)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from waterdrum_hf import attacks

    panels = ("auroc", "detected_original", "original_retain")
    schemes = results["plan"]["schemes"]
    figure, axes = plt.subplots(
        len(schemes), len(panels), figsize=(13, 3.6 * len(schemes)), squeeze=False
    )
    for row, scheme in enumerate(schemes):
        entries = [e for e in results["summary"] if e["scheme"] == scheme]
        base = next((e for e in entries if e["attack"] == "none"), None)
        for ax, column in zip(axes[row], panels, strict=True):
            for attack in attacks.names():
                points = ([base] if base else []) + [e for e in entries if e["attack"] == attack]
                x = [p["strength"] for p in points]
                y = np.array([p[column]["mean"] for p in points])
                spread = np.array(
                    [
                        [
                            p[column]["mean"] - p[column]["low"],
                            p[column]["high"] - p[column]["mean"],
                        ]
                        for p in points
                    ]
                ).T
                ax.errorbar(x, y, yerr=np.nan_to_num(spread), marker="o", capsize=3, label=attack)
            ax.set_title(f"{scheme}: {COLUMNS[column][0]}", fontsize=9)
            ax.set_xlabel("attack strength (share of words)")
            if column in SHARES:  # the whole scale, so that a flat line reads as "all"
                ax.set_ylim(-0.03, 1.03)
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


if __name__ == "__main__":
    main()
