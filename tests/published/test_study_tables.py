"""The committed study tables, cell by cell: every row of each results Markdown file is rebuilt
here from the per-seed or per-draw values of the results JSON beside it, formatted as the table
documents, and compared whole.

``benchmarks/tests/test_published_studies.py`` checks that the robustness and capacity tables
are their scripts' own ``markdown`` of the committed JSON (a renderer that computes a cell wrongly would pass it
after a rerun); here nothing comes from ``benchmarks/``: means and Student's t intervals over
seeds are computed with numpy and scipy, Clopper-Pearson intervals from the beta distribution,
and each GPU column that a step derives from others (rates, shares, limits) from those others.
``null_agreement.md`` has no committed JSON (its script writes only the Markdown), so of it only
what the file itself fixes is checked: each share is a count of its owners.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
NAN = math.nan

Table = tuple[str, list[str], list[list[str]]]
"""A Markdown table: the ``## `` heading above it ("" if none), its headers and its rows."""


def load(relative: str) -> Any:
    return json.loads((RESULTS / relative).read_text())


def cells(line: str) -> list[str]:
    """The cells of a ``| a | b |`` line, exactly as written between the separators."""
    assert line.startswith("| ") and line.endswith(" |"), line
    return line[2:-2].split(" | ")


def tables(relative: str) -> list[Table]:
    """Every Markdown table of a results file, in order."""
    found: list[Table] = []
    lines = (RESULTS / relative).read_text().splitlines()
    section, i = "", 0
    while i < len(lines):
        if lines[i].startswith("## "):
            section = lines[i][3:]
        if not lines[i].startswith("|"):
            i += 1
            continue
        header = cells(lines[i])
        assert lines[i + 1] == "|" + " --- |" * len(header), (relative, lines[i + 1])
        i += 2
        rows = []
        while i < len(lines) and lines[i].startswith("|"):
            rows.append(cells(lines[i]))
            i += 1
        found.append((section, header, rows))
    return found


def assert_rows(shown: list[list[str]], expected: list[list[str]], what: object) -> None:
    """The same number of rows, each the expected one, cell for cell."""
    assert len(shown) == len(expected), (what, f"{len(shown)} rows, expected {len(expected)}")
    for got, want in zip(shown, expected, strict=True):
        assert got == want, (what, want[:2])


