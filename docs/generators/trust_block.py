"""The README's "How far to trust the numbers" block: what the robustness, dilution and
capacity studies found, rendered from their committed results (``python
benchmarks/robustness.py``, ``python benchmarks/dilution.py``, ``python
benchmarks/capacity.py``); ``docs/generators/update_docs.py`` writes it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from doc_blocks import RESULTS

SHOWN_STRENGTHS = (0.3, 0.5)
SCHEME_NAMES = {"waterfall": "Waterfall", "kgw": "KGW"}


def render_trust() -> str:
    """The block from the committed results files."""
    return render(
        load("robustness"),
        load("dilution"),
        table_rows(RESULTS / "dilution" / "results.md"),
        load("capacity"),
        table_rows(RESULTS / "capacity" / "results.md"),
    )


def load(name: str) -> dict[str, Any]:
    path = RESULTS / name / "results.json"
    if not path.is_file():
        raise SystemExit(f"{path} does not exist: run python benchmarks/{name}.py first")
    return json.loads(path.read_text())


def table_rows(path: Path) -> list[str]:
    """The Markdown table of a study's committed ``results.md``."""
    if not path.is_file():
        raise SystemExit(f"{path} does not exist: run python benchmarks/{path.parent.name}.py")
    return [line for line in path.read_text().splitlines() if line.startswith("|")]


def render(
    robustness: dict[str, Any],
    dilution: dict[str, Any],
    dilution_table: list[str],
    capacity: dict[str, Any],
    capacity_table: list[str],
) -> str:
    """The findings table of the attacks, their extremes in words, the dilution and capacity
    studies' tables as their scripts wrote them, and the commands with their measured times."""
    summary = robustness["summary"]
    seeds = len(robustness["plan"]["seeds"])
    schemes = robustness["plan"]["schemes"]
    unedited = {e["scheme"]: e for e in summary if e["attack"] == "none"}
    attacked = [e for e in summary if e["attack"] != "none"]
    worst_auroc = min(attacked, key=lambda e: e["auroc"]["mean"])
    false_alarm = max(e["false_forget"]["high"] for e in summary)
    heading = " | ".join(
        f"{SCHEME_NAMES[s]}: retain value kept | {SCHEME_NAMES[s]}: D1 | "
        f"{SCHEME_NAMES[s]}: owners detected"
        for s in schemes
    )
    lines = [
        f"The demo's setting, {seeds} seeds (mean over seeds; "
        "[benchmarks/results/robustness/results.md](benchmarks/results/robustness/results.md) "
        "has every strength, value and interval). *Retain value kept*: the original model's "
        "retain value after the edit as a share of the unedited one. *Owners detected*: the "
        f"share of owners whose data the original model was trained on that still read "
        f"p < {robustness['alpha']}.",
        "",
        f"| attack | strength | {heading} |",
        "| --- | --- |" + " --- | --- | --- |" * len(schemes),
    ]
    for entry in attacked:
        if entry["strength"] not in SHOWN_STRENGTHS or entry["scheme"] != schemes[0]:
            continue
        cells = []
        for scheme in schemes:
            row = next(
                e
                for e in attacked
                if (e["scheme"], e["attack"], e["strength"])
                == (scheme, entry["attack"], entry["strength"])
            )
            kept = row["original_retain"]["mean"] / unedited[scheme]["original_retain"]["mean"]
            cells += [
                f"{kept:.0%}",
                f"{row['auroc']['mean']:.3f}",
                f"{row['detected_original']['mean']:.2f}",
            ]
        lines.append(f"| {entry['attack']} | {entry['strength']:g} | {' | '.join(cells)} |")
    lines += [
        "",
        "Unedited, D1 AUROC is "
        + " and ".join(f"{unedited[s]['auroc']['mean']:.3f} ({SCHEME_NAMES[s]})" for s in schemes)
        + f"; its lowest under any attack up to strength 0.5 is "
        f"{worst_auroc['auroc']['mean']:.3f} ({worst_auroc['attack']} at "
        f"{worst_auroc['strength']:g}, {SCHEME_NAMES[worst_auroc['scheme']]}). No attack made "
        f"a forgotten owner read as present: the share of forget owners detected on the "
        f"retrained model is at most {false_alarm:.2f} (upper end of its interval) in every cell.",
        "",
        "The model owner's own watermark (dilution; "
        "[benchmarks/results/dilution/results.md](benchmarks/results/dilution/results.md)):",
        "",
        *dilution_table,
        "",
        "Model capacity and memorisation against calibration (D2) and carry-over, the "
        "reproduction's no-duplicate setting ("
        "[benchmarks/results/capacity/results.md](benchmarks/results/capacity/results.md)):",
        "",
        *capacity_table,
        "",
        f"Over these {len(capacity['summary'])} cells (Pearson's r of the cell means, "
        f"two-sided p), mean carry-over against mean D2 R² gives {correlation(capacity)} "
        "(negative would mean less carry-over, better calibration); mean training NLL against "
        f"mean D2 R² gives {correlation(capacity, 'nll')} (negative: more memorised, better "
        f"calibration). So few cells, with D2 intervals over seeds as wide as {widest_d2(capacity)}, "
        "make both weak evidence.",
        "",
        f"Regenerate: `{robustness['command']}` ({minutes(robustness)} on "
        f"{robustness['machine']}), `{dilution['command']}` ({minutes(dilution)}), "
        f"`{capacity['command']}` (an estimated {scratch_hours(capacity):.1f} hours from "
        "nothing on one thread: measured where built, estimated where not), then "
        "`python docs/generators/update_docs.py`.",
    ]
    return "\n".join(lines)


def correlation(capacity: dict[str, Any], column: str = "carry_over") -> str:
    """The capacity study's correlation (scipy's Pearson r) of a column's cell means with the
    mean D2 R², with its number of cells and two-sided p-value; undefined below three cells or
    without spread, as the study's own table says."""
    from scipy.stats import pearsonr

    pairs = [(s[column]["mean"], s["r2"]["mean"]) for s in capacity["summary"]]
    pairs = [pair for pair in pairs if all(math.isfinite(v) for v in pair)]
    xs, ys = zip(*pairs, strict=True) if pairs else ((), ())
    if len(pairs) < 3 or len(set(xs)) == 1 or len(set(ys)) == 1:
        return f"an undefined r, n = {len(pairs)}"
    result = pearsonr(xs, ys)
    return f"r = {result.statistic:+.2f}, n = {len(pairs)}, p = {result.pvalue:.2g}"


def scratch_hours(capacity: dict[str, Any]) -> float:
    """The full capacity study's hours from nothing on one thread, as its run estimated them."""
    return float(capacity["full_estimate_seconds"]["total"] / 3600)


def widest_d2(capacity: dict[str, Any]) -> str:
    """The widest D2 R² interval over seeds among the capacity study's cells."""
    widest = max(
        (s["r2"] for s in capacity["summary"] if math.isfinite(s["r2"].get("low", math.nan))),
        key=lambda r2: r2["high"] - r2["low"],
    )
    return f"[{widest['low']:.2f}, {widest['high']:.2f}]"


def minutes(results: dict[str, Any]) -> str:
    return f"{results['seconds'] / 60:.0f} minutes"
