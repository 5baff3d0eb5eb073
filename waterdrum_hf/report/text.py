"""``report.md``'s words: what was done, the verdict (:mod:`~waterdrum_hf.report.verdict`), the
results table, what the numbers mean, the methods and settings, the plots' captions."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from waterdrum_hf.report.audit_section import audit_section
from waterdrum_hf.report.findings import (
    forgotten_owners,
    interval_level,
    run_comparison,
    run_count,
    typed,
    typed_audits,
)
from waterdrum_hf.report.formatting import (
    count_phrase,
    format_interval,
    join_names,
    table_head,
)
from waterdrum_hf.report.verdict import verdict
from waterdrum_hf.scoring import WaterDrumResult
from waterdrum_hf.scoring.seed_comparison import SeedComparison, SeedValue

Q_DEFINITION = (
    "q(g, key) is Waterfall's verification score of a generated text g under an owner's key: "
    "the mean, over the text's counted tokens, of Waterfall's function k_p at pi_j, the "
    "token's position in the key- and context-dependent permutation of the N-token vocabulary "
    "(cos(2*pi*k_p*pi_j/N) for the paper's k_p = 1; a sine beyond N/2 - 1). It lies in [-1, 1]; "
    "text without the owner's watermark reads about 0 (see the null level), watermarked text "
    "close to 1."
)


def curve_note(report: Mapping[str, Any]) -> str | None:
    """What the curves are computed on (a subsample, so their values differ from the table's)
    and why a method has no curve; ``None`` when the report does not say."""
    sampling = report.get("curve_sampling")
    if not sampling:
        return None
    settings = report.get("settings") or {}
    models = typed(report["models"])
    note = (
        f"Each point scores a subsample: {sampling['queries']} queries x "
        f"{count_phrase(sampling['num_samples'], 'sample')} x {sampling['max_new_tokens']} tokens"
    )
    if "num_samples" in settings and "max_new_tokens" in settings and models:
        queries = max(m.num_queries for m in models.values())
        note += (
            f" (the table: {queries} queries x {count_phrase(settings['num_samples'], 'sample')} x "
            f"{settings['max_new_tokens']} tokens)"
        )
    note += ", so its values differ from the table's"
    start = next(
        (p for points in report.get("curves", {}).values() for p in points if p["step"] == 0),
        None,
    )
    original = models.get("original")
    if start is not None and original is not None and original.forget and "forget" in start:
        note += (
            f": at step 0 (the original model) forget reads {start['forget']:.2f} here and "
            f"{original.forget.value:.3f} in the table"
        )
    note += "."
    for method, why in (sampling.get("no_curve") or {}).items():
        note += f" {method} has no curve: {why}."
    return note


def markdown(report: Mapping[str, Any], plots: Mapping[str, Path], *, title: str) -> str:
    """The readable summary: what was done in words, the verdict, the table, what the numbers
    mean, the methods and settings, the plots."""
    models = typed(report["models"])
    settings = report.get("settings") or {}
    level = interval_level(models)
    comparison = run_comparison(report)
    lines = [f"# {title}", "", *_summary(models, settings), ""]
    found = verdict(models, settings, comparison)
    if found:
        lines += ["## Verdict", "", *found, ""]
    runs = run_count(report)
    if runs > 1:
        seeds = report.get("seeds") or []
        first = f" (seed {seeds[0]})" if seeds else ""
        lines += ["## Results", "", *_runs_table(comparison), ""]
        lines += [f"## The first run in detail{first}", "", *_table(models), ""]
    else:
        lines += ["## Results", "", *_table(models), ""]
    audits = typed_audits(report)
    if audits is not None and audits.audits():
        lines += ["## Audits: does the unlearning hold?", ""]
        if runs > 1:
            lines += [f"The audits ran on the first of the {runs} training runs.", ""]
        lines += [*audit_section(audits), ""]
    lines += _how_the_numbers_are_made(level)
    if runs > 1:
        lines += [RUNS_EXPLANATION, ""]
    lines += _methods_and_settings(report, models, settings)
    lines += _plots(report, plots, level, runs)
    if report.get("timings"):
        total = sum(report["timings"].values())
        parts = ", ".join(f"{k} {v:.0f} s" for k, v in report["timings"].items())
        lines += [f"Time: {total:.0f} s ({parts}).", ""]
    return "\n".join(lines)


RUNS_EXPLANATION = (
    "Over runs: the training runs (fine-tuning, retraining, unlearning and sampling, each run "
    "with its own seed; the owners' data and keys stay) move the values more than the queries "
    "do. A value in Results is the mean over the runs; its interval is Student's t over the "
    "runs' values, which holds both the run-to-run and the query-to-query spread, so a rerun "
    "lands inside it at about its level; it is cut to the range a value can take ([-1, 1]). A "
    "method's distance to retraining is that of its mean (forget, retain) point from the "
    "retrained model's, with the runs' noise taken out (run-to-run spread alone would make a "
    "noisy method look far), and its interval is the jackknife's over runs. A method is named "
    "closest to retraining alone only when every other method's squared distance exceeds its "
    "own by more than the runs' interval, which takes 3 runs or more; otherwise the methods "
    "that tie are named."
)


def _how_the_numbers_are_made(level: str) -> list[str]:
    """What q, a query's and a set's value, the null level, z and AUROC are; the interval's
    meaning where there is one."""
    lines = [
        "## How the numbers are made",
        "",
        Q_DEFINITION,
        "",
        "A query is a prompt made from one owner's data; its value pools the q of its samples "
        "(token-weighted). A set's value is the mean over its queries. Null level: the set's "
        "value under random keys that own nothing (mean ± standard deviation over those keys), "
        'i.e. what "no watermark" reads on the same texts. z = (value - null mean) / null '
        "standard deviation. AUROC: how well per-query values separate retain (positive) from "
        "forget queries (1 = perfectly, 0.5 = not at all). A skipped sample had no countable "
        "token (too short).",
        "",
    ]
    if level:
        lines += [
            f"CI: a {level} confidence interval (percentile bootstrap over queries: each "
            "owner's queries are resampled with replacement, so every owner keeps its number of "
            "queries; the owners are given). It says how far the value could move with other "
            "queries and samples of the same owners; two models whose intervals do not overlap "
            "differ by more than that noise.",
            "",
        ]
    return lines


def _methods_and_settings(
    report: Mapping[str, Any],
    models: Mapping[str, WaterDrumResult],
    settings: Mapping[str, Any],
) -> list[str]:
    """The unlearning methods of the models shown, and the run's settings, each in words."""
    lines = []
    methods = {name: text for name, text in (report.get("methods") or {}).items() if name in models}
    if methods:
        lines += ["## Methods", ""]
        lines += [f"- `{name}`: {text}" for name, text in methods.items()]
        lines += [""]
    if settings:
        lines += ["## Settings", "", *_settings(settings, report.get("setting_help") or {}), ""]
    return lines


def _plots(
    report: Mapping[str, Any], plots: Mapping[str, Path], level: str, runs: int
) -> list[str]:
    """Each plot with its caption (the benchmark plot's points are means over ``runs``)."""
    bars = f" Bars: {level} confidence intervals of both values." if level else ""
    if runs > 1:
        bars = (
            f" Each point is the mean over {runs} training runs; bars: its 95% interval over runs."
        )
    owner_bars = f"its {level} confidence interval" if level else "standard error over its queries"
    captions = {
        "benchmark": "Forget vs retain value per model (the paper's benchmark plot). The ideal "
        "unlearned model sits at the forget null level with the original's retain value." + bars,
        "curves": "Forget and retain values during unlearning, logged by WaterDrumCallback. "
        + (curve_note(report) or ""),
        "per_owner": f"Each owner's value per model (mean with {owner_bars}, n = scored "
        "queries), with that owner's null band (mean ± 2 sd over random keys).",
        "roc": "ROC of per-query values, retain positive, forget negative.",
        "audits": "Forget value of each model before (hollow) and after (filled) each audit; "
        "the dashed line is the retrained model after the same audit: the line to beat.",
        "watermark_view": "One forget and one retain completion of the same queries, before "
        "unlearning (the original model) and after (the method closest to retraining), each "
        "token coloured by its term of its owner's watermark function: blue for the "
        "watermark, red against, with each text's score, null level and p-value "
        "(watermark_view.html: the same as a page).",
    }
    if runs > 1:  # every plot but the benchmark's shows one run
        for key in ("curves", "per_owner", "roc", "audits", "watermark_view"):
            captions[key] += " The first training run's."
    lines = ["## Plots", ""] if plots else []
    for key, path in plots.items():
        lines += [f"![{key}]({path.name})", "", captions[key].strip(), ""]
    return lines


def _summary(models: Mapping[str, WaterDrumResult], settings: Mapping[str, Any]) -> list[str]:
    """The opening paragraphs, in words: what was done and what forget and retain mean."""
    text = (
        "Each data owner's text was reworded under the owner's own secret key: a watermark "
        "that a reader does not notice, but that text written by a model which learned from it "
        "still carries, detectably with the key. To see whose data a model still holds, the "
        "model continues short prompts cut from each owner's passages and the continuations "
        "are checked for that owner's watermark."
    )
    forget = forgotten_owners(models) or list(settings.get("forget_owners") or [])
    if forget:
        text += (
            f" Owner{'s' if len(forget) > 1 else ''} {join_names(forget)} asked to be forgotten. "
            "The *forget* value says how strongly "
            f"{'their' if len(forget) > 1 else 'its'} watermark still shows: after good "
            "unlearning it falls to about 0, what text without the watermark reads, as on a "
            "model retrained without that data. The *retain* value says the same of the other "
            "owners and should stay where it was: the model should keep what it was not asked "
            "to forget."
        )
    else:
        text += (
            " A value of about 0 means the owner's watermark does not show at all; close to 1, "
            "strongly."
        )
    lines = [text]
    if "original" in models and "retrained" in models:
        lines += [
            "",
            "`original` was trained on every owner's data; `retrained` on the other owners' "
            "data only (the gold standard of unlearning, too costly to do for every request); "
            "every other model is `original` after an unlearning method (see Methods).",
        ]
    return lines


def _table(models: Mapping[str, WaterDrumResult]) -> list[str]:
    """One row per model: set values, AUROC, their confidence intervals, null levels, counts."""
    values = {name: m.sets() for name, m in models.items()}
    sets = [s for s in ("forget", "retain", "overall") if any(s in v for v in values.values())]
    with_null = [
        s for s in sets if any(s in v and v[s].null_mean is not None for v in values.values())
    ]
    with_ci = [s for s in sets if any(s in v and v[s].ci_low is not None for v in values.values())]
    auroc_ci = "forget" in sets and any(
        m.separability_auroc_ci_low is not None for m in models.values()
    )
    ci = f"{interval_level(models)} CI"
    header = ["model", *sets]
    if "forget" in sets:
        header += ["AUROC"]
    header += [f"{s} {ci}" for s in with_ci] + ([f"AUROC {ci}"] if auroc_ci else [])
    header += [f"{s} null (mean ± sd)" for s in with_null]
    header += ["queries", "samples scored / skipped"]
    rows = table_head(header)
    for name, m in models.items():
        row = [name, *(f"{values[name][s].value:+.3f}" if s in values[name] else "–" for s in sets)]
        if "forget" in sets:
            auroc = m.separability_auroc
            row.append("–" if auroc is None else f"{auroc:.3f}")
        for s in with_ci:
            value = values[name].get(s)
            row.append(format_interval(value.ci_low, value.ci_high, "+.3f") if value else "–")
        if auroc_ci:
            row.append(
                format_interval(m.separability_auroc_ci_low, m.separability_auroc_ci_high, ".3f")
            )
        for s in with_null:
            value = values[name].get(s)
            row.append(
                f"{value.null_mean:+.3f} ± {value.null_std:.3f}"
                if value is not None and value.null_mean is not None
                else "–"
            )
        row += [str(m.num_queries), f"{m.num_scored} / {m.num_skipped}"]
        rows.append("| " + " | ".join(row) + " |")
    return rows


def runs_cell(sets: Mapping[str, SeedValue]) -> str:
    """How many runs a model's values rest on: one count, or each set's where they differ."""
    counts = {name: value.num_seeds for name, value in sets.items()}
    if len(set(counts.values())) == 1:
        return str(next(iter(counts.values())))
    return ", ".join(f"{name} {count}" for name, count in counts.items())


def value_cell(value: SeedValue | None, spec: str) -> str:
    """A mean over runs in ``spec`` with its interval, or ``–`` without a value."""
    if value is None:
        return "–"
    return f"{value.value:{spec}} {format_interval(value.ci_low, value.ci_high, spec)}"


def _runs_table(comparison: SeedComparison) -> list[str]:
    """One row per model: each set's mean over the training runs with its interval over runs,
    the distance to the retrained model, and how many runs each row rests on."""
    values = comparison.values
    sets = [s for s in ("forget", "retain", "overall") if any(s in v for v in values.values())]
    level = f"{100 * comparison.confidence:g}% CI over runs"
    header = ["model", *(f"{s} ({level})" for s in sets)]
    if comparison.distances:
        header.append(f"distance to retrained ({level})")
    header.append("runs")
    rows = table_head(header)
    for name, sets_of_model in values.items():
        row = [name, *(value_cell(sets_of_model.get(s), "+.3f") for s in sets)]
        if comparison.distances:
            row.append(value_cell(comparison.distances.get(name), ".3f"))
        row.append(runs_cell(sets_of_model))
        rows.append("| " + " | ".join(row) + " |")
    return rows


def _settings(settings: Mapping[str, Any], help_text: Mapping[str, str]) -> list[str]:
    """The run's settings as a table, with what each means where known."""
    columns = ["setting", "value", *(["meaning"] if help_text else [])]
    rows = table_head(columns)
    for key, value in settings.items():
        if value is None:
            continue
        if isinstance(value, float):
            shown = f"{value:.3g}"
        elif isinstance(value, (list, tuple)):
            shown = ", ".join(map(str, value))
        else:
            shown = str(value)
        cells = [key, shown, *([help_text.get(key, "")] if help_text else [])]
        rows.append("| " + " | ".join(cells) + " |")
    return rows
