"""Every cell of every table in the results.md of `waterdrum reproduce` (the reproduction and
the scheme comparison), against values the tests compute themselves: hand-made per-seed models
go through the real summaries and renderer, and each expected cell is recomputed from those
models (AUROC by pairs, R² of a line through the origin, mean and sd over seeds with numpy,
ddof 0; Student's t interval with scipy) and formatted as the tables document. The committed
results.md files are checked to be the renderer's output of the results.json beside them, and
the committed tables cell by cell against that results.json."""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from waterdrum_hf.experiments.reproduction import ReproductionConfig
from waterdrum_hf.experiments.reproduction.analysis import (
    calibration_curves,
    mia_summary,
    summarise,
)
from waterdrum_hf.experiments.reproduction.comparison import comparison_markdown
from waterdrum_hf.experiments.reproduction.meta_evaluation import summarise_seeds
from waterdrum_hf.experiments.reproduction.results_markdown import markdown
from waterdrum_hf.scripts.reproduce import reproduce_command

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"

LABELS = {
    "waterdrum": "WaterDrum",
    "waterdrum_null_corrected": "WaterDrum (null-corrected)",
    "rouge_l": "ROUGE-L",
    "rouge_l_unwatermarked": "ROUGE-L, unwatermarked data",
    "mia": "MIA",
    "mia_unwatermarked": "MIA, unwatermarked data",
    "extraction": "Extraction strength",
    "extraction_unwatermarked": "Extraction strength, unwatermarked data",
    "mia_loss": "MIA (LOSS)",
    "mia_loss_unwatermarked": "MIA (LOSS), unwatermarked data",
    "mia_zlib": "MIA (zlib)",
    "mia_zlib_unwatermarked": "MIA (zlib), unwatermarked data",
    "mia_min_k_plus_plus": "MIA (Min-k%++)",
    "mia_min_k_plus_plus_unwatermarked": "MIA (Min-k%++), unwatermarked data",
}
SCHEMES = {
    "waterfall": "Waterfall",
    "kgw": "Adapted KGW",
    "synthid": "Adapted Synth-ID",
    "exp_edit": "Adapted EXP-edit",
}
# The paper's numbers (WaterDrum-Ax, Llama-2-7B). WaterDrum: Table 1 (AUROC), Table 2 and the
# appendix's offset table (R²). Baselines beside ours under the same protocol: on models
# fine-tuned on watermarked text, the appendix's tables (AUROC, R²; it has no offset table for
# them); on unwatermarked text, Table 1, Table 2 and the offset table. Then the dilution experiment (AUROC,
# R²) and Table 5 (per scheme: AUROC, R², verification time per text, needs a GPU).
PAPER_AUROC = {
    "no_duplicate": {
        "waterdrum": "0.965 ± 0.002", "rouge_l": "0.983 ± 0.000", "rouge_l_unwatermarked": "0.974 ± 0.001"
    },
    "exact_duplicate": {
        "waterdrum": "0.957 ± 0.008", "rouge_l": "0.979 ± 0.004", "rouge_l_unwatermarked": "0.334 ± 0.005"
    },
    "semantic_duplicate": {
        "waterdrum": "0.963 ± 0.001", "rouge_l": "0.979 ± 0.000", "rouge_l_unwatermarked": "0.960 ± 0.002"
    },
}  # fmt: skip
PAPER_R2 = {
    "no_duplicate": {"waterdrum": "0.963", "rouge_l": "0.758", "mia": "-0.437",
                     "rouge_l_unwatermarked": "0.650", "mia_unwatermarked": "0.677"},
    "exact_duplicate": {"waterdrum": "0.987", "rouge_l": "0.774", "mia": "-5.375",
                        "rouge_l_unwatermarked": "-37.47", "mia_unwatermarked": "-285.6"},
    "semantic_duplicate": {"waterdrum": "0.991", "rouge_l": "0.677", "mia": "-6.629",
                           "rouge_l_unwatermarked": "0.693", "mia_unwatermarked": "-14.52"},
}  # fmt: skip
PAPER_R2_OFFSET = {
    "no_duplicate": {"waterdrum": "0.957", "rouge_l_unwatermarked": "0.998", "mia_unwatermarked": "0.990"},
    "exact_duplicate": {"waterdrum": "0.994", "rouge_l_unwatermarked": "0.923", "mia_unwatermarked": "0.273"},
    "semantic_duplicate": {"waterdrum": "0.995", "rouge_l_unwatermarked": "0.997", "mia_unwatermarked": "-0.011"},
}  # fmt: skip
PAPER_DILUTION = {"none": ["0.964", "0.963"], "waterfall": ["0.923", "0.936"]}
PAPER_TABLE_5 = {
    "waterfall": ["0.965", "0.963", "0.015 s", "No"],
    "kgw": ["0.871", "0.996", "0.336 s", "Yes"],
    "synthid": ["0.549", "-16.951", "0.386 s", "Yes"],
    "exp_edit": ["0.789", "-17.079", "165.5 s", "No"],
}
D1_METRICS = ("waterdrum", "waterdrum_null_corrected", "rouge_l", "rouge_l_unwatermarked")
D2_METRICS = (*D1_METRICS[:3], "mia", "rouge_l_unwatermarked", "mia_unwatermarked")
WATERMARKED_BASELINES = (
    "rouge_l",
    "extraction",
    "mia",
    "mia_loss",
    "mia_zlib",
    "mia_min_k_plus_plus",
)
EVERY_METRIC = (
    "waterdrum",
    *WATERMARKED_BASELINES,
    *(f"{m}_unwatermarked" for m in WATERMARKED_BASELINES),
)
"""The every-baseline tables' rows: WaterDrum and the baselines on the watermarked data, then
the baselines on the unwatermarked twin."""
SIDES = {
    "trained": "trained on",
    "untrained": "not trained on",
    "untrained_at_k0": "not trained on, at k = 0",
}

