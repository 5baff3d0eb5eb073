"""Every figure of the generated documentation blocks, recomputed here from the results files.

``tests/docs/test_published_numbers.py`` checks that each block reads what its renderer gives
today; a renderer that computes a figure wrongly (a ratio over the wrong baseline, an interval
over the wrong runs) would pass that check once ``update_docs.py`` is re-run. Here each block is
rendered as ``update_docs.py`` would write it, its numbers are read back out of the text next to
their labels, and each is compared with a value computed in this file from the raw results
(per-seed rows, per-run values, timing runs): means with numpy, Student's t intervals and
Pearson r with scipy. A shown number agrees when it is the computed value rounded to the
decimals shown.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
GATE = ROOT / "mutation" / "results"
sys.path.insert(0, str(ROOT / "docs" / "generators"))

import demo_block  # noqa: E402
import doc_blocks  # noqa: E402
import gpu_block  # noqa: E402
import schemes_block  # noqa: E402
import trust_block  # noqa: E402
import update_docs  # noqa: E402

DETECTION_LEVEL = 0.05
"""The p-value at or below which the report calls a watermark still detected (its documented
level)."""


# ---------------------------------------------------------------------------------------------
# Reading numbers back out of rendered text


def rendered(path: str, name: str) -> str:
    """Block ``name`` of ``path`` as ``update_docs.py`` would write it now."""
    (block,) = [b for b in update_docs.BLOCKS if (b.path, b.name) == (path, name)]
    return block.text()


def load(relative: str) -> Any:
    return json.loads((RESULTS / relative).read_text())


def agrees(shown: str, value: float) -> bool:
    """``shown`` (``+0.5``, ``1,475``, ``78%``, ``4.6e-05``) is ``value`` rounded to the
    digits shown."""
    text = shown.strip().replace(",", "")
    if text.endswith("%"):
        text, value = text[:-1], value * 100
    mantissa, _, exponent = text.lower().partition("e")
    places = len(mantissa.partition(".")[2]) - int(exponent or 0)
    return math.isfinite(value) and abs(float(text) - value) <= 0.5 * 10**-places + 1e-9


def check(shown: str, value: float, what: object) -> None:
    assert agrees(shown, value), f"{what}: shows {shown}, the results give {value!r}"


def table(text: str, first_header: str) -> tuple[list[str], list[list[str]]]:
    """The Markdown table whose header starts with ``first_header``: its headers and rows."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    headers = [cell.strip() for cell in lines[start].strip().strip("|").split("|")]
    assert rows and all(len(row) == len(headers) for row in rows)
    return headers, rows


def search(pattern: str, text: str) -> re.Match[str]:
    found = re.search(pattern, text)
    assert found, f"{pattern!r} is not in the block:\n{text}"
    return found


INTERVAL = re.compile(r"(\S+) \[(\S+), (\S+)\]")


def check_interval(cell: str, expected: tuple[float, float, float], what: object) -> None:
    """``cell`` is ``mean [low, high]`` of ``expected``."""
    found = INTERVAL.fullmatch(cell)
    assert found, f"{what}: {cell!r} is not 'mean [low, high]'"
    for shown, value, part in zip(found.groups(), expected, ("mean", "low", "high"), strict=True):
        check(shown, value, (what, part))


def seeds_interval(
    mean: float, sd: float, seeds: int, bounds: tuple[float, float]
) -> tuple[float, float, float]:
    """Mean and scipy's 95 % t interval over ``seeds`` seeds from a population sd (ddof 0, as
    the reproduction's results.json keeps it), cut to ``bounds``."""
    scale = sd * math.sqrt(seeds / (seeds - 1)) / math.sqrt(seeds)
    if scale == 0:  # no spread: scipy's interval is undefined, the mean is the interval
        return mean, max(mean, bounds[0]), min(mean, bounds[1])
    low, high = stats.t.interval(0.95, seeds - 1, loc=mean, scale=scale)
    return mean, max(float(low), bounds[0]), min(float(high), bounds[1])


def t_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student's t interval over runs (scipy)."""
    array = np.asarray(values, dtype=float)
    mean = float(array.mean())
    if len(array) < 2:
        return mean, math.nan, math.nan
    sem = stats.sem(array)
    if sem == 0:
        return mean, mean, mean
    low, high = stats.t.interval(level, len(array) - 1, loc=mean, scale=sem)
    return mean, float(low), float(high)


# ---------------------------------------------------------------------------------------------
# docs/trust.md: "How far to trust the numbers"

SCHEMES = {"Waterfall": "waterfall", "KGW": "kgw"}


@pytest.fixture(scope="module")
def trust() -> str:
    return rendered(update_docs.TRUST, "trust")


@pytest.fixture(scope="module")
def robustness() -> dict:
    return load("robustness/results.json")


def cell_rows(rows: list[dict], scheme: str, attack: str, strength: float) -> list[dict]:
    found = [
        r
        for r in rows
        if (r["scheme"], r["attack"]) == (scheme, attack) and math.isclose(r["strength"], strength)
    ]
    assert found, (scheme, attack, strength)
    return found


def mean_of(rows: list[dict], column: str) -> float:
    return float(np.mean([r[column] for r in rows]))


def test_trust_attack_table_recomputed_from_the_per_seed_rows(trust, robustness):
    """Each cell of the attacks table is its per-seed rows' mean: the retain value kept is the
    attacked original's mean retain value over the same scheme's unedited mean, D1 the mean
    AUROC, owners detected the mean share of the original's owners detected."""
    rows = robustness["rows"]
    seeds = {r["seed"] for r in rows}
    assert int(search(r"The demo's setting, (\d+) seeds", trust)[1]) == len(seeds)
    assert float(search(r"still read p < ([\d.]+)\.", trust)[1]) == robustness["alpha"]
    headers, table_rows = table(trust, "attack")
    attacks = {r["attack"] for r in rows} - {"none"}
    shown = {(row[0], float(row[1])) for row in table_rows}
    strengths = {s for _, s in shown}
    assert shown == {(a, s) for a in attacks for s in strengths}  # every attack at each strength
    checked = 0
    for row in table_rows:
        attack, strength = row[0], float(row[1])
        for header, cell in zip(headers[2:], row[2:], strict=True):
            scheme_name, _, measure = header.partition(": ")
            scheme = SCHEMES[scheme_name]
            attacked = cell_rows(rows, scheme, attack, strength)
            if measure == "retain value kept":
                unedited = cell_rows(rows, scheme, "none", 0.0)
                value = mean_of(attacked, "original_retain") / mean_of(unedited, "original_retain")
            elif measure == "D1":
                value = mean_of(attacked, "auroc")
            else:
                assert measure == "owners detected", header
                value = mean_of(attacked, "detected_original")
            check(cell, value, (attack, strength, header))
            checked += 1
    assert checked == len(table_rows) * 3 * len(SCHEMES)


def test_trust_auroc_extremes_and_false_alarms_recomputed(trust, robustness):
    """The unedited D1 per scheme, the lowest D1 under any attack up to the stated strength
    (which attack, strength and scheme), and the largest upper end of a 95 % t-interval over
    seeds of the share of forget owners detected on the retrained model."""
    rows = robustness["rows"]
    unedited = search(r"Unedited, D1 AUROC is (.+?); its lowest", trust)[1]
    named = re.findall(r"(\S+) \((\w+)\)", unedited)
    assert {SCHEMES[n] for _, n in named} == set(robustness["plan"]["schemes"])
    for shown, name in named:
        check(shown, mean_of(cell_rows(rows, SCHEMES[name], "none", 0.0), "auroc"), name)
    lowest = search(
        r"its lowest under any attack up to strength ([\d.]+) is (\S+) \((\w+) at ([\d.]+), (\w+)\)",
        trust,
    )
    cells = {(r["scheme"], r["attack"], r["strength"]) for r in rows if r["attack"] != "none"}
    means = {
        cell: mean_of(cell_rows(rows, *cell), "auroc")
        for cell in cells
        if cell[2] <= float(lowest[1]) + 1e-12
    }
    worst = min(means, key=means.__getitem__)
    check(lowest[2], means[worst], "lowest D1")
    assert (SCHEMES[lowest[5]], lowest[3], float(lowest[4])) == worst
    groups = {(r["scheme"], r["attack"], r["strength"]) for r in rows}
    upper = max(
        min(t_interval([r["false_forget"] for r in cell_rows(rows, *g)])[2], 1.0) for g in groups
    )
    check(search(r"is at most (\S+) \(upper end of its interval\)", trust)[1], upper, "false alarm")
    if "No attack made a forgotten owner read as present" in trust:
        assert all(r["false_forget"] == 0 for r in rows)  # the claim, in every seed


