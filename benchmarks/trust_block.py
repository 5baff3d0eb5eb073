"""The README's "How far to trust the numbers" block: what the robustness, dilution and
capacity studies found, rendered from their committed results (``python
benchmarks/robustness.py``, ``python benchmarks/dilution.py``, ``python
benchmarks/capacity.py``); ``benchmarks/update_docs.py`` writes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from capacity import FULL_SIZES, correlation_text, scratch_hours

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
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
        f"Over these {len(capacity['summary'])} cells, the correlation of mean carry-over with "
        f"mean D2 R² is {correlation_text(capacity)} (negative: less carry-over, better "
        f"calibration); of mean training NLL with mean D2 R², {correlation_text(capacity, 'nll')}"
        " (negative: more memorised, better calibration)." + not_run(capacity),
        "",
        f"Regenerate: `{robustness['command']}` ({minutes(robustness)} on "
        f"{robustness['machine']}), `{dilution['command']}` ({minutes(dilution)}), "
        f"`{capacity['command']}` (about {scratch_hours(capacity):.1f} hours from nothing, "
        "on one thread), then "
        "`python benchmarks/update_docs.py`.",
    ]
    return "\n".join(lines)


def minutes(results: dict[str, Any]) -> str:
    return f"{results['seconds'] / 60:.0f} minutes"


def not_run(capacity: dict[str, Any]) -> str:
    """A sentence on the sizes of the full study left out of the committed run, with the run's
    own estimate of the full study's time; empty when none was left out."""
    missing = [size for size in FULL_SIZES if size not in capacity["plan"]["sizes"]]
    if not missing:
        return ""
    return (
        f" Not run yet: the {', '.join(missing)} model (the full study, `python "
        f"benchmarks/capacity.py`, is estimated at {scratch_hours(capacity):.1f} hours on one "
        "thread from this run's timings)."
    )