Stat = Callable[..., tuple[float, float]]
"""(setting, or scheme and setting; table name; metric) -> mean and sd over seeds."""


# --- Reading the Markdown --------------------------------------------------------------------


def cells(line: str) -> list[str]:
    """A table row's cells, stripped."""
    assert line.startswith("| ") and line.endswith(" |"), line
    return [cell.strip() for cell in line[1:-1].split("|")]


def table_after(text: str, *markers: str) -> list[list[str]]:
    """The first table after the lines that start with ``markers`` (each after the one
    before): its header, then its rows; the separator row checked and left out."""
    lines = text.splitlines()
    at = 0
    for marker in markers:
        at = next(i for i in range(at, len(lines)) if lines[i].startswith(marker)) + 1
    start = next(i for i in range(at, len(lines)) if lines[i].startswith("|"))
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    header, separator, *body = (cells(line) for line in lines[start:end])
    assert separator == ["---"] * len(header)
    assert all(len(row) == len(header) for row in body)
    return [header, *body]


# --- The tables' formats ---------------------------------------------------------------------


def three(value: float | None) -> str:
    return "undefined" if value is None or not math.isfinite(value) else f"{value:.3f}"


def signed_or_dash(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:+.3f}"


def signed_one(value: float | None) -> str:
    return "undefined" if value is None or not math.isfinite(value) else f"{value:+.1f}"


RANGE = {"auroc": (0.0, 1.0), "r2": (-math.inf, 1.0), "r2_offset": (-math.inf, 1.0),
         "mia": (-1.0, 1.0), "meta": (0.0, 1.0)}  # fmt: skip
"""The range of each measure: a table's interval over seeds is cut to it."""


def mean_sd_cell(mean: float, sd: float, seeds: int, measure: str) -> str:
    """``mean [low, high]``: scipy's 95 % t interval over the seeds from the mean and the
    population sd (ddof 0) results.json keeps, cut to the measure's range (the mean alone with
    one seed; "undefined" without a value)."""
    if not math.isfinite(mean):
        return "undefined"
    if seeds < 2:
        return f"{mean:.3f}"
    sample_sd = sd * math.sqrt(seeds / (seeds - 1))
    low = high = mean  # no spread: scipy's interval is undefined, the mean is the interval
    if sample_sd > 0:
        low, high = stats.t.interval(0.95, seeds - 1, loc=mean, scale=sample_sd / math.sqrt(seeds))
    lowest, highest = RANGE[measure]
    return f"{mean:.3f} [{max(low, lowest):.3f}, {min(high, highest):.3f}]"