def test_trust_dilution_table_recomputed_from_the_per_seed_values(trust):
    """The dilution table: the mean [95 % Student's t interval over seeds, cut to the
    measure's range] of each scheme's D1 AUROC and D2 R², beside the paper's values."""
    dilution = load("dilution/results.json")
    per_seed = list(dilution["per_seed"].values())
    assert len(per_seed) == len(dilution["config"]["seeds"]) >= 2
    headers, rows = table(trust, "model owner's watermark")
    assert headers[1:] == [
        "D1 AUROC (ours)", "D1 AUROC (paper)", "D2 R² (ours)", "D2 R² (paper)",
    ]  # fmt: skip
    labels = {
        "none": "none", "adapted Waterfall": "waterfall", "KGW": "kgw", "ITS": "its",
        "Unigram": "unigram",
    }  # fmt: skip
    seen = []
    for row in rows:
        (scheme,) = [s for label, s in labels.items() if row[0].startswith(label)]
        seen.append(scheme)
        for measure, ours, paper, index in (
            ("auroc", row[1], row[2], 0),
            ("r2", row[3], row[4], 1),
        ):
            values = [seed[measure][scheme] for seed in per_seed]
            found = re.fullmatch(r"(\S+) \[(\S+), (\S+)\]", ours)
            assert found, ours
            mean, low, high = t_interval(values, 0.95)
            top = 1.0  # an AUROC and R² both end at 1; an AUROC starts at 0
            expected = (mean, max(low, 0.0) if measure == "auroc" else low, min(high, top))
            for shown, value in zip(found.groups(), expected, strict=True):
                check(shown, value, (scheme, measure))
            if dilution["paper"][scheme] is None:  # a row the paper does not have
                assert paper == "–", (scheme, measure, paper)
            else:
                check(paper, dilution["paper"][scheme][index], (scheme, measure, "paper"))
    assert sorted(seen) == sorted(labels.values())


CAPACITY_RANGES = {
    "r2": (-math.inf, 1.0), "r2_offset": (-math.inf, 1.0), "auroc": (0.0, 1.0),
    "carry_over": (-2.0, 2.0), "nll": (0.0, math.inf),
}  # fmt: skip
"""The range each capacity column can take (R² ends at 1, an AUROC lies in [0, 1], a
difference of values in [-2, 2], an NLL starts at 0): the table cuts its intervals to it."""

CAPACITY_COLUMNS = {
    "D2 R²": "r2",
    "D2 R² (offset)": "r2_offset",
    "carry-over": "carry_over",
    "D1 AUROC": "auroc",
    "training NLL (k = 100 %)": "nll",
}


def capacity_cells(rows: list[dict]) -> dict[tuple[str, int], list[dict]]:
    cells: dict[tuple[str, int], list[dict]] = {}
    for row in rows:
        cells.setdefault((row["size"], row["epochs"]), []).append(row)
    return cells


def test_trust_capacity_table_and_correlations_recomputed_from_the_rows(trust):
    """The capacity table: each cell's mean [95 % t-interval] over seeds, recomputed from the
    per-seed rows; and the correlations are scipy's Pearson r of the per-cell means."""
    capacity = load("capacity/results.json")
    cells = capacity_cells(capacity["rows"])
    headers, rows = table(trust, "base model")
    assert [(row[0], int(row[2])) for row in rows] == list(cells)
    for row in rows:
        members = cells[(row[0], int(row[2]))]
        assert {m["params"] for m in members} == {members[0]["params"]}
        check(row[1].removesuffix("M"), members[0]["params"] / 1e6, (row[0], "parameters"))
        for header, cell in zip(headers[3:], row[3:], strict=True):
            column = CAPACITY_COLUMNS[header]
            mean, low, high = t_interval([m[column] for m in members])
            lowest, highest = CAPACITY_RANGES[column]
            expected = (mean, max(low, lowest), min(high, highest))
            check_interval(cell, expected, (row[0], row[2], header))
    means = {
        column: [float(np.mean([m[column] for m in cells[c]])) for c in cells]
        for column in ("r2", "carry_over", "nll")
    }
    for label, column in (("mean carry-over", "carry_over"), ("mean training NLL", "nll")):
        found = search(
            re.escape(label) + r"[^;]*?([+-]\d\.\d\d)(?:[ (,]+n = (\d+), p = ([\d.e-]+)\))?",
            trust,
        )
        pearson = stats.pearsonr(means[column], means["r2"])
        check(found[1], pearson.statistic, label)
        if found[2] is not None:  # with its number of cells and two-sided p-value
            assert int(found[2]) == len(cells)
            check(found[3], pearson.pvalue, (label, "p"))
    count = search(r"Over these (\d+) cells", trust)[1]
    assert int(count) == len(cells)
    widest = re.search(r"as wide as \[(\S+), (\S+)\]", trust)
    if widest:  # the widest D2 R² interval over seeds of any cell
        intervals = [t_interval([m["r2"] for m in members]) for members in cells.values()]
        _, low, high = max(intervals, key=lambda i: min(i[2], 1.0) - i[1])
        check(widest[1], low, "widest D2 low")
        check(widest[2], min(high, 1.0), "widest D2 high")  # R² ends at 1


def test_trust_regenerate_line_gives_each_studys_command_and_time(trust):
    """The commands and their measured times (minutes from each study's seconds; the capacity
    study's hours from its own estimate of the full run)."""
    robustness = load("robustness/results.json")
    dilution = load("dilution/results.json")
    capacity = load("capacity/results.json")
    line = next(line for line in trust.splitlines() if line.startswith("Regenerate:"))
    found = search(re.escape(f"`{robustness['command']}` (") + r"(\d+) minutes on ([^)]+)\)", line)
    check(found[1], robustness["seconds"] / 60, "robustness minutes")
    assert found[2] == robustness["machine"]
    found = search(re.escape(f"`{dilution['command']}` (") + r"(\d+) minutes\)", line)
    check(found[1], dilution["seconds"] / 60, "dilution minutes")
    found = search(re.escape(f"`{capacity['command']}` (") + r"[a-z ]*?([\d.]+) hours from", line)
    check(found[1], capacity["full_estimate_seconds"]["total"] / 3600, "capacity hours")


# ---------------------------------------------------------------------------------------------
# docs/guides/gpu.md: the GPU block


@pytest.fixture(scope="module")
def gpu() -> str:
    return rendered(update_docs.GPU, "gpu")


def gpu_steps() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Each step from the latest committed run that measured it, and that run's environment."""
    steps, environments = {}, {}
    for run in ("training_generation", "verification_callback", "fsdp", "h200", "h200_score"):
        results = load(f"gpu/{run}/results.json")
        steps.update(results["steps"])
        environments.update({step: results["environment"] for step in results["steps"]})
    return steps, environments