def t_interval(values: Sequence[float | None]) -> tuple[float, float, float]:
    """Mean and 95 % Student's t interval over seeds (missing values left out; NaN ends below
    two values, NaN throughout without one)."""
    finite = np.array([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if not finite.size:
        return NAN, NAN, NAN
    mean = float(finite.mean())
    if finite.size < 2:
        return mean, NAN, NAN
    sem = float(stats.sem(finite))
    if sem == 0:  # every seed alike: an interval of no width
        return mean, mean, mean
    low, high = stats.t.interval(0.95, finite.size - 1, loc=mean, scale=sem)
    return mean, float(low), float(high)


def interval_text(mean: float, low: float, high: float, form: str) -> str:
    """``mean [low, high]``; the mean alone without an interval, a dash without a mean."""
    if not math.isfinite(mean):
        return "–"
    text = form.format(mean)
    if math.isfinite(low):
        text += f" [{form.format(low)}, {form.format(high)}]"
    return text


# ---------------------------------------------------------------------------------------------
# robustness/results.md: a table per scheme, a row per attack and strength


def robustness_columns(alpha: float) -> list[tuple[str, str, str, tuple[float, float]]]:
    """Heading, per-seed key, format and the scale its interval is clipped to."""
    share, count, value = (0.0, 1.0), (0.0, math.inf), (-math.inf, math.inf)
    return [
        ("original: forget", "original_forget", "{:+.3f}", value),
        ("original: retain", "original_retain", "{:+.3f}", value),
        ("retrained: forget", "retrained_forget", "{:+.3f}", value),
        ("retrained: retain", "retrained_retain", "{:+.3f}", value),
        ("D1 AUROC (retrained)", "auroc", "{:.3f}", share),
        (f"owners detected, original (p < {alpha})", "detected_original", "{:.2f}", share),
        (f"retain owners detected, retrained (p < {alpha})", "detected_retain", "{:.2f}", share),
        (f"forget owners detected, retrained (p < {alpha})", "false_forget", "{:.2f}", share),
        ("samples without a countable token (both models)", "skipped", "{:.1f}", count),
    ]


def test_robustness_tables_every_cell_recomputed_from_the_per_seed_rows():
    """Per scheme, one row per attack and strength (the unedited text once, then every attack at
    every strength above 0, in the runs' order); each measure the mean over the plan's seeds
    with its 95 % t-interval, shares and AUROCs clipped to [0, 1] and counts at 0."""
    from waterdrum_hf import attacks

    results = load("robustness/results.json")
    plan = results["plan"]
    columns = robustness_columns(results["alpha"])
    found = tables("robustness/results.md")
    assert [section for section, _, _ in found] == plan["schemes"]
    for scheme, header, shown in found:
        assert header == ["attack", "strength", *(heading for heading, *_ in columns)]
        groups: dict[tuple[str, float], list[dict]] = {}
        for row in results["rows"]:
            if row["scheme"] == scheme:
                groups.setdefault((row["attack"], row["strength"]), []).append(row)
        grid = [("none", 0.0)] + [
            (a, s) for a in attacks.names() for s in plan["strengths"] if s > 0
        ]
        assert sorted(groups) == sorted(grid), scheme
        expected = []
        for (attack, strength), members in groups.items():
            assert sorted(m["seed"] for m in members) == plan["seeds"], (scheme, attack, strength)
            row = [attack, f"{strength:.1f}"]
            for _, key, form, (floor, ceiling) in columns:
                mean, low, high = t_interval([m[key] for m in members])
                row.append(interval_text(mean, max(low, floor), min(high, ceiling), form))
            expected.append(row)
        assert_rows(shown, expected, scheme)


# ---------------------------------------------------------------------------------------------
# capacity/results.md: a row per base-model size and fine-tuning epochs

CAPACITY_COLUMNS = [  # heading, per-seed key, format
    ("D2 R²", "r2", "{:.3f}"),
    ("D2 R² (offset)", "r2_offset", "{:.3f}"),
    ("carry-over", "carry_over", "{:+.3f}"),
    ("D1 AUROC", "auroc", "{:.3f}"),
    ("training NLL (k = 100 %)", "nll", "{:.2f}"),
]


def test_capacity_table_every_cell_recomputed_from_the_per_seed_rows():
    """A row per size and epochs of the plan (sizes outer); parameters in millions; D2 R², its
    offset form, the carry-over, D1 AUROC and the training NLL each the mean over the seeds with
    its 95 % t-interval cut to the range the column can take (R² and AUROC end at 1, an AUROC
    and an NLL start at 0, a carry-over lies in [-2, 2]); below it, each column's Pearson r with
    mean D2 R²."""
    results = load("capacity/results.json")
    plan = results["plan"]
    ((_, header, shown),) = tables("capacity/results.md")
    assert header == ["base model", "parameters", "epochs", *(h for h, _, _ in CAPACITY_COLUMNS)]
    groups: dict[tuple[str, int], list[dict]] = {}
    for row in results["rows"]:
        groups.setdefault((row["size"], row["epochs"]), []).append(row)
    assert list(groups) == [(s, e) for s in plan["sizes"] for e in plan["epochs"]]
    expected, means = [], []
    for (size, epochs), members in groups.items():
        assert sorted(m["seed"] for m in members) == plan["seeds"], (size, epochs)
        (params,) = {m["params"] for m in members}
        row = [size, f"{params / 1e6:.2f}M", str(epochs)]
        cell_means = {}
        for _, key, form in CAPACITY_COLUMNS:
            mean, low, high = t_interval([m[key] for m in members])
            lowest, highest = {"r2": (-math.inf, 1), "r2_offset": (-math.inf, 1), "auroc": (0, 1),
                               "carry_over": (-2, 2), "nll": (0, math.inf)}[key]  # fmt: skip
            row.append(interval_text(mean, max(low, lowest), min(high, highest), form))
            cell_means[key] = mean
        expected.append(row)
        means.append(cell_means)
    assert_rows(shown, expected, "capacity")
    r2 = [m["r2"] for m in means]
    carry = stats.pearsonr([m["carry_over"] for m in means], r2)[0]
    nll = stats.pearsonr([m["nll"] for m in means], r2)[0]
    text = (RESULTS / "capacity/results.md").read_text()
    assert (
        f"Correlation over the {len(means)} cells with mean D2 R²: of mean carry-over, "
        f"{carry:+.2f} (negative" in text
    )
    assert f"of mean training NLL, {nll:+.2f} (negative" in text


# ---------------------------------------------------------------------------------------------
# owner_detection_error.md: a row per null


def clopper_pearson(count: int, draws: int) -> tuple[float, float]:
    """The exact 95 % binomial interval, from the beta distribution."""
    low = 0.0 if count == 0 else float(stats.beta.ppf(0.025, count, draws - count + 1))
    high = 1.0 if count == draws else float(stats.beta.ppf(0.975, count + 1, draws - count))
    return low, high


def band(draws: int, level: float = 0.05) -> int:
    """The smallest count that Binomial(draws, level) stays at or below 95 % of the time."""
    cdf = stats.binom.cdf(np.arange(draws + 1), draws, level)
    return int(np.argmax(cdf >= 0.95))


RATES = (
    ("unadjusted", "some_owner_unadjusted"),
    ("holm", "some_owner_holm"),
    ("forget_set_rate", "forget_set"),
)
"""Each rate's key in the results and the key of its count."""


def test_owner_detection_error_table_every_cell_recomputed_from_the_counts():
    """Per null: its draws; the share of draws in which some owner read detected unadjusted, with
    Holm, and the forget set read detected, each in percent with its Clopper-Pearson interval;
    whether Holm's count is within the binomial band of 0.05; the seconds. The JSON's own rates
    and band are these too."""
    results = load("owner_detection_error.json")
    ((_, header, shown),) = tables("owner_detection_error.md")
    assert header == [
        "null", "draws", "some owner detected, unadjusted", "some owner detected, Holm",
        "Holm within the band of 0.05", "forget set detected (one test)", "s",
    ]  # fmt: skip
    expected = []
    for name, null in results["nulls"].items():
        draws, texts = null["draws"], {}
        for key, count in RATES:
            low, high = clopper_pearson(null[count], draws)
            rate = null[count] / draws
            stored = null[key]
            assert stored["rate"] == pytest.approx(rate), (name, key)
            assert (stored["ci_low"], stored["ci_high"]) == pytest.approx((low, high)), (name, key)
            texts[key] = f"{100 * rate:.1f} % [{100 * low:.1f}, {100 * high:.1f}]"
        limit = band(draws)
        assert null["band_count"] == limit, name
        holm = null["some_owner_holm"]
        assert null["holm_within_band"] == (holm <= limit), name
        within = f"{'yes' if holm <= limit else 'no'} ({holm} <= {limit})"
        rates = [texts[key] for key, _ in RATES]
        expected.append([name, str(draws), *rates[:2], within, rates[2], f"{null['seconds']:.0f}"])
    assert_rows(shown, expected, "owner detection error")


# ---------------------------------------------------------------------------------------------
# seed_interval_coverage/results.md: a row per run-to-run sd, runs and interval

INTERVALS = ("queries (1 run)", "t over runs", "two-level bootstrap")


def test_seed_interval_coverage_table_every_cell_recomputed_from_the_rows():
    """A row per seed sd, runs and interval, in the settings' order; experiments as set (the
    two-level bootstrap on its first ones); the coverage a count of them; the binomial band
    0.95 ± 1.96 sqrt(0.95 x 0.05 / experiments), and whether the coverage lies in it. The
    summary lines are each interval's range and count within."""
    record = load("seed_interval_coverage/results.json")
    settings = record["settings"]
    ((_, header, shown),) = tables("seed_interval_coverage/results.md")
    assert header == [
        "seed sd", "runs", "interval", "experiments", "coverage", "binomial band", "within",
    ]  # fmt: skip
    seed_sds = [float(x) for x in settings["seed_sds"].split(",")]
    runs = [int(x) for x in settings["runs"].split(",")]
    keys = [(sd, n, method) for sd in seed_sds for n in runs for method in INTERVALS]
    rows = record["rows"]
    assert [(r["seed_sd"], r["runs"], r["interval"]) for r in rows] == keys
    expected, summary = [], {method: [] for method in INTERVALS}
    for row, (sd, n, method) in zip(rows, keys, strict=True):
        two_level = method == "two-level bootstrap"
        experiments = settings["two_level_experiments" if two_level else "experiments"]
        assert row["experiments"] == experiments, (sd, n, method)
        hits = row["coverage"] * experiments
        assert hits == pytest.approx(round(hits), abs=1e-6), (sd, n, method)
        half = 1.96 * math.sqrt(0.95 * 0.05 / experiments)
        within = abs(row["coverage"] - 0.95) <= half
        summary[method].append((row["coverage"], within))
        band_text = f"[{0.95 - half:.3f}, {0.95 + half:.3f}]"
        coverage = f"{row['coverage']:.3f}"
        verdict = "yes" if within else "no"
        expected.append([f"{sd:g}", str(n), method, str(experiments), coverage, band_text, verdict])
    assert_rows(shown, expected, "seed interval coverage")
    text = (RESULTS / "seed_interval_coverage/results.md").read_text()
    for method, found in summary.items():
        coverages = [c for c, _ in found]
        assert (
            f"- {method}: coverage {min(coverages):.3f} to {max(coverages):.3f}; within the "
            f"binomial band in {sum(w for _, w in found)} of {len(found)} cells." in text
        )


# ---------------------------------------------------------------------------------------------
# gpu/*/results.md: a table of the steps, then a table per step of its rows

GPU_RUNS = sorted(
    p.parent.name
    for p in (RESULTS / "gpu").glob("*/results.md")
    if (p.parent / "results.json").exists()
)


def gpu_cell(value: Any) -> str:
    """As the GPU tables write a value: booleans and None by name, floats to four significant
    digits (NaN as ``nan``), lists space-separated, text with ``|`` as ``/``."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4g}"
    if isinstance(value, list):
        return " ".join(gpu_cell(v) for v in value)
    return str(value).replace("|", "/")


def derived(name: str, step: dict, row: dict) -> dict[str, Any]:
    """The columns a step computes from its row's other columns (and the step's own figures)."""
    if "skipped" in row:
        return {}
    if name == "generation":
        tokens = round(row["sequences"] * row["mean_new_tokens"])
        bandwidth, batch = step["copy_bandwidth_gbs"], row["start_batch"]
        limit = batch * bandwidth / (row["weights_gb"] + row["kv_gb_per_step"])
        found = {
            "tokens_per_s": tokens / row["seconds"],
            "steps_per_s_weights_only": bandwidth / row["weights_gb"],
            "tokens_per_s_limit_weights": batch * bandwidth / row["weights_gb"],
            "tokens_per_s_limit_weights_kv": limit,
            "share_of_limit": tokens / row["seconds"] / limit,
        }
        if "seconds_range" in row:
            fastest, slowest = row["seconds_range"]
            found["tokens_per_s_range"] = [tokens / slowest, tokens / fastest]
        return found
    if name == "training":
        size, length = map(int, row["batch"].split(" x "))
        return {"tokens_per_s": 2 * size * length / row["step_s"]}  # a forget and a retain batch
    if name == "callback" and "callback_s" in row:
        (plain,) = [r for r in step["rows"] if r["max_queries_per_owner"] == "none"]
        return {
            "callback_share": row["callback_s"] / row["train_runtime_s"],
            "overhead_vs_no_callback": row["train_runtime_s"] / plain["train_runtime_s"] - 1,
        }
    if name == "score":
        return {
            "rest_s": row["command_s"] - row["load_model_s"] - row["sample_s"],
            "sample_tokens_per_s": row["new_tokens"] / row["sample_s"],
        }
    if name == "verification" and "verify_s" in row:
        return {"shuffle_share_of_verify": row["shuffle_cpu_s"] / row["verify_s"]}
    return {}


@pytest.mark.parametrize("run", GPU_RUNS)
def test_gpu_tables_every_cell_is_the_runs_json(run):
    """The steps table (status, seconds, budget, the count of rows), then per step with rows a
    table whose columns are its rows' keys in order of appearance and whose cells are the
    rows' values (empty where a row has none); each column the step derives from others is
    also recomputed from them."""
    report = load(f"gpu/{run}/results.json")
    steps = report["steps"]
    found = tables(f"gpu/{run}/results.md")
    (_, header, shown), *per_step = found
    assert header == ["step", "status", "seconds", "budget s", "rows"]
    expected = [
        [name, s["status"], f"{s['seconds']:.1f}", f"{s['budget_s']:.0f}", str(len(s["rows"]))]
        for name, s in steps.items()
    ]
    assert_rows(shown, expected, (run, "steps"))
    assert [section for section, _, _ in per_step] == [n for n, s in steps.items() if s["rows"]]
    for name, header, shown in per_step:
        rows = steps[name]["rows"]
        columns = list(dict.fromkeys(key for row in rows for key in row))
        assert header == columns, (run, name)
        expected = []
        for row in rows:
            again = derived(name, steps[name], row)
            for key, value in again.items():
                assert np.allclose(value, row[key], rtol=1e-9), (run, name, key, row)
            expected.append([gpu_cell(again.get(c, row.get(c, ""))) for c in columns])
        assert_rows(shown, expected, (run, name))


def test_gpu_runs_with_a_table_have_their_json():
    """Every committed GPU results.md has the results.json it was written from."""
    tables_ = sorted(p.parent.name for p in (RESULTS / "gpu").glob("*/results.md"))
    assert tables_ == GPU_RUNS and GPU_RUNS


# ---------------------------------------------------------------------------------------------
# null_agreement.md: no committed JSON


def share_of(shown: str, owners: int) -> int:
    """The count of ``owners`` that a percentage shown to one decimal stands for."""
    counts = [k for k in range(owners + 1) if f"{k / owners:.1%}" == shown]
    assert counts, f"{shown} is no count of {owners} owners"
    return counts[0]


def test_null_agreement_shares_are_counts_of_the_owners_the_file_states():
    """Its script writes no JSON, so its cells are not recomputed; every share must still be a
    count of the stated owners: agreement of all of them, rejections of each kind's (all of
    them unwatermarked where the case has no watermarked owners), and effective pairs at
    most the pairs."""
    text = (RESULTS / "null_agreement.md").read_text()
    assert not (RESULTS / "null_agreement.json").exists()  # when it appears, recompute the cells
    found = re.search(r"(\d+) unwatermarked and (\d+) watermarked owners per case", text)
    assert found and found[1] == found[2]
    owners = int(found[1])
    ((_, header, shown),) = tables("null_agreement.md")
    assert len(header) == 13 and len(shown) == 8
    pair = re.compile(r"(\S+%) vs (\S+%) / (\S+%) vs (\S+%)")
    for row in shown:
        assert int(row[4]) <= int(row[3]), row[0]
        for agree in row[8].split(" / "):
            share_of(agree, 2 * owners)
        clean = owners if row[10] != "(none)" else 2 * owners
        match = pair.fullmatch(row[9])
        assert match, row[0]
        for value in match.groups():
            share_of(value, clean)
        if row[10] != "(none)":
            match = pair.fullmatch(row[10])
            assert match, row[0]
            for value in match.groups():
                share_of(value, owners)