def over_seeds(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sd (numpy, ddof 0) over the seeds that have a value; NaN for neither."""
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    return (float(np.mean(finite)), float(np.std(finite))) if finite.size else (math.nan, math.nan)


def spaced(setting: str) -> str:
    return setting.replace("_", " ")


# --- Hand computations -----------------------------------------------------------------------


def hand_auroc(model: Mapping[str, Any], metric: str) -> float:
    """P(a retain query outscores a forget query), ties one half, NaN queries left out."""
    values = np.asarray(model[metric], dtype=float)
    forget = np.asarray(model["is_forget"])
    retain, forgotten = values[~forget], values[forget]
    retain, forgotten = retain[~np.isnan(retain)], forgotten[~np.isnan(forgotten)]
    diff = retain[:, None] - forgotten[None, :]
    return float(np.mean((diff > 0) + 0.5 * (diff == 0)))


def forget_mean(model: Mapping[str, Any], metric: str) -> float:
    if metric.startswith("mia"):
        return float(model[metric])
    values = np.asarray(model[metric], dtype=float)[np.asarray(model["is_forget"])]
    return float(np.nanmean(values))


def hand_r2(shares: Sequence[float], values: Sequence[float]) -> float:
    """R² of ``values = slope * shares`` (least squares, centred TSS); NaN when undefined."""
    x, y = np.asarray(shares, dtype=float), np.asarray(values, dtype=float)
    if not np.all(np.isfinite(y)):
        return math.nan
    tss = float(((y - y.mean()) ** 2).sum())
    if tss == 0:
        return math.nan
    slope = float(x @ y / (x @ x))
    return 1.0 - float(((y - slope * x) ** 2).sum()) / tss


def hand_fits(per_seed: Mapping[int, Mapping[float, Any]], metrics: Sequence[str]) -> dict:
    """Per metric, per seed: D1's AUROC on the retrained model, D2's R² and offset R²."""
    out: dict[str, dict[str, list[float]]] = {"auroc": {}, "r2": {}, "r2_offset": {}}
    for calibration in per_seed.values():
        shares = [model["share"] for model in calibration.values()]
        for metric in metrics:
            if not metric.startswith("mia"):
                out["auroc"].setdefault(metric, []).append(hand_auroc(calibration[0.0], metric))
            values = np.array([forget_mean(model, metric) for model in calibration.values()])
            out["r2"].setdefault(metric, []).append(hand_r2(shares, values))
            out["r2_offset"].setdefault(metric, []).append(hand_r2(shares, values - values[0]))
    return out


def hand_split(per_seed: Mapping[int, Mapping[float, Any]]) -> dict[str, list[float]]:
    """WaterDrum's forget value per k over the forget queries trained on (the first kept),
    the rest, and the rest at k = 0: the mean over seeds of each seed's mean (NaN if empty)."""

    def mean(values: np.ndarray) -> float:
        values = values[~np.isnan(values)]
        return float(values.mean()) if values.size else math.nan

    sides: dict[str, list[float]] = {side: [] for side in SIDES}
    for fraction in next(iter(per_seed.values())):
        seeds: dict[str, list[float]] = {side: [] for side in SIDES}
        for calibration in per_seed.values():
            model, kept = calibration[fraction], calibration[fraction]["kept"]
            now = np.asarray(model["waterdrum"])[model["is_forget"]]
            before = np.asarray(calibration[0.0]["waterdrum"])[calibration[0.0]["is_forget"]]
            seeds["trained"].append(mean(now[:kept]))
            seeds["untrained"].append(mean(now[kept:]))
            seeds["untrained_at_k0"].append(mean(before[kept:]))
        for side, values in seeds.items():
            sides[side].append(mean(np.array(values)))
    return sides


def t_cell(values: Sequence[float]) -> str:
    """The mean with scipy's 95 % Student's t interval over runs, cut to [-1, 1]."""
    array = np.asarray(values, dtype=float)
    low, high = stats.t.interval(0.95, len(array) - 1, loc=array.mean(), scale=stats.sem(array))
    return f"{array.mean():+.3f} [{max(low, -1.0):+.3f}, {min(high, 1.0):+.3f}]"


# --- Hand-made measurements ------------------------------------------------------------------

FRACTIONS = (0.0, 0.3, 0.6, 1.0)
REPRODUCTION_SETTINGS = ("no_duplicate", "exact_duplicate", "semantic_duplicate")


def fake_model(fraction: float, seed: int, where: int, *, baselines: bool = True) -> dict:
    """One model's per-query values (10 forget queries, then 10 retain ones), different for
    every setting or scheme (``where``), seed and fraction. Setting 1 has a NaN forget query
    and a flat MIA (R² undefined); setting 2 has no MIA (no held-out set)."""
    rng = np.random.default_rng([where, seed, round(100 * fraction)])
    kept = round(10 * fraction)
    trained = np.arange(10) < kept
    forget = np.where(trained, 0.8, 0.3 * fraction + 0.05 * where) + rng.normal(0, 0.2, 10)
    retain = 0.6 + 0.02 * seed + rng.normal(0, 0.2, 10)
    waterdrum = np.concatenate([forget, retain])
    model = {
        "share": kept / 10,
        "kept": kept,
        "is_forget": np.arange(20) < 10,
        "waterdrum": waterdrum,
        "waterdrum_null_corrected": waterdrum + rng.normal(0, 0.15, 20),
    }
    if where == 1:
        model["waterdrum"] = np.where(np.arange(20) == 9, np.nan, waterdrum)
    if baselines:
        model["rouge_l"] = np.concatenate(
            [0.4 + 0.3 * fraction + rng.normal(0, 0.15, 10), 0.6 + rng.normal(0, 0.15, 10)]
        )
        model["mia"] = {1: 0.5, 2: math.nan}.get(where, 0.8 * fraction - 0.1 + rng.normal(0, 0.1))
        # the same model retrained on the unwatermarked twin: copies read alike
        model["rouge_l_unwatermarked"] = np.concatenate(
            [0.5 + 0.2 * fraction + rng.normal(0, 0.1, 10), 0.55 + rng.normal(0, 0.1, 10)]
        )
        model["mia_unwatermarked"] = 0.6 * fraction + rng.normal(0, 0.1)
        for i, data in enumerate(("", "_unwatermarked")):  # the baselines users run today
            model[f"extraction{data}"] = np.concatenate(
                [
                    0.1 + (0.5 - 0.2 * i) * fraction + rng.normal(0, 0.1, 10),
                    rng.uniform(0.4, 0.9, 10),
                ]
            )
            for j, attack in enumerate(("loss", "zlib", "min_k_plus_plus")):
                flat_or_none = {1: 0.1 * j, 2: math.nan}.get(where)  # as the Min-k% MIA
                model[f"mia_{attack}{data}"] = (
                    (0.7 - 0.1 * j) * fraction + rng.normal(0, 0.1)
                    if flat_or_none is None or data
                    else flat_or_none
                )
    return model


def measured(seeds: Sequence[int], where: int, *, baselines: bool = True) -> dict:
    return {
        seed: {f: fake_model(f, seed, where, baselines=baselines) for f in FRACTIONS}
        for seed in seeds
    }


def flat(forget: float, retain: float, p_value: float | None) -> dict:
    """A model's flat result as the benchmark stores it."""
    result = {"forget": forget, "retain": retain, "num_queries": 9, "num_scored": 9}
    result["num_skipped"] = 0
    return result | ({"forget_p_value": p_value} if p_value is not None else {})


def benchmark_runs(seeds: Sequence[int]) -> dict[str, dict[str, list[dict]]]:
    """Every seed's run of each model, different per setting; the last method has no
    p-value."""
    models = ("original", "retrained", "kl", "npo")
    return {
        setting: {
            model: [
                flat(
                    0.7 - 0.2 * m + 0.03 * s + 0.011 * seed * (m + 1),
                    0.65 - 0.02 * m - 0.01 * s + 0.007 * seed,
                    None if model == "npo" else 0.01 + 0.1 * m + 0.01 * s,
                )
                for seed in seeds
            ]
            for m, model in enumerate(models)
        }
        for s, setting in enumerate(REPRODUCTION_SETTINGS[:2])
    }


def reproduction(seeds: tuple[int, ...]) -> tuple[dict, dict]:
    """The results dict ``markdown`` renders (summaries by the real code) and the per-seed
    measurements it came from."""
    per_setting = {s: measured(seeds, i) for i, s in enumerate(REPRODUCTION_SETTINGS)}
    runs = benchmark_runs(seeds)
    config = ReproductionConfig.quick(
        fractions=FRACTIONS, settings=REPRODUCTION_SETTINGS, seeds=seeds
    )
    results = {
        "settings": {s: summarise(m) for s, m in per_setting.items()},
        "curves": {s: calibration_curves(m, FRACTIONS) for s, m in per_setting.items()},
        "mia": {s: mia_summary(m) for s, m in per_setting.items()},
        "benchmark": {s: {name: r[0] for name, r in models.items()} for s, models in runs.items()},
        "benchmark_runs": runs,
        "resilience": {
            "decoy": {
                "intercepted": [0.0, 0.25, 0.5, 0.75, 1.0],
                "forget_value": [0.5, 0.41, 0.3, 0.1, 0.04],
                "scaled": [1.0, 0.82, 0.6, 0.2, 0.08],
            },
            "dilution": {
                "kappa": 2.5,
                "auroc": {"none": 0.9876, "waterfall": 0.8123},
                "r2": {"none": 0.9012, "waterfall": math.nan},
            },
        },
        "duplicate_similarity": {
            "no_duplicate": {},
            "exact_duplicate": {"forget_text": 0.9134, "other_owner": 0.2071},
            "semantic_duplicate": {"forget_text": 0.6543, "other_owner": 0.3219},
        },
        "duplicate_similarity_unwatermarked": {
            "exact_duplicate": {"forget_text": 1.0, "other_owner": 0.1987},
            "semantic_duplicate": {"forget_text": 0.3541, "other_owner": 0.3012},
        },
        "config": dataclasses.asdict(config),
        "seconds": {"total": 90.0},
        "stages": {"built": 9, "reused": 0, "reused_build_seconds": 0.0},
        "meta_evaluation": {
            "holding_share": 0.5,
            "quantization_bits": 4,
            "relearning": {"share": 0.25, "steps": 10, "learning_rate": 1e-3},
            "methods": ["kl", "npo"],
            "metrics": summarise_seeds([meta_scores(seed) for seed in seeds]),
        },
    }
    return results, per_setting


META_MEASURES = ("faithfulness", "relearning", "quantization", "robustness")


def meta_scores(seed: int) -> dict[str, dict[str, float]]:
    """One seed's made-up meta-evaluation scores, different per metric and measure; the
    zlib MIA has no faithfulness (NaN)."""
    rng = np.random.default_rng([7, seed])
    return {
        metric: {
            measure: math.nan
            if (metric, measure) == ("mia_zlib", "faithfulness")
            else float(rng.uniform(0.3, 1.0))
            for measure in META_MEASURES
        }
        for metric in ("waterdrum", "rouge_l", "extraction", "mia", "mia_zlib")
    }


def expected_meta_table(seeds: Sequence[int]) -> list[list[str]]:
    """Per metric: each measure's mean [t interval] over the seeds, from the made-up scores."""
    header = ["metric", "faithfulness (AUROC)", "relearning R", "quantization Q",
              "robustness (harmonic mean)"]  # fmt: skip
    rows = [header]
    for metric in meta_scores(0):
        cells = [mean_sd_cell(*over_seeds([meta_scores(s)[metric][m] for s in seeds]),
                              len(seeds), "meta") for m in META_MEASURES]  # fmt: skip
        rows.append([LABELS[metric], *cells])
    return rows


def hand_stat(per_setting: Mapping[str, Mapping[int, Any]], metrics: Sequence[str]) -> Stat:
    """Mean and sd over seeds of each hand-computed per-seed value."""
    fits = {where: hand_fits(m, metrics) for where, m in per_setting.items()}
    return lambda where, name, metric: over_seeds(fits[where][name][metric])


def saved_stat(summaries: Mapping[Any, Mapping[str, Any]]) -> Stat:
    """Mean and sd over seeds as a results.json holds them (it keeps no per-seed values)."""
    return lambda where, name, metric: (
        summaries[where][name][metric],
        summaries[where][f"{name}_std"][metric],
    )


# --- Expected tables -------------------------------------------------------------------------


def expected_d_table(
    settings: Sequence[str],
    name: str,
    stat: Stat,
    seeds: int,
    paper: Mapping[str, Any],
    measured: Sequence[str] = (),
) -> list[list[str]]:
    """D1 (``auroc``) or D2 (``r2``, ``r2_offset``): ours per metric, then the paper's; the
    twin's columns only where measured."""
    metrics = D1_METRICS if name == "auroc" else D2_METRICS
    metrics = tuple(m for m in metrics if m in measured or not m.endswith("_unwatermarked"))
    papers = [m for m in metrics if any(m in paper.get(s, {}) for s in settings)]
    ours = "ours" if seeds > 1 else "ours, one seed"
    header = ["setting", *(f"{LABELS[m]} ({ours})" for m in metrics)]
    rows = [header + [f"{LABELS[m]} (paper)" for m in papers]]
    for setting in settings:
        row = [spaced(setting)]
        row += [mean_sd_cell(*stat(setting, name, m), seeds, name) for m in metrics]
        rows.append(row + [paper.get(setting, {}).get(m, "–") for m in papers])
    return rows


def expected_every_table(
    settings: Sequence[str], name: str, stat: Stat, seeds: int, measured: Sequence[str]
) -> list[list[str]]:
    """The every-baseline tables: a row per measured metric, a column per setting."""
    rows = [["metric", *(spaced(s) for s in settings)]]
    for metric in (m for m in EVERY_METRIC if m in measured):
        cells = [mean_sd_cell(*stat(s, name, metric), seeds, name) for s in settings]
        rows.append([LABELS[metric], *cells])
    return rows


def expected_split(
    curves: Mapping[str, Mapping[str, Any]], shares: Sequence[float], label: str
) -> list[list[str]]:
    """The forget value split by query: per curve the three sides, per k a signed cell."""
    rows = [[label, "forget queries", *(f"k = {share:.0%}" for share in shares)]]
    for name, split in curves.items():
        for side, words in SIDES.items():
            rows.append([name, words, *(signed_or_dash(v) for v in split[side])])
    return rows


def expected_mia(
    mia: Mapping[str, tuple[tuple[float, float], tuple[float, float]]], seeds: int
) -> list[list[str]]:
    """Per setting: the MIA's mean and sd on the original model, then the retrained one."""
    return [
        ["setting", "original model", "retrained model"],
        *([s, *(mean_sd_cell(*m, seeds, "mia") for m in sides)] for s, sides in mia.items()),
    ]


def expected_duplicates(
    watermarked: Mapping[str, Mapping[str, float]], unwatermarked: Mapping[str, Mapping[str, float]]
) -> list[list[str]]:
    rows = [["setting", "data", "against its forget text", "against another owner's text"]]
    for data, similarity in (("watermarked", watermarked), ("unwatermarked", unwatermarked)):
        rows += [
            [spaced(s), data, f"{v['forget_text']:.3f}", f"{v['other_owner']:.3f}"]
            for s, v in similarity.items()
            if v
        ]
    return rows


def expected_benchmark(
    benchmark: Mapping[str, Mapping[str, Mapping[str, Any]]],
) -> list[list[str]]:
    rows = [["setting", "model", "forget", "retain", "forget p-value"]]
    for setting, models in benchmark.items():
        for name, m in models.items():
            p = m.get("forget_p_value")
            p_cell = "–" if p is None or not math.isfinite(p) else f"{p:.3f}"
            rows.append([setting, name, f"{m['forget']:+.3f}", f"{m['retain']:+.3f}", p_cell])
    return rows


def expected_decoy(decoy: Mapping[str, Sequence[float]]) -> list[list[str]]:
    return [
        ["intercepted", *(f"{share:.0%}" for share in decoy["intercepted"])],
        ["scaled forget value", *(f"{value:.2f}" for value in decoy["scaled"])],
    ]


def expected_dilution(dilution: Mapping[str, Any]) -> list[list[str]]:
    header = ["watermark of the model owner", "AUROC (ours)", "R² (ours)"]
    rows = [header + ["AUROC (paper)", "R² (paper)"]]
    for name, label in (("none", "none"), ("waterfall", "adapted Waterfall")):
        ours = [f"{dilution['auroc'][name]:.3f}", three(dilution["r2"][name])]
        rows.append([label, *ours, *PAPER_DILUTION[name]])
    return rows


def check_reproduction_tables(
    text: str,
    results: Mapping[str, Any],
    stat: Stat,
    mia: Mapping[str, tuple[tuple[float, float], tuple[float, float]]],
) -> None:
    """Every table of a reproduction's results.md but the benchmark over seeds, row by row."""
    settings = list(results["settings"])
    seeds = len(results["config"]["seeds"])
    d2 = "## Calibration (D2)"
    twin = [m for m in D2_METRICS if any(m in s["r2"] for s in results["settings"].values())]
    assert table_after(text, "## Separability (D1)") == expected_d_table(
        settings, "auroc", stat, seeds, PAPER_AUROC, twin
    )
    assert table_after(text, d2, "Without referencing") == expected_d_table(
        settings, "r2", stat, seeds, PAPER_R2, twin
    )
    assert table_after(text, d2, "With the paper's offset") == expected_d_table(
        settings, "r2_offset", stat, seeds, PAPER_R2_OFFSET, twin
    )
    every = "## Every baseline on the same models"
    d1_rows = [
        m for m in EVERY_METRIC if any(m in s["auroc"] for s in results["settings"].values())
    ]
    d2_rows = [m for m in EVERY_METRIC if any(m in s["r2"] for s in results["settings"].values())]
    if set(d2_rows) - set(D2_METRICS):
        for marker, name, rows in (("D1, AUROC", "auroc", d1_rows), ("D2, R²", "r2", d2_rows),
                                   ("D2 with the retrained", "r2_offset", d2_rows)):  # fmt: skip
            assert table_after(text, every, marker) == expected_every_table(
                settings, name, stat, seeds, rows
            ), marker
    else:  # a run from before these baselines were read has no such section
        assert every not in text
    similarity = results.get("duplicate_similarity", {})
    if any(similarity.values()):
        assert table_after(
            text, "## Separability (D1)", "ROUGE-L recall of each duplicate"
        ) == expected_duplicates(similarity, results.get("duplicate_similarity_unwatermarked", {}))
    assert table_after(text, "## MIA baseline") == expected_mia(mia, seeds)
    assert table_after(text, "## The benchmark of unlearning methods") == expected_benchmark(
        results["benchmark"]
    )
    assert table_after(text, "## Resilience", "(a) A decoy") == expected_decoy(
        results["resilience"]["decoy"]
    )
    assert table_after(text, "## Resilience", "(b) The model owner") == expected_dilution(
        results["resilience"]["dilution"]
    )


# --- The reproduction ------------------------------------------------------------------------


@pytest.mark.parametrize("seeds", [(0,), (3, 5, 7)])
def test_reproduction_tables_cell_by_cell(seeds):
    """D1, D2 (plain and offset), duplicates, MIA, first-seed benchmark, split, decoy and
    dilution: every row against values recomputed from the hand-made per-seed models."""
    results, per_setting = reproduction(seeds)
    text = markdown(results, command="waterdrum reproduce")
    mia = {
        setting: tuple(
            over_seeds([c[fraction]["mia"] for c in models.values()]) for fraction in (1.0, 0.0)
        )
        for setting, models in per_setting.items()
    }
    check_reproduction_tables(
        text, results, hand_stat(per_setting, (*D2_METRICS, *EVERY_METRIC)), mia
    )
    shares = [kept / 10 for kept in (0, 3, 6, 10)]
    curves = {spaced(s): hand_split(m) for s, m in per_setting.items()}
    split = table_after(text, "## Calibration (D2)", "WaterDrum's forget value split by query")
    assert split == expected_split(curves, shares, "setting")
    assert table_after(text, "## The metrics' own meta-evaluation") == expected_meta_table(seeds)


def test_reproduction_tables_show_undefined_values_and_the_paper_columns():
    """The hand-made models' edge cases reach the tables: a flat MIA and a missing one read
    "undefined" (D2 and the MIA table), an empty split side reads "–", a method without a
    p-value "–", a setting without duplicates has no row."""
    text = markdown(reproduction((0, 1, 2))[0], command="waterdrum reproduce")
    r2 = table_after(text, "## Calibration (D2)", "Without referencing")
    assert [row[4] for row in r2[2:]] == ["undefined", "undefined"]
    assert table_after(text, "## MIA baseline")[3][1:] == ["undefined", "undefined"]
    assert "nan" not in text
    split = table_after(text, "## Calibration (D2)", "WaterDrum's forget value split by query")
    assert split[1][2] == "–" and split[2][-1] == "–"
    assert [row[:2] for row in table_after(text, "## Separability (D1)", "ROUGE-L recall")[1:]] == [
        ["exact duplicate", "watermarked"],
        ["semantic duplicate", "watermarked"],
        ["exact duplicate", "unwatermarked"],
        ["semantic duplicate", "unwatermarked"],
    ]
    assert table_after(text, "## The benchmark of unlearning methods")[4][-1] == "–"


@pytest.mark.parametrize("seeds", [(0,), (3, 5, 7)])
def test_benchmark_over_every_seed_cell_by_cell(seeds):
    """Per setting: each model's forget and retain means over its runs with scipy's t interval,
    and the number of runs; one seed has no such section."""
    results, _ = reproduction(seeds)
    text = markdown(results, command="waterdrum reproduce")
    if len(seeds) == 1:
        assert "## The benchmark over every seed" not in text
        return
    header = [
        "model",
        "forget (95% CI over runs)",
        "retain (95% CI over runs)",
        "runs",
    ]
    for setting, models in results["benchmark_runs"].items():
        expected = [header]
        for name, runs in models.items():
            forget, retain = ([r[side] for r in runs] for side in ("forget", "retain"))
            expected.append([name, t_cell(forget), t_cell(retain), str(len(runs))])
        assert (
            table_after(text, "## The benchmark over every seed", f"{spaced(setting)}:") == expected
        )


# --- The scheme comparison -------------------------------------------------------------------

COMPARISON_SETTINGS = ("no_duplicate", "exact_duplicate")


def comparison(seeds: tuple[int, ...]) -> tuple[dict, dict]:
    """A comparison's results dict (summaries and curves by the real code) and the per-seed
    measurements per scheme and setting."""
    per_scheme = {
        scheme: {
            setting: measured(seeds, 3 + 2 * j + s, baselines=False)
            for s, setting in enumerate(COMPARISON_SETTINGS)
        }
        for j, scheme in enumerate(SCHEMES)
    }

    def one(j: int, s: int, per_seed: dict) -> dict:
        base = 0.1 * j + 0.01 * s
        model = {
            "forget": 0.6 + base,
            "forget_null_mean": 0.01 * j,
            "forget_null_std": 0.05 + base,
            "forget_z": 9.87 + j,
            "retain": 0.55 - base,
            "retain_z": 7.65 - s,
        }
        retrained = {**model, "forget": -0.02 - base, "forget_z": None, "retain": math.nan}
        return {
            **summarise(per_seed),
            "models": {"original": model, "retrained": retrained},
            "curve": calibration_curves(per_seed, FRACTIONS),
            "verify_seconds_per_text": 0.000123 * (j + 1) + 0.00001 * s,
            "watermark_strength": {"mean": 0.8 - base, "std": 0.05 + base},
            "separation": {
                "retain_mean": 0.7 + base,
                "retain_std": 0.1 + base,
                "forget_mean": -0.01 * j,
                "forget_std": 0.12 + base,
                "gap_in_sd": 5.0 + j + 0.1 * s,
            },
        }

    config = ReproductionConfig(
        schemes=tuple(SCHEMES), settings=COMPARISON_SETTINGS, fractions=FRACTIONS, seeds=seeds
    )
    results = {
        "schemes": {
            scheme: {s: one(j, i, per_scheme[scheme][s]) for i, s in enumerate(COMPARISON_SETTINGS)}
            for j, scheme in enumerate(SCHEMES)
        },
        "config": dataclasses.asdict(config),
        "seconds": {**dict.fromkeys(SCHEMES, 10.0), "total": 40.0},
        "stages": {"built": 24, "reused": 0, "reused_build_seconds": 0.0},
    }
    return results, per_scheme


def check_comparison_tables(
    text: str,
    schemes: Mapping[str, Mapping[str, Any]],
    stat: Stat,
    curve_ends: Callable[[str, str], tuple[float, float]],
    seeds: int,
) -> None:
    """Table 5, the runs' other numbers and the original/retrained table of each setting."""
    settings = list(next(iter(schemes.values())))
    for setting in settings:
        section = f"## {spaced(setting)}"
        table_5 = [
            [
                "watermarking method",
                "D1 separability (AUROC)",
                "D2 calibration (R²)",
                "verification time per text",
                "paper: AUROC",
                "paper: R²",
                "paper: time",
                "paper: needs a GPU?",
            ]
        ]
        more = [
            [
                "watermarking method",
                "AUROC, null-corrected",
                "R², null-corrected",
                "R², offset",
                "forget value at k = 0 / 100 %",
                "corpus score",
                "retrained model: retain queries, forget queries, gap in sd",
            ]
        ]
        models = [
            [
                "watermarking method",
                "model",
                "forget",
                "forget null",
                "forget z",
                "retain",
                "retain z",
            ]
        ]
        for scheme, per_setting in schemes.items():
            s, label = per_setting[setting], SCHEMES[scheme]
            cell = {
                (name, metric): mean_sd_cell(*stat(scheme, setting, name, metric), seeds, name)
                for name in ("auroc", "r2", "r2_offset")
                for metric in ("waterdrum", "waterdrum_null_corrected")
            }
            table_5.append(
                [
                    label,
                    cell["auroc", "waterdrum"],
                    cell["r2", "waterdrum"],
                    f"{1000 * s['verify_seconds_per_text']:.2f} ms",
                    *PAPER_TABLE_5[scheme],
                ]
            )
            first, last = curve_ends(scheme, setting)
            strength, sep = s["watermark_strength"], s["separation"]
            more.append(
                [
                    label,
                    cell["auroc", "waterdrum_null_corrected"],
                    cell["r2", "waterdrum_null_corrected"],
                    cell["r2_offset", "waterdrum"],
                    f"{three(first)} / {three(last)}",
                    f"{strength['mean']:+.3f} ± {strength['std']:.3f}",
                    f"{sep['retain_mean']:+.3f} ± {sep['retain_std']:.3f}, "
                    f"{sep['forget_mean']:+.3f} ± {sep['forget_std']:.3f}, "
                    f"{sep['gap_in_sd']:.2f}",
                ]
            )
            for model, r in s["models"].items():
                models.append(
                    [
                        label,
                        model,
                        three(r.get("forget")),
                        f"{three(r.get('forget_null_mean'))} ± {three(r.get('forget_null_std'))}",
                        signed_one(r.get("forget_z")),
                        three(r.get("retain")),
                        signed_one(r.get("retain_z")),
                    ]
                )
        assert table_after(text, section) == table_5
        assert table_after(text, section, "More of the same runs") == more
        assert table_after(text, section, "The metric on the original model") == models


@pytest.mark.parametrize("seeds", [(0,), (3, 5, 7)])
def test_scheme_comparison_tables_cell_by_cell(seeds):
    """Each setting's Table 5, the runs' other numbers and the original/retrained table, and
    the split per scheme and setting: every row against the hand-made per-seed models."""
    results, per_scheme = comparison(seeds)
    text = comparison_markdown(results, command="waterdrum reproduce --schemes x y")
    fits = {
        (scheme, setting): hand_fits(per_seed, ("waterdrum", "waterdrum_null_corrected"))
        for scheme, per_setting in per_scheme.items()
        for setting, per_seed in per_setting.items()
    }

    def curve_ends(scheme: str, setting: str) -> tuple[float, float]:
        per_seed = per_scheme[scheme][setting].values()
        first, last = (
            float(np.mean([forget_mean(c[f], "waterdrum") for c in per_seed])) for f in (0.0, 1.0)
        )
        return first, last

    check_comparison_tables(
        text,
        results["schemes"],
        lambda scheme, setting, name, metric: over_seeds(fits[scheme, setting][name][metric]),
        curve_ends,
        len(seeds),
    )
    curves = {
        f"{SCHEMES[scheme]}, {spaced(setting)}": hand_split(per_seed)
        for scheme, per_setting in per_scheme.items()
        for setting, per_seed in per_setting.items()
    }
    split = table_after(text, "WaterDrum's forget value split by query, per scheme")
    assert split == expected_split(curves, [kept / 10 for kept in (0, 3, 6, 10)], "scheme, setting")


# --- The committed results -------------------------------------------------------------------


def nan_for_null(value: Any) -> Any:
    """results.json read back as the run held it: JSON's null is NaN (the config's are None)."""
    if isinstance(value, dict):
        return {k: v if k == "config" else nan_for_null(v) for k, v in value.items()}
    if isinstance(value, list):
        return [nan_for_null(v) for v in value]
    return math.nan if value is None else value


def committed(name: str) -> tuple[dict, str]:
    """A committed run's results (as the run held them) and its results.md."""
    folder = RESULTS / name
    results = nan_for_null(json.loads((folder / "results.json").read_text()))
    return results, (folder / "results.md").read_text()


@pytest.mark.parametrize("name", ["reproduction", "substitution", "schemes"])
def test_committed_results_md_is_the_render_of_its_results_json(name):
    """The committed results.md is what `waterdrum reproduce` writes from the results.json
    beside it (the command rebuilt from its config, the machine as results.json records it):
    `python docs/generators/rerender_reproduction.py` rewrites it after a change of wording."""
    results, text = committed(name)
    assert set(results["machine"]) == {"machine", "cpu_count"}
    config = ReproductionConfig(
        **{k: tuple(v) if isinstance(v, list) else v for k, v in results["config"].items()}
    )
    command = reproduce_command(config)
    render = comparison_markdown if "schemes" in results else markdown
    rendered = render(results, command=command)
    diff = "\n".join(
        difflib.unified_diff(
            text.splitlines(), rendered.splitlines(), "committed", "rendered", lineterm="", n=0
        )
    )
    assert rendered == text, f"{name}/results.md is stale:\n{diff}"


def test_committed_reproduction_tables_match_results_json():
    """Every table of the committed reproduction's results.md (D1, D2, offset D2, duplicates,
    MIA, benchmark, split, decoy, dilution), cell by cell against its results.json (which
    keeps means and sds over seeds, not the per-seed values)."""
    results, text = committed("reproduction")
    mia = {
        s: ((m["original"], m["original_std"]), (m["retrained"], m["retrained_std"]))
        for s, m in results["mia"].items()
    }
    check_reproduction_tables(text, results, saved_stat(results["settings"]), mia)
    shares = next(iter(results["curves"].values()))["share"]
    curves = {spaced(s): c["waterdrum_split"] for s, c in results["curves"].items()}
    split = table_after(text, "## Calibration (D2)", "WaterDrum's forget value split by query")
    assert split == expected_split(curves, shares, "setting")
    meta = results.get("meta_evaluation")
    if meta:  # each measure's mean and sd over seeds as results.json keeps them
        seeds = len(results["config"]["seeds"])
        shown = table_after(text, "## The metrics' own meta-evaluation")
        assert shown[1:] == [
            [LABELS[metric], *(mean_sd_cell(measures[m]["mean"], measures[m]["std"], seeds, "meta")
                               for m in META_MEASURES)]
            for metric, measures in meta["metrics"].items()
        ]  # fmt: skip


def test_committed_scheme_comparison_tables_match_results_json():
    """Every table of the committed scheme comparison's results.md, cell by cell against its
    results.json."""
    results, text = committed("schemes")
    schemes = results["schemes"]
    stat = saved_stat(
        {(scheme, setting): s for scheme, p in schemes.items() for setting, s in p.items()}
    )
    check_comparison_tables(
        text,
        schemes,
        lambda scheme, setting, name, metric: stat((scheme, setting), name, metric),
        lambda scheme, setting: (
            schemes[scheme][setting]["curve"]["waterdrum"]["mean"][0],
            schemes[scheme][setting]["curve"]["waterdrum"]["mean"][-1],
        ),
        len(results["config"]["seeds"]),
    )
    curves = {
        f"{SCHEMES[scheme]}, {spaced(setting)}": s["curve"]["waterdrum_split"]
        for scheme, p in schemes.items()
        for setting, s in p.items()
    }
    shares = next(iter(next(iter(schemes.values())).values()))["curve"]["share"]
    split = table_after(text, "WaterDrum's forget value split by query, per scheme")
    assert split == expected_split(curves, shares, "scheme, setting")