def test_gpu_software_line_names_each_steps_device_and_versions_and_the_floors(gpu):
    """Every step is named once, with the device and versions of the run that measured it;
    the floors are .ci/floors.txt's pins."""
    _, environments = gpu_steps()
    line = search(r"Software: (.+) \(declared floors: torch (\S+) and transformers (\S+)\)\.", gpu)
    named = []
    for part in line[1].split("; "):
        steps, _, where = part.partition(" on ")
        device, torch_version, transformers_version, _ = where.split(", ")
        for step in steps.split(", "):
            named.append(step)
            env = environments[step]
            assert device == env["device"], step
            assert torch_version == f"torch {env['versions']['torch']}", step
            assert transformers_version == f"transformers {env['versions']['transformers']}"
    assert sorted(named) == sorted(environments)
    pins = dict(
        line.split("==")
        for line in (ROOT / ".ci" / "floors.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    assert (line[2], line[3]) == (pins["torch"], pins["transformers"])


def test_gpu_training_table_recomputed(gpu):
    """Each training row's step time, tokens/s and peak memory; tokens/s is also the 8 x 256
    tokens of each of the two sides over the step time, and the dtype and device sentence
    holds for every row."""
    steps, _ = gpu_steps()
    training = steps["training"]["rows"]
    headers, rows = table(gpu, "method")
    assert len(rows) == len(training)
    for row, result in zip(rows, training, strict=True):
        assert row[0] == result["method"]
        assert row[1] == result["reference"].replace("_", " ")
        assert row[2] == ("on" if result["checkpointing"] else "off")
        check(row[3], result["step_s"], (row, "step"))
        check(row[4], result["tokens_per_s"], (row, "tokens/s"))
        assert result["batch"] == "8 x 256"
        assert math.isclose(
            float(row[4].replace(",", "")), 2 * 8 * 256 / result["step_s"], rel_tol=1e-3
        )
        check(row[5], result["peak_gib"], (row, "peak"))
    found = search(r"Losses and log-probabilities: (.+?) \(logits bf16\)", gpu)
    dtypes = {r["loss_dtype"] for r in training} | {r["log_prob_dtype"] for r in training}
    assert set(found[1].split(", ")) == dtypes
    assert {r["logits_dtype"] for r in training} == {"torch.bfloat16"}
    assert all(r["reference_device"] == r["policy_device"] for r in training)


def test_gpu_generation_and_callback_tables_recomputed(gpu):
    """Generation: tokens/s, peak memory and the share of the bandwidth limit (tokens/s over
    the limit). Callback: its share of the run (callback seconds over the run's) and the run
    time against the run without a callback (run seconds over those of the run without)."""
    steps, _ = gpu_steps()
    generation = [r for r in steps["generation"]["rows"] if "skipped" not in r]
    _, rows = table(gpu, "path")
    assert len(rows) == len(generation)
    for row, result in zip(rows, generation, strict=True):
        batch = f"auto ({result['start_batch']})" if result["batch"] == "auto" else result["batch"]
        assert row[1] == str(batch)
        speed = row[2].split(" ")[0]
        check(speed, result["tokens_per_s"], (row, "tokens/s"))
        assert ("path" in result) == ("includes start-up" not in row[2])
        check(row[4], result["peak_gib"], (row, "peak"))
        share, limit = search(r"(\S+%) of ([\d,]+)", row[5]).groups()
        check(share, result["tokens_per_s"] / result["tokens_per_s_limit_weights_kv"], row)
        check(limit, result["tokens_per_s_limit_weights_kv"], row)
    callback = steps["callback"]["rows"]
    (plain,) = [r for r in callback if r["max_queries_per_owner"] == "none"]
    _, rows = table(gpu, "max_queries_per_owner")
    measured = [r for r in callback if r is not plain]
    assert [row[0] for row in rows] == [str(r["max_queries_per_owner"]) for r in measured]
    for row, result in zip(rows, measured, strict=True):
        check(row[1], result["eval_s"], (row, "median evaluation"))
        check(row[2], result["callback_s"], (row, "evaluations"))
        check(row[3], result["callback_s"] / result["train_runtime_s"], (row, "share"))
        check(row[4], result["train_runtime_s"] / plain["train_runtime_s"] - 1, (row, "overhead"))
        found = search(r"costs (\S+) / \((\S+) x 10/30 \+ \S+\) = (\S+%) of the run", gpu)
        check(found[1], result["eval_s"], "warm evaluation")
        check(found[2], plain["train_runtime_s"], "run without the callback")
        warm = result["eval_s"] / (plain["train_runtime_s"] / 3 + result["eval_s"])
        check(found[3], warm, "warm share")


def test_gpu_speed_ups_are_ratios_of_medians_at_one_batch(gpu):
    steps, _ = gpu_steps()
    rows = steps["generation"]["rows"]
    plain = {r["batch"]: r for r in rows if r.get("path") == "transformers" and "tokens_per_s" in r}
    found = re.findall(r"- (\w+) at batch (\w+): (\S+)x plain `generate` \(ranges (\w+)\)", gpu)
    assert found
    for path, batch, ratio, ranges in found:
        (row,) = [r for r in rows if r.get("path") == path and r["batch"] == batch]
        check(ratio, row["tokens_per_s"] / plain[batch]["tokens_per_s"], (path, batch))
        low, high = row["tokens_per_s_range"]
        base_low, base_high = plain[batch]["tokens_per_s_range"]
        assert (ranges == "apart") == (low > base_high or high < base_low)
    skipped = [f"{r['path']} at batch {r['batch']}" for r in rows if "skipped" in r]
    assert f"not measured (the run's time budget ran out): {', '.join(skipped)}" in gpu


def test_gpu_score_sentence_and_the_protocols_arithmetic(gpu):
    """The command's seconds and stages as measured; the protocol's tokens are WaterDrum-Ax's
    8,000 queries x 10 x 200, divided by the fastest warm rate in the table."""
    steps, _ = gpu_steps()
    (row,) = steps["score"]["rows"]
    found = search(
        r"= ([\d,]+) tokens in (\S+) s \(loading (\S+) s, sampling (\S+) s .*?the rest (\S+) s",
        gpu,
    )
    assert int(found[1].replace(",", "")) == row["new_tokens"] == row["queries"] * 10 * 200
    stages = ("command_s", "load_model_s", "sample_s", "rest_s")
    for text, key in zip(found.groups()[1:], stages, strict=True):
        check(text, row[key], key)
    fastest = max(r["tokens_per_s"] for r in steps["generation"]["rows"] if "tokens_per_s" in r)
    found = search(r"that is 16,000,000 / ([\d,]+) = ([\d,]+) s, (\d+) minutes", gpu)
    check(found[1], fastest, "fastest rate")
    check(found[2], 16_000_000 / fastest, "seconds")
    assert int(found[3]) == round(16_000_000 / fastest / 60)


def test_gpu_verification_and_fsdp_sentence_recomputed(gpu):
    """The shuffle's share of verification is its seconds over verification's, for the row of
    the texts and vocabulary the sentence names; FSDP's parameter type and evaluations."""
    steps, _ = gpu_steps()
    found = search(
        r"Verification on the machine's CPU, ([\d,]+) texts at N = ([\d,]+): (\S+) s, (\S+%) of it",
        gpu,
    )
    (row,) = [
        r
        for r in steps["verification"]["rows"]
        if r.get("texts") == int(found[1].replace(",", ""))
        and r.get("vocab_size") == int(found[2].replace(",", ""))
    ]
    check(found[3], row["verify_s"], "verify seconds")
    check(found[4], row["shuffle_cpu_s"] / row["verify_s"], "shuffle share")
    fsdp = steps["fsdp"]["rows"][0]
    found = search(r"parameters as (\w+)\) the callback evaluated (\d+) times", gpu)
    assert (found[1], int(found[2])) == (fsdp["parameter_type"], fsdp["evaluations"])


# ---------------------------------------------------------------------------------------------
# README.md (and docs/concepts.md): the demo block


@pytest.fixture(scope="module")
def demo() -> str:
    return rendered("README.md", "demo-report")


@pytest.fixture(scope="module")
def report() -> dict:
    return load("demo/report.json")


def offsets(report: dict) -> dict[str, np.ndarray]:
    """Each unlearning method's offset from the retrained model in the (forget, retain) plane,
    run by run (runs x 2; the same seed's runs paired)."""
    runs = report["runs"]
    target = runs["retrained"]
    return {
        method: np.array(
            [
                (r["forget"] - t["forget"], r["retain"] - t["retain"])
                for r, t in zip(runs[method], target, strict=True)
            ]
        )
        for method in report["settings"]["methods"]
    }


def squared_distance(offsets: np.ndarray) -> float:
    """The squared distance of the mean points, unbiased: the mean over pairs of distinct runs
    of their offsets' dot product."""
    n = len(offsets)
    return float(np.mean([offsets[i] @ offsets[j] for i in range(n) for j in range(n) if i != j]))


def jackknife(statistic: Any, arrays: Sequence[np.ndarray], level: float) -> tuple[float, float]:
    """Student's t interval (n - 1 degrees of freedom) around ``statistic(*arrays)`` with the
    jackknife's standard error, run k left out of every array."""
    n = len(arrays[0])
    left = [statistic(*(np.delete(a, k, axis=0) for a in arrays)) for k in range(n)]
    se = math.sqrt((n - 1) / n * float(np.sum((np.array(left) - np.mean(left)) ** 2)))
    value, half = statistic(*arrays), float(stats.t.ppf((1 + level) / 2, n - 1)) * se
    return value - half, value + half


def distance(offsets: np.ndarray, level: float) -> tuple[float, float, float]:
    """The distance of the mean points with the roots of its squared interval (0 below 0)."""
    low, high = jackknife(squared_distance, [offsets], level)
    root = [math.sqrt(max(x, 0.0)) for x in (squared_distance(offsets), low, high)]
    return root[0], root[1], root[2]


def closest(report: dict, level: float) -> list[str]:
    """The method of least squared distance, then (by it) every method whose squared distance
    minus the closest one's has a jackknife interval that does not lie above 0."""
    per_run = offsets(report)
    order = sorted(per_run, key=lambda m: squared_distance(per_run[m]))
    best = order[0]

    def excess(method: np.ndarray, closest: np.ndarray) -> float:
        return squared_distance(method) - squared_distance(closest)

    tied = [m for m in order[1:] if jackknife(excess, [per_run[m], per_run[best]], level)[0] <= 0]
    return [best, *tied]


def test_demo_table_is_the_mean_and_t_interval_over_runs(demo, report):
    """Every model's forget and retain value and every method's distance to the retrained
    model: mean [Student's t interval] over the runs in report.json (a distance's interval cut
    at 0, where distances end), and the number of runs."""
    headers, rows = table(demo, "model")
    level = float(search(r"\((\d+)% CI over runs\)", headers[1])[1]) / 100
    assert level == report["settings"]["confidence"]
    runs = report["runs"]
    assert [row[0] for row in rows] == list(runs)
    per_run = offsets(report)
    for row in rows:
        name = row[0]
        for cell, key in ((row[1], "forget"), (row[2], "retain")):
            check_interval(cell, t_interval([r[key] for r in runs[name]], level), (name, key))
        if name in per_run:
            check_interval(row[3], distance(per_run[name], level), (name, "distance"))
        else:
            assert row[3] == "–"
        assert int(row[4]) == len(runs[name])


def test_demo_verdict_names_the_methods_the_runs_cannot_separate(demo, report):
    """The closest method and its ties (paired t-intervals of distance differences), their mean
    distances, and the first run's detection figures of the closest and the retrained model
    (z recomputed from the value and the null; detected at p <= 0.05)."""
    line = next(line for line in demo.splitlines() if line.startswith("**Closest to retraining"))
    level = report["settings"]["confidence"]
    expected = closest(report, level)
    per_run = offsets(report)
    if len(expected) > 1:
        found = search(
            r"a tie\*\* between (.+?) \(distance of the mean points over (?P<runs>\d+) runs .+?: "
            r"(.+?)\)\.",
            line,
        )
        assert re.findall(r"`(\w+)`", found[1]) == expected
        shown = dict(re.findall(r"`(\w+)` (\S+)", found[3]))
        assert list(shown) == expected
        for name in expected:
            check(shown[name], distance(per_run[name], level)[0], (name, "distance"))
    else:
        found = search(
            r"\*\*Closest to retraining:\*\* `(\w+)` \(distance (\S+), .+? over (?P<runs>\d+) runs",
            line,
        )
        assert found[1] == expected[0]
        check(found[2], distance(per_run[expected[0]], level)[0], "distance")
    assert int(found["runs"]) == len(report["seeds"])
    best = report["runs"][expected[0]][0]
    detected = best["forget_p_value"] <= DETECTION_LEVEL
    first = f"in the first of the {len(report['seeds'])} runs"
    assert (f"is **still detected** in its answers {first}" in line) == detected
    found = search(
        rf"{first} \(forget (\S+) against a null level of (\S+) ± (\S+), z = (\S+)\)", line
    )
    check(found[1], best["forget"], "closest forget")
    check(found[2], best["forget_null_mean"], "closest null mean")
    check(found[3], best["forget_null_std"], "closest null sd")
    z = (best["forget"] - best["forget_null_mean"]) / best["forget_null_std"]
    check(found[4], z, "closest z")
    retrained = report["runs"]["retrained"][0]
    found = search(r"where the retrained model's is (not )?\(forget (\S+), p = (\S+)\)", line)
    assert (found[1] is not None) == (retrained["forget_p_value"] > DETECTION_LEVEL)
    check(found[2], retrained["forget"], "retrained forget")
    check(found[3], retrained["forget_p_value"], "retrained p")


def test_demo_rerun_sentence_recomputed_from_both_kernel_sets(demo, report):
    """The largest move between the run under other kernels and this demo's first run (same
    seed), that move over the half-width of the first run's query interval, how many of the
    other run's values lie inside this demo's t-intervals over runs, and both kernel sets
    named as each run.json records them (and different)."""
    earlier = load("demo/other_kernels/report.json")
    kernels = load("demo/run.json")["kernels"]
    other = load("demo/other_kernels/run.json")["kernels"]
    assert kernels != other
    assert f"under `{other}` kernels where this run had `{kernels}`" in demo
    assert f"({load('demo/run.json')['processor']}, `{kernels}` kernels)" in demo
    level = report["settings"]["confidence"]
    moves, inside = [], 0
    for name, result in earlier["models"].items():
        for key in ("forget", "retain"):
            moves.append((abs(result[key] - report["runs"][name][0][key]), name, key))
            _, low, high = t_interval([r[key] for r in report["runs"][name]], level)
            inside += low <= result[key] <= high
    largest, name, key = max(moves)
    found = search(
        r"differently by up to (\S+) \((\w+)'s (\w+)\), (\S+) times the half-width", demo
    )
    check(found[1], largest, "largest move")
    assert (found[2], found[3]) == (name, key)
    first = report["runs"][name][0]
    half = (first[f"{key}_ci_high"] - first[f"{key}_ci_low"]) / 2
    check(found[4], largest / half, "move over half-width")
    if inside == len(moves):
        assert f"all {len(moves)} of those values lie inside" in demo
    else:
        assert f"{inside} of its {len(moves)} values lie inside" in demo
    assert f"over the {len(report['seeds'])} runs above" in demo


AUDITS = {
    "forget before": "before",
    "forget after relearning": "relearned",
    "forget 8-bit weights": "int8",
    "forget 4-bit weights": "int4",
}


def test_demo_audit_table_recomputed_from_audits_json(demo):
    """Each audit cell is the forget value [interval] after that audit; each excess is that
    value minus the retrained model's after the same audit."""
    audits = load("demo/audits.json")
    models, retrained = audits["models"], audits["retrained"]
    headers, rows = table(demo.split("![audits plot]")[1], "model")
    assert [row[0] for row in rows] == list(models)
    for row in rows:
        audit = None
        for header, cell in zip(headers[1:], row[1:], strict=True):
            if header == "excess":
                assert audit is not None and audit != "before"
                if row[0] == retrained:
                    assert cell == "(yardstick)"
                else:
                    excess = models[row[0]][audit]["forget"] - models[retrained][audit]["forget"]
                    check(cell, excess, (row[0], audit, "excess"))
                continue
            audit = AUDITS[header]
            value = models[row[0]][audit]
            expected = (value["forget"], value["forget_ci_low"], value["forget_ci_high"])
            check_interval(cell, expected, (row[0], audit))


def test_demo_run_time_is_run_json(demo):
    run = load("demo/run.json")
    found = search(
        r"Measured: (\S+) minutes on (\d+) CPU cores \(([^,]+), `([^`]+)` kernels\)", demo
    )
    check(found[1], run["seconds"] / 60, "minutes")
    assert (int(found[2]), found[3], found[4]) == (
        run["cpu_count"], run["processor"], run["kernels"]
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# The guides: the audits prose, generation speed, verify_dataset's scale


def test_audits_prose_recomputed_from_audits_json():
    """Relearning: every model's value before and after with its interval and excess, which
    intervals lie above the retrained model's; quantization: which values left their interval
    before, and the largest move."""
    text = rendered(update_docs.AUDITS, "demo-audits")
    audits = load("demo/audits.json")
    models, settings = audits["models"], audits["settings"]
    retrained = models[audits["retrained"]]
    found = search(r"relearning on (\d+) forget texts for (\d+) steps", text)
    assert (int(found[1]), int(found[2])) == (settings["relearn_texts"], settings["relearn_steps"])
    found = search(r"retrained model's forget value from (\S+) to (\S+ \[\S+, \S+\])", text)
    check(found[1], retrained["before"]["forget"], "retrained before")
    after = retrained["relearned"]
    check_interval(
        found[2], (after["forget"], after["forget_ci_low"], after["forget_ci_high"]), "retrained"
    )
    found = search(r"the original's to (\d+\.\d+)", text)
    check(found[1], models["original"]["relearned"]["forget"], "original")
    methods = [m for m in models if m not in ("original", audits["retrained"])]
    for method in methods:
        found = search(rf"{method} (\S+) -> (\S+ \[\S+, \S+\]) \(excess (\S+)\)", text)
        model = models[method]
        check(found[1], model["before"]["forget"], (method, "before"))
        relearned = model["relearned"]
        check_interval(
            found[2],
            (relearned["forget"], relearned["forget_ci_low"], relearned["forget_ci_high"]),
            method,
        )
        check(found[3], relearned["forget"] - after["forget"], (method, "excess"))
    above = [
        m for m in methods if models[m]["relearned"]["forget_ci_low"] > after["forget_ci_high"]
    ]
    if above:
        found = search(r"The intervals after relearning of (.+?) lie above", text)
        assert found[1].split(", ") == above
    else:
        assert "lie above" not in text
    outside, moves = [], []
    for name, model in models.items():
        before = model["before"]
        for audit, bits in (("int8", 8), ("int4", 4)):
            value = model[audit]["forget"]
            moves.append((abs(value - before["forget"]), name, bits, before["forget"], value))
            if not before["forget_ci_low"] <= value <= before["forget_ci_high"]:
                outside.append((name, bits, before, value))
    named = re.findall(r"(\w+) at (\d) bits \((\S+) -> (\S+), outside \[(\S+), (\S+)\]\)", text)
    assert [(n, int(b)) for n, b, *_ in named] == [(n, b) for n, b, *_ in outside]
    for (name, bits, before, value), shown in zip(outside, named, strict=True):
        expected = (before["forget"], value, before["forget_ci_low"], before["forget_ci_high"])
        for text_number, number in zip(shown[2:], expected, strict=True):
            check(text_number, number, (name, bits))
    if outside:
        found = search(r"moved (\d+) of (\d+) values outside", text)
        assert (int(found[1]), int(found[2])) == (len(outside), len(moves))
    _, name, bits, before, value = max(moves)
    found = search(r"largest move: (\w+) at (\d) bits, (\S+) -> (\S+?)\)", text)
    assert (found[1], int(found[2])) == (name, bits)
    check(found[3], before, "largest move before")
    check(found[4], value, "largest move after")
    found = search(r"(\d+) queries and (\d+) samples each", text)
    assert int(found[1]) == retrained["before"]["num_queries"]
    assert int(found[2]) == settings["num_samples"]


def median_of(runs: dict) -> float:
    return float(np.median(runs["runs"]))


RATIO = (
    r"(\S+)x(?:[^,;(.]*?)"
    r"(, not distinguishable \(the ranges overlap\)| \(the ranges lie apart\))?"
)
"""A ratio of two medians and, where the prose says it, whether the ranges of their runs
overlap."""


def check_ratio(found: Sequence[str | None], base: dict, new: dict, what: object) -> None:
    """A ratio phrase: the medians' ratio, and "lie apart" exactly when no run of one lies
    within the other's range (min-max of its runs)."""
    shown, verdict = found
    assert shown is not None
    check(shown, median_of(new) / median_of(base), what)
    if verdict is not None:
        apart = min(new["runs"]) > max(base["runs"]) or max(new["runs"]) < min(base["runs"])
        assert ("lie apart" in verdict) == apart, (what, verdict)


def timed_settings(model: dict, repeats: int) -> tuple[dict, dict, dict]:
    """A model's timed settings found by their labels: batch 16, the larger batch alone, and
    the new default (larger batch and shared prefill); each timed ``repeats`` times."""
    speeds = model["tokens_per_s"]
    (old,) = [v for k, v in speeds.items() if "batch 16" in k]
    (new,) = [v for k, v in speeds.items() if "shared prefill" in k]
    (unshared,) = [v for k, v in speeds.items() if v is not old and v is not new]
    for timed in (old, unshared, new):
        assert len(timed["runs"]) == repeats
    return old, unshared, new


def test_server_speed_ratios_recomputed_from_the_timed_runs():
    """Each model's medians and ranges per engine, and each vLLM engine's ratio to transformers'
    generate, from the timed runs; distinguishable exactly when the ranges lie apart."""
    text = rendered(update_docs.SERVERS, "server-speed")
    data = load("server_speed.json")
    found = search(r"\((\d+) queries x (\d+) samples; medians of (\d+) runs", text)
    assert (int(found[1]), int(found[2])) == (
        data["results"]["queries"],
        data["results"]["samples"],
    )
    repeats = int(found[3])
    models = data["results"]["models"]
    parts = re.split(r"on the (\S+) model \((\S+)M parameters\), ", text)[1:]
    assert parts[0::3] == list(models)
    for name, parameters, clause in zip(parts[0::3], parts[1::3], parts[2::3], strict=True):
        check(parameters, models[name]["parameters_millions"], name)
        speeds = models[name]["tokens_per_s"]
        base = speeds["transformers generate"]
        for setting, timed in speeds.items():
            assert len(timed["runs"]) == repeats
            found = search(
                re.escape("generate" if timed is base else setting)
                + r"'? (\S+) tokens/s \(range (\S+)-(\S+)\)(?:, (\S+)x(, not distinguishable|"
                r" \(the ranges lie apart))?",
                clause,
            )
            runs = timed["runs"]
            expected = (median_of(timed), min(runs), max(runs))
            for shown, number in zip(found.groups()[:3], expected, strict=True):
                check(shown.replace(",", ""), number, setting)
            if timed is base:
                continue
            check(found[4], median_of(timed) / median_of(base), setting)
            apart = min(runs) > max(base["runs"]) or max(runs) < min(base["runs"])
            assert (found[5] == " (the ranges lie apart") == apart, setting


def test_generation_speed_ratios_recomputed_from_the_timed_runs():
    """Each model's medians, ranges and ratios (new default over batch 16, and its two parts:
    the larger batch and the shared prefill), from the timed runs; each ratio said to be
    distinguishable exactly when the runs' ranges lie apart."""
    text = rendered(update_docs.WATERMARKING, "generation-speed")
    data = load("generation_speed.json")
    found = search(r"\((\d+) sequences; medians of (\d+) runs, (\d+) torch threads\)", text)
    assert int(found[1]) == data["results"]["sequences"]
    assert int(found[3]) == data["threads"]
    repeats = int(found[2])
    models = data["results"]["models"]
    if "x the tokens/s of batch 16 on the" in text:  # the wording without the ranges' verdicts
        shown = re.findall(
            r"(\S+)x the tokens/s of batch 16 on the (\S+) model \((\S+)M parameters; (\S+) "
            r"tokens/s, range (\S+)-(\S+), against (\S+), range (\S+)-(\S+); (\S+)x from the "
            r"batch size, (\S+)x from the shared prefill\)",
            text,
        )
        assert [values[1] for values in shown] == list(models)
        for values in shown:
            old, unshared, new = timed_settings(models[values[1]], repeats)
            expected = (
                median_of(new) / median_of(old), models[values[1]]["parameters_millions"],
                median_of(old), min(old["runs"]), max(old["runs"]),
                median_of(new), min(new["runs"]), max(new["runs"]),
                median_of(unshared) / median_of(old), median_of(new) / median_of(unshared),
            )  # fmt: skip
            for text_number, number in zip(values[:1] + values[2:], expected, strict=True):
                check(text_number, number, values[1])
        return
    parts = re.split(r"on the (\S+) model \((\S+)M parameters\), ", text)[1:]
    assert parts[0::3] == list(models)
    for name, parameters, clause in zip(parts[0::3], parts[1::3], parts[2::3], strict=True):
        old, unshared, new = timed_settings(models[name], repeats)
        check(parameters, models[name]["parameters_millions"], (name, "parameters"))
        found = search(
            r"^(\S+) tokens/s \(range (\S+)-(\S+)\) against batch 16's (\S+) "
            r"\(range (\S+)-(\S+)\): ",
            clause,
        )
        expected = (
            median_of(new), min(new["runs"]), max(new["runs"]),
            median_of(old), min(old["runs"]), max(old["runs"]),
        )  # fmt: skip
        for text_number, number in zip(found.groups(), expected, strict=True):
            check(text_number, number, name)
        check_ratio(search("^" + RATIO, clause[found.end() :]).groups(), old, new, (name, "new"))
        found = search(r"the batch size alone \(range (\S+)-(\S+)\) gave " + RATIO, clause)
        check(found[1], min(unshared["runs"]), (name, "batch min"))
        check(found[2], max(unshared["runs"]), (name, "batch max"))
        check_ratio(found.groups()[2:], old, unshared, (name, "batch size"))
        found = search(r"the shared prefill " + RATIO, clause)
        check_ratio(found.groups(), unshared, new, (name, "shared prefill"))


def scale_runs() -> dict[str, dict]:
    return load("verify_dataset_scale.json")["results"]["runs"]


def test_verify_dataset_scale_table_and_ratios_recomputed():
    """The scale table's medians and ranges over the timed runs, memory peaks, and the ratios
    of the prose (large over small, two processes over one, a larger batch)."""
    text = rendered(update_docs.KEYS, "verify-dataset-scale")
    runs = scale_runs()
    _, rows = table(text, "texts")
    assert len(rows) == len(runs)
    for row, run in zip(rows, runs.values(), strict=True):
        if run["cached"]:
            assert row[0] == f"{run['texts']:,}, cached"
            check(row[3], median_of(run["seconds"]), "cached seconds")
            continue
        assert [int(c.replace(",", "")) for c in row[:3]] == [
            run["texts"], run["processes"], run["batch_size"],
        ]  # fmt: skip
        check(row[3], median_of(run["seconds"]), (row[0], "seconds"))
        rate = search(r"(\S+) \((\S+)-(\S+)\)", row[4])
        rates = run["texts_per_s"]["runs"]
        for shown, value in zip(
            rate.groups(), (np.median(rates), min(rates), max(rates)), strict=True
        ):
            check(shown, value, (row[0], "texts/s"))
        for cell, peak, worker in (
            (row[5], "peak_rss_mib", "peak_worker_rss_mib"),
            (row[6], "peak_anonymous_mib", "peak_worker_anonymous_mib"),
        ):
            parts = re.findall(r"(\d+) MiB", cell)
            check(parts[0], run[peak], (row[0], peak))
            if run["processes"] > 1:
                check(parts[1], run[worker], (row[0], worker))
            else:
                assert len(parts) == 1
    small, large, parallel = runs["small"], runs["large"], runs["parallel"]
    found = search(r"for ([\d,]+) texts is (\S+)x that for ([\d,]+) \(peak RSS (\S+)x", text)
    assert (int(found[1].replace(",", "")), int(found[3].replace(",", ""))) == (
        large["texts"], small["texts"],
    )  # fmt: skip
    check(found[2], large["peak_anonymous_mib"] / small["peak_anonymous_mib"], "anonymous ratio")
    check(found[4], large["peak_rss_mib"] / small["peak_rss_mib"], "RSS ratio")
    found = search(r"at most the tokenisation: (?:two processes scored )?" + RATIO, text)
    assert parallel["texts"] == large["texts"] and parallel["processes"] == 2
    check_ratio(found.groups(), large["texts_per_s"], parallel["texts_per_s"], "two processes")
    batches = re.findall(
        r"`batch_size=(\d+)` scored (\S+) texts/s in one process, against (\S+) at "
        r"(\d+(?:,\d{3})*)(?:\.|, " + RATIO + ")",
        text,
    )
    assert len(batches) == sum(r["batch_size"] != large["batch_size"] for r in runs.values())
    for size, rate, against, batch, *ratio in batches:
        (run,) = [
            r for r in runs.values()
            if r["batch_size"] == int(size) and r["processes"] == 1 and r["texts"] == large["texts"]
        ]  # fmt: skip
        check(rate, median_of(run["texts_per_s"]), f"batch {size}")
        check(against, median_of(large["texts_per_s"]), "default batch")
        assert int(batch.replace(",", "")) == large["batch_size"]
        if ratio[0]:  # the ratio, where the prose gives it
            check_ratio(ratio, large["texts_per_s"], run["texts_per_s"], f"batch {size}")


# ---------------------------------------------------------------------------------------------
# The metric guide's block


def test_card_interval_cost_recomputed_from_the_timed_runs():
    """What intervals cost: the difference and ratio of the medians of the timed calls with
    and without them; the default resamples is the library's; the repeats are the runs."""
    from waterdrum_hf.config import IntervalConfig

    text = rendered(update_docs.METRIC, "interval-cost")
    data = load("interval_cost.json")
    results = data["results"]
    found = search(
        r"\((\d+) by default; `([^`]+)`: (\S+) s more for (\d+) queries of (\d+) owners, x(\S+) "
        r"the same call without intervals, medians of (\d+) runs on (\d+) CPU cores",
        text,
    )
    assert int(found[1]) == IntervalConfig().resamples == results["resamples"]
    assert found[2] == data["command"]
    with_intervals, plain = (
        np.median(results["intervals"]["runs"]),
        np.median(results["plain"]["runs"]),
    )
    check(found[3], with_intervals - plain, "extra seconds")
    assert (int(found[4]), int(found[5])) == (results["queries"], results["owners"])
    check(found[6], with_intervals / plain, "ratio")
    assert int(found[7]) == len(results["plain"]["runs"]) == len(results["intervals"]["runs"])
    assert int(found[8]) == data["machine"]["cpu_count"]


# ---------------------------------------------------------------------------------------------
# benchmarks/results/README.md


def test_results_readme_demo_sentence_recomputed(report):
    """The first run's retrained and original values (z from value and null), the smallest
    p-value the null keys allow (1 / (keys + 1)), the AUROC, the methods and the tie."""
    text = rendered(update_docs.RESULTS_README, "demo")
    retrained, original = report["runs"]["retrained"][0], report["runs"]["original"][0]
    found = search(
        r"retrained model's forget value is (\S+) against a null level of (\S+) ± (\S+) "
        r"\(z = (\S+), p = (\S+)\); the original's is (\S+) \(p = (\S+), the smallest p-value "
        r"(\d+) null keys can give\)",
        text,
    )
    z = (retrained["forget"] - retrained["forget_null_mean"]) / retrained["forget_null_std"]
    expected = (
        retrained["forget"], retrained["forget_null_mean"], retrained["forget_null_std"], z,
        retrained["forget_p_value"], original["forget"], original["forget_p_value"],
    )  # fmt: skip
    for shown, value in zip(found.groups()[:7], expected, strict=True):
        check(shown, value, shown)
    keys = int(found[8])
    assert keys == report["settings"]["null_keys"]
    assert original["forget_p_value"] == pytest.approx(1 / (keys + 1))
    found = search(r"Per-query AUROC on the retrained model: (\d+\.\d+)", text)
    check(found[1], retrained["separability_auroc"], "AUROC")
    found = search(r"Of the (\d+) unlearning methods, (.+?) (?:tie for|came) closest", text)
    assert int(found[1]) == len(report["settings"]["methods"])
    expected_names = closest(report, report["settings"]["confidence"])
    assert re.split(r", | and ", found[2]) == expected_names
    assert f"over {len(report['seeds'])} runs" in text


def test_results_readme_mutation_sentence_is_the_sum_of_the_module_rows():
    """The counts are the sums of mutation.md's per-module rows and the score is
    (killed + timeout) / (mutants - message-only - equivalent - not checked)."""
    text = rendered(update_docs.RESULTS_README, "mutation")
    headers, rows = table((GATE / "mutation.md").read_text(), "module")
    modules = [dict(zip(headers, row, strict=True)) for row in rows if row[0] != "**all**"]
    total = {h: sum(int(m[h]) for m in modules) for h in headers[1:-1]}
    found = search(
        r"mutmut made ([\d,]+) mutants .+?: ([\d,]+) killed, (\d+) timed out, (\d+) message-only, "
        r"(\d+) judged equivalent .+?, (\d+) not checked .+?, (\d+) survived, ([\d,]+) not run "
        r".+?; score (\S+) %",
        text,
    )
    counts = [int(g.replace(",", "")) for g in found.groups()[:8]]
    names = [
        "mutants",
        "killed",
        "timeout",
        "message-only",
        "equivalent",
        "not checked",
        "survived",
        "not run",
    ]
    assert counts == [total[n] for n in names]
    checked = total["mutants"] - total["message-only"] - total["equivalent"] - total["not checked"]
    check(found[9], 100 * (total["killed"] + total["timeout"]) / checked, "score")
    assert f"mutants of the {len(modules)} modules" in text
    assert "[summary.md](../../mutation/results/summary.md)" in text
    minutes = search(r"\*\*(\d+) minutes\*\* in all", (GATE / "mutation.md").read_text())[1]
    assert f"{minutes} minutes" in text


def test_results_readme_runs_table_gives_each_folders_command_and_time():
    """Each row's time: the demo's from run.json, each study's and simulation's from its own
    seconds (summed over a simulation's parts), a reproduction's from its results.md."""
    text = rendered(update_docs.RESULTS_README, "runs")
    _, rows = table(text, "folder")
    by_folder = {re.match(r"\[([^\]]+)\]", row[0])[1]: row for row in rows}
    check(by_folder["demo/"][2].removesuffix(" min"), load("demo/run.json")["seconds"] / 60, "demo")
    for name in ("reproduction", "reproduction_qa", "schemes", "substitution"):
        text = (RESULTS / name / "results.md").read_text()
        found = search(r"Time: ([\d.]+) minutes", text)
        empty = re.search(r"from an empty cache: about (\d+) minutes", text)  # a resumed run
        suffix = f" (about {empty[1]} from an empty cache)" if empty else ""
        assert by_folder[f"{name}/"][2] == f"{found[1]} min{suffix}"
    for name in ("robustness", "dilution", "capacity"):
        results = load(f"{name}/results.json")
        row = by_folder[f"{name}/"]
        assert row[1] == f"`{results['command']}`"
        found = search(r"^([\d.]+) min(?: \(from nothing: about ([\d.]+) h\))?$", row[2])
        check(found[1], results["seconds"] / 60, name)
        if "full_estimate_seconds" in results:
            check(found[2], results["full_estimate_seconds"]["total"] / 3600, (name, "hours"))
    coverage = load("seed_interval_coverage/results.json")
    row = by_folder["seed_interval_coverage/results.md"]
    assert row[1] == f"`{coverage['command']}`"
    check(row[2].removesuffix(" min"), coverage["seconds"] / 60, "coverage")
    detection = load("owner_detection_error.json")
    row = by_folder["owner_detection_error.md"]
    assert row[1] == f"`{detection['command']}`"
    seconds = sum(part["seconds"] for part in detection["nulls"].values())
    check(row[2].removesuffix(" min"), seconds / 60, "owner detection")
    fidelity = load("duplicate_fidelity/results.json")
    row = by_folder["duplicate_fidelity/results.md"]
    assert row[1] == f"`{fidelity['command']}`"
    check(row[2].removesuffix(" min"), fidelity["seconds"] / 60, "duplicate fidelity")


# ---------------------------------------------------------------------------------------------
# The watermarking guide: "Choosing a scheme"

PAPER_TABLE_5 = {  # the paper's Table 5, typed from the paper (not imported from the renderer)
    "Waterfall": ("0.965", "0.963", "0.015 s", "No"),
    "Adapted KGW": ("0.871", "0.996", "0.336 s", "Yes"),
    "Adapted Synth-ID": ("0.549", "-16.951", "0.386 s", "Yes"),
    "Adapted EXP-edit": ("0.789", "-17.079", "165.5 s", "No"),
}
SCHEME_KEYS = {
    "Waterfall": "waterfall",
    "Adapted KGW": "kgw",
    "Adapted Synth-ID": "synthid",
    "Adapted EXP-edit": "exp_edit",
}


def test_schemes_block_matches_the_comparison_row_by_row():
    """Each scheme's row carries its own run's numbers and the paper's row for that scheme:
    a renderer that swaps schemes, reads the raw R² where the null-corrected one belongs, shows
    the forget value of the original model instead of the retrained one, or pairs a scheme
    with another's paper numbers fails here; every scheme of the run has a row."""
    text = rendered(update_docs.WATERMARKING, "schemes")
    results = load("schemes/results.json")
    headers, rows = table(text, "scheme")
    assert [row[0] for row in rows] == [
        label for label, key in SCHEME_KEYS.items() if key in results["schemes"]
    ]
    seeds = len(results["config"]["seeds"])
    assert f"{seeds} seeds" in text
    check(re.search(r"\(([\d.]+) minutes", text).group(1), results["seconds"]["total"] / 60, "time")
    for row in rows:
        run = results["schemes"][SCHEME_KEYS[row[0]]]["no_duplicate"]
        cells = dict(zip(headers, row, strict=True))
        paper = PAPER_TABLE_5[row[0]]
        for header, what, value, paper_value in (
            ("D1 AUROC (ours / paper)", "auroc", "waterdrum", paper[0]),
            ("D2 R² (ours / paper)", "r2", "waterdrum", paper[1]),
        ):
            ours, shown_paper = cells[header].split(" / ")
            top = (0.0 if what == "auroc" else -math.inf), 1.0
            expected = seeds_interval(run[what][value], run[what + "_std"][value], seeds, top)
            check_interval(ours, expected, (row[0], header))
            assert shown_paper == paper_value, (row[0], header)
        r2 = run["r2"]["waterdrum_null_corrected"], run["r2_std"]["waterdrum_null_corrected"]
        check_interval(
            cells["D2 R², null-corrected (ours)"],
            seeds_interval(*r2, seeds, (-math.inf, 1.0)),
            (row[0], "null-corrected"),
        )
        share = run["curve"]["share"]
        at_zero = share.index(0.0)  # k = 0: the model retrained without the forget set
        curve = run["curve"]["waterdrum"]
        check_interval(
            cells["retrained model's forget value (ours)"],
            seeds_interval(curve["mean"][at_zero], curve["std"][at_zero], seeds, (-1.0, 1.0)),
            (row[0], "forget at k = 0"),
        )
        ours, shown_paper = cells["verification per text (ours, CPU / paper)"].split(" / ")
        check(ours.removesuffix(" ms"), 1000 * run["verify_seconds_per_text"], (row[0], "time"))
        assert shown_paper == paper[2]
        assert cells["paper's verification needs a GPU"] == paper[3]


# ---------------------------------------------------------------------------------------------
# The renderers on the cases the committed results do not reach (each expected text derived
# here by hand)


def test_trust_correlation_counts_the_finite_cells_and_says_when_r_is_undefined():
    def cells(*pairs: tuple[float, float]) -> dict:
        return {"summary": [{"carry_over": {"mean": x}, "r2": {"mean": y}} for x, y in pairs]}

    assert trust_block.correlation(cells((0.1, 0.5), (0.2, 0.7))) == "an undefined r, n = 2"
    # Without spread (a constant column) r is undefined too, and no warning is raised.
    flat = cells((0.3, 0.5), (0.3, 0.7), (0.3, 0.6))
    assert trust_block.correlation(flat) == "an undefined r, n = 3"
    pairs = ((0.1, 0.5), (0.2, 0.7), (math.nan, 0.9), (0.4, 0.6))
    finite = [(0.1, 0.5), (0.2, 0.7), (0.4, 0.6)]
    pearson = stats.pearsonr(*zip(*finite, strict=True))
    assert trust_block.correlation(cells(*pairs)) == (
        f"r = {pearson.statistic:+.2f}, n = 3, p = {pearson.pvalue:.2g}"
    )


def test_trust_minutes_widest_interval_and_the_capacity_studys_hours():
    assert trust_block.minutes({"seconds": 2760}) == "46 minutes"
    summary = [
        {"r2": {"mean": 0.5}},  # no interval (one seed): left out
        {"r2": {"mean": 0.6, "low": 0.4, "high": 0.8}},
        {"r2": {"mean": 0.7, "low": 0.65, "high": 0.75}},
    ]
    assert trust_block.widest_d2({"summary": summary}) == "[0.40, 0.80]"
    assert trust_block.scratch_hours({"full_estimate_seconds": {"total": 9000.0}}) == 2.5


def test_trust_lowest_auroc_is_an_attacks_and_rows_follow_the_first_schemes_order():
    """The unedited text is no attack: its AUROC is never the lowest under attack, even when
    every attack reads higher; the table's rows come in the first scheme's order."""
    robustness = json.loads((RESULTS / "robustness" / "results.json").read_text())
    schemes = robustness["plan"]["schemes"]
    summary = robustness["summary"]
    for entry in summary:
        entry["auroc"]["mean"] = 0.5 if entry["attack"] == "none" else 0.999
    lowest = next(
        e for e in summary if e["scheme"] == schemes[0] and e["attack"] != "none"
    )  # the first attacked cell
    lowest["auroc"]["mean"] = 0.995
    first = [e for e in summary if e["scheme"] == schemes[0]]
    robustness["summary"] = first + [e for e in summary if e["scheme"] != schemes[0]][::-1]
    text = trust_block.render(
        robustness,
        trust_block.load("dilution"),
        trust_block.table_rows(RESULTS / "dilution" / "results.md"),
        trust_block.load("capacity"),
        trust_block.table_rows(RESULTS / "capacity" / "results.md"),
    )
    name = trust_block.SCHEME_NAMES[schemes[0]]
    assert (
        f"its lowest under any attack up to strength 0.5 is 0.995 ({lowest['attack']} at "
        f"{lowest['strength']:g}, {name})" in text
    )
    _, rows = table(text, "attack")
    assert [(row[0], float(row[1])) for row in rows] == [
        (e["attack"], e["strength"]) for e in first if e["strength"] in (0.3, 0.5)
    ]


def demo_report(**values: float) -> dict:
    """A report.json of two models with one run each and their intervals over runs."""
    runs = {"a": [{"forget": 0.2, "retain": 0.6}], "b": [{"forget": 0.25, "retain": 0.65}]}
    comparison, models = {}, {}
    for name in runs:
        models[name] = {}
        for key in ("forget", "retain"):
            low, high = values[f"{name}_{key}_low"], values[f"{name}_{key}_high"]
            comparison |= {f"{name}/{key}_ci_low": low, f"{name}/{key}_ci_high": high}
            models[name] |= {f"{key}_ci_low": low - 0.05, f"{key}_ci_high": high + 0.05}
    return {"comparison": comparison, "runs": runs, "models": models, "seeds": [0, 1, 2]}


def test_demo_rerun_sentence_names_the_values_outside_their_intervals():
    """A value at an interval's end lies inside it; two outside are named, and counted out of
    four. The largest move: b's forget, 0.9 - 0.25 = 0.65, over the first run's half-width
    (0.35 + 0.05 - (0.15 - 0.05)) / 2 = 0.15: 4.3 times."""
    report = demo_report(
        a_forget_low=0.1, a_forget_high=0.3, a_retain_low=0.5, a_retain_high=0.7,
        b_forget_low=0.15, b_forget_high=0.35, b_retain_low=0.55, b_retain_high=0.75,
    )  # fmt: skip
    earlier = {"models": {"a": {"forget": 0.1, "retain": 0.7}, "b": {"forget": 0.9, "retain": 0.8}}}
    sentence = demo_block.machine_sentence(report, earlier, "avx512", "avx2-mklavx2")
    assert "under `avx2-mklavx2` kernels where this run had `avx512`" in sentence
    assert "read the first run's values differently by up to 0.650 (b's forget), 4.3 times" in (
        sentence
    )
    assert sentence.endswith(
        "; 2 of its 4 values lie inside the intervals over the 3 runs above (b's forget, b's "
        "retain do not)."
    )


DEMO_LINKS = "benchmarks/results/demo"
NOT_RECORDED = (
    f"Run time: not recorded (`{DEMO_LINKS}/run.json` is written by a run). Full report: "
    f"[{DEMO_LINKS}/report.md]({DEMO_LINKS}/report.md)."
)
AUDITS_PROSE = (
    "Does the unlearning hold? In the first training run (the audits run on it alone), each "
    "model's forget value before and after relearning on a slice of the forget set and after "
    "8- and 4-bit quantization; excess: how far above the retrained model's value after the "
    "same audit (settings in the full report)."
)


def test_demo_block_reads_the_first_results_and_audits_sections_only():
    """Settings tables before the results are not the results; a heading repeated later (an
    appendix quoting it) is not read; the audits' forget table stops at the first retain
    table; without run.json the time is said to be unrecorded."""
    report = "\n".join([
        "# Demo", "## Settings", "| setting | value |", "## Results", "| model | forget |",
        "| a | 1 |", "**Closest to retraining:** `a`.", "## Audits: does the unlearning hold?",
        "| model | forget before |", "| a | 0.1 |", "Retain values before and after:",
        "| model | retain before |", "Retain values before, again:", "| model | retain again |",
        "## Plots", "| plot | x |", "## Results", "| late | 2 |",
        "## Audits: does the unlearning hold?", "| late audit | 3 |", "",
    ])  # fmt: skip
    assert demo_block.render(report, None) == "\n".join([
        f"![benchmark plot]({DEMO_LINKS}/benchmark.png)", "", "| model | forget |", "| a | 1 |",
        "", "**Closest to retraining:** `a`.", "", AUDITS_PROSE, "",
        f"![audits plot]({DEMO_LINKS}/audits.png)", "", "| model | forget before |",
        "| a | 0.1 |", "", NOT_RECORDED,
    ])  # fmt: skip
    # an audits section without a retain table ends at the next heading
    report = "\n".join([
        "## Results", "| model | forget |", "## Audits: does the unlearning hold?",
        "| model | forget before |", "## Plots", "| plot | x |", "## Methods", "",
    ])  # fmt: skip
    run = {"seconds": 90, "cpu_count": 2, "processor": "x86_64", "kernels": "avx2"}
    assert demo_block.render(report, run, "Moved.") == "\n".join([
        f"![benchmark plot]({DEMO_LINKS}/benchmark.png)", "", "| model | forget |", "", "", "",
        "Moved.", "", AUDITS_PROSE, "", f"![audits plot]({DEMO_LINKS}/audits.png)", "",
        "| model | forget before |", "",
        "Measured: 1.5 minutes on 2 CPU cores (x86_64, `avx2` kernels). Full report: "
        f"[{DEMO_LINKS}/report.md]({DEMO_LINKS}/report.md).",
    ])  # fmt: skip
    # a report without sections: its tables are the results; no verdict line, no audits
    assert demo_block.render("| model | forget |\n| a | 1 |\n", None) == "\n".join([
        f"![benchmark plot]({DEMO_LINKS}/benchmark.png)", "", "| model | forget |", "| a | 1 |",
        "", "", "", NOT_RECORDED,
    ])  # fmt: skip


def test_demo_block_without_run_json_says_the_time_is_not_recorded(monkeypatch, tmp_path):
    monkeypatch.setattr(demo_block, "RUN", tmp_path / "run.json")
    assert demo_block.render_demo().endswith("\n\n" + NOT_RECORDED)


def test_blocks_refuse_a_second_marker_and_keep_what_is_inside_but_newlines():
    with pytest.raises(ValueError, match="expected one <!-- x:start --> ... <!-- x:end -->"):
        doc_blocks.read_block("<!-- x:start -->\na\n<!-- x:end -->\n<!-- x:end -->", "x")
    text = "<!-- x:start -->\n\n  Xa\n b X\n\n<!-- x:end -->"
    assert doc_blocks.read_block(text, "x") == "  Xa\n b X"


def test_relocate_rewrites_relative_links_and_keeps_urls_absolute_paths_and_anchors():
    text = (
        "[a](docs/x.md) [b](https://example.com/p) [c](/abs/p) [d](mailto:me@example.org) "
        "[e](../up.md#part) [f](#local) ![g](benchmarks/results/demo/p.png)"
    )
    assert doc_blocks.relocate(text, "", "docs/guides/g.md") == (
        "[a](../x.md) [b](https://example.com/p) [c](/abs/p) [d](mailto:me@example.org) "
        "[e](../../../up.md#part) [f](#local) ![g](../../benchmarks/results/demo/p.png)"
    )
    assert doc_blocks.relocate("[r](demo/report.md)", "benchmarks/results", "README.md") == (
        "[r](benchmarks/results/demo/report.md)"
    )


def test_update_rewrites_the_stale_blocks_or_only_names_them(monkeypatch, tmp_path):
    monkeypatch.setattr(doc_blocks, "ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "page.md"
    original = (
        "# Page\n<!-- fresh:start -->\n[r](../results.md)\n<!-- fresh:end -->\n"
        "<!-- stale:start -->\nold\n<!-- stale:end -->\nend\n"
    )
    page.write_text(original)
    blocks = [
        doc_blocks.Block("docs/page.md", "fresh", (), lambda: "[r](results.md)"),
        doc_blocks.Block("docs/page.md", "stale", (), lambda: "new"),
    ]
    assert doc_blocks.update(blocks, check=True) == ["docs/page.md:stale"]
    assert page.read_text() == original
    assert doc_blocks.update(blocks) == ["docs/page.md:stale"]
    assert page.read_text() == original.replace("\nold\n", "\nnew\n")
    assert doc_blocks.update(blocks) == []


WARM_ROW = {
    "path": "waterdrum", "batch": "auto", "start_batch": 64, "tokens_per_s": 12345.6,
    "tokens_per_s_range": [12000.4, 12800.6], "repeats": 5, "first_seconds": 3.26,
    "peak_gib": 20.04, "tokens_per_s_limit_weights_kv": 50000.0,
}  # fmt: skip
WARM_LINE = (
    "| waterdrum | auto (64) | 12,346 (12,000-12,801, 5 warm calls) | 3.3 | 20.0 | 25% of 50,000 |"
)


def test_gpu_generation_rows_warm_older_and_skipped():
    """A warm row: median (range, warm calls) and its first call; a row of the older suite:
    its speed includes start-up; a skipped row: no row (and the rows after it still shown)."""
    older = {"batch": "32", "tokens_per_s": 500.0, "peak_gib": 10.0,
             "tokens_per_s_limit_weights_kv": 2000.0}  # fmt: skip
    lines = gpu_block.generation_rows([{"batch": "8", "skipped": "out of memory"}, WARM_ROW, older])
    assert lines[2:] == [
        WARM_LINE,
        "| waterdrum | 32 | 500 (includes start-up) | – | 10.0 | 25% of 2,000 |",
    ]


def test_gpu_block_of_a_warm_run_and_two_dtypes(monkeypatch):
    training = {"method": "kl", "reference": "adapter_disabled", "checkpointing": True,
                "step_s": 0.5, "tokens_per_s": 8000.0, "peak_gib": 15.0,
                "loss_dtype": "torch.float32", "log_prob_dtype": "torch.bfloat16"}  # fmt: skip
    steps = {
        "training": {"rows": [training]},
        "generation": {"rows": [WARM_ROW]},
        "callback": {
            "rows": [
                {"max_queries_per_owner": "none", "train_runtime_s": 30.0},
                {
                    "max_queries_per_owner": 4,
                    "callback_share": 0.1,
                    "overhead_vs_no_callback": 0.12,
                    "evaluations": 4,
                    "eval_s": 1.0,
                    "callback_s": 3.3,
                },
            ]
        },  # fmt: skip
        "verification": {
            "rows": [
                {
                    "texts": 1000,
                    "vocab_size": 32000,
                    "verify_s": 1.234,
                    "shuffle_share_of_verify": 0.5,
                }
            ]
        },  # fmt: skip
        "fsdp": {"rows": [{"parameter_type": "DTensor", "evaluations": 3}]},
    }
    monkeypatch.setattr(gpu_block, "load", lambda: steps)
    monkeypatch.setattr(gpu_block, "versions", lambda: "torch 9")
    text = gpu_block.render_gpu()
    assert "Losses and log-probabilities: torch.bfloat16, torch.float32 (logits bf16);" in text
    assert (
        "Generation at the paper's protocol (50-token prompts, 10 samples, 200 new tokens), "
        "warm: one untimed call at each batch, then the median (range) of timed calls:\n\n"
    ) in text
    assert WARM_LINE in text
    assert "evaluating at step 0 and every 10 steps (4 owners):\n" in text


def test_gpu_versions_name_each_steps_latest_run_once_per_device_and_versions(
    monkeypatch, tmp_path
):
    """A step measured again is said with its latest run; steps of one device and versions are
    said together; a source tree's version says so; the floors are read from their pins (a
    comment's words are no pins)."""
    recorded = {"torch": "2.11.0", "transformers": "5.17.0", "waterdrum-hf": "0.9.0"}
    runs = {
        "training_generation": ("H100", recorded, ["training", "generation"]),
        "verification_callback": ("H100", recorded | {"waterdrum-hf": None}, ["verification"]),
        "fsdp": ("H100", recorded, ["fsdp"]),
        "h200": ("H200", recorded | {"waterdrum-hf": "0+unknown"}, ["generation"]),
        "h200_score": ("H200", recorded | {"waterdrum-hf": "0+unknown"}, ["score"]),
    }
    assert list(runs) == list(gpu_block.RUNS)
    for run, (device, versions, steps) in runs.items():
        (tmp_path / run).mkdir()
        results = {
            "environment": {"device": device, "versions": versions},
            "steps": {step: {"rows": []} for step in steps},
        }
        (tmp_path / run / "results.json").write_text(json.dumps(results))
    floors = tmp_path / "floors.txt"
    floors.write_text("# pins\nnumpy==1.25.0\ntorch==2.13.0\ntransformers==5.23.0\n# torch first\n")
    monkeypatch.setattr(gpu_block, "RESULTS", tmp_path)
    monkeypatch.setattr(gpu_block, "FLOORS", floors)
    assert gpu_block.versions() == (
        "training, fsdp on H100, torch 2.11.0, transformers 5.17.0, waterdrum-hf 0.9.0; "
        "generation, score on H200, torch 2.11.0, transformers 5.17.0, waterdrum-hf a source "
        "tree; verification on H100, torch 2.11.0, transformers 5.17.0, waterdrum-hf not "
        "recorded (declared floors: torch 2.13.0 and transformers 5.23.0)"
    )


def test_schemes_block_shows_milliseconds_per_text():
    results = load("schemes/results.json")
    name = next(iter(results["schemes"]))
    results["schemes"] = {name: results["schemes"][name]}
    results["schemes"][name]["no_duplicate"]["verify_seconds_per_text"] = 0.05
    text = schemes_block.render(results, "cmd", "machine")
    assert "| 50.00 ms / " in text


def test_renderers_refuse_missing_results_with_the_command_to_run(monkeypatch, tmp_path):
    monkeypatch.setattr(trust_block, "RESULTS", tmp_path)
    with pytest.raises(SystemExit, match=r"capacity/results.json does not exist: run python "):
        trust_block.load("capacity")
    with pytest.raises(SystemExit, match=r"results.md does not exist: run python benchmarks/d"):
        trust_block.table_rows(tmp_path / "dilution" / "results.md")
    monkeypatch.setattr(schemes_block, "SCHEMES", tmp_path)
    with pytest.raises(SystemExit, match=re.escape(f"{tmp_path}/results.json does not exist")):
        schemes_block.render_schemes()
    (tmp_path / "results.json").write_text("{}")
    (tmp_path / "results.md").write_text("# Schemes\n")
    with pytest.raises(SystemExit, match=re.escape(f"{tmp_path}/results.md names no command")):
        schemes_block.render_schemes()


def test_demo_time_sentence_is_both_run_jsons(demo, report):
    """The other kernels' one run and this demo's runs, in minutes, as their run.json say."""
    found = search(
        r"that one run took (\S+) minutes on this machine, where this demo's (\d+) runs took "
        r"(\S+) \(torch on one thread in both",
        demo,
    )
    check(found[1], load("demo/other_kernels/run.json")["seconds"] / 60, "other kernels")
    assert int(found[2]) == len(report["seeds"])
    check(found[3], load("demo/run.json")["seconds"] / 60, "this demo")
