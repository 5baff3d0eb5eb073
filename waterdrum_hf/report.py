"""Reports of WaterDrum results: ``report.json``, a readable ``report.md`` and PNG plots.

Shared by ``waterdrum demo``, ``waterdrum score``, the monitoring example and the paper
reproduction. A report is a dict::

    {"models": {name: <waterdrum_result(..., return_details=True)>, ...},
     "curves": {method: [{"step": ..., "forget": ..., "retain": ...}, ...]},   # optional
     "timings": {stage: seconds}, "settings": {...},
     # optional, for readers who never read the paper:
     "methods": {method: one-line description},
     "setting_help": {setting: what it means},
     "curve_sampling": {"queries": n, "num_samples": n, "max_new_tokens": n,
                        "no_curve": {method: why it has no curve}},
     # optional: the relearning and quantization audits (waterdrum_hf.audits)
     "audits": AuditResults or its to_dict()}

A model's result may also be its flat dict (``compute_waterdrum``'s, or one read back from
``report.json``): every function here takes either and reads a
:class:`~waterdrum_hf.metric.WaterDrumResult`; ``report.json`` holds the flat dicts.

Models named ``original`` and ``retrained`` are marked in the plots; every model keeps one
colour in every plot (:func:`model_color`); owners appear by name only. Plots use matplotlib's
object API (no pyplot state, no display needed).
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from waterdrum_hf.audits.results import AUDIT_TITLES, BEFORE, AuditResults
from waterdrum_hf.metric import OwnerValue, SetValue, WaterDrumResult

Results = Mapping[str, WaterDrumResult | Mapping[str, Any]]
"""Each model's result by model name, typed or as its flat dict."""

Q_DEFINITION = (
    "q(g, key) is Waterfall's verification score of a generated text g under an owner's key: "
    "the mean, over the text's counted tokens, of Waterfall's function k_p at pi_j, the "
    "token's position in the key- and context-dependent permutation of the N-token vocabulary "
    "(cos(2*pi*k_p*pi_j/N) for the paper's k_p = 1; a sine beyond N/2 - 1). It lies in [-1, 1]; "
    "text without the owner's watermark reads about 0 (see the null level), watermarked text "
    "close to 1."
)

DETECTION_LEVEL = 0.05
"""A watermark counts as detected when its p-value is at most this."""

MODEL_COLORS: Mapping[str, str] = MappingProxyType(
    {
        "original": "#333333",
        "retrained": "tab:green",
        "kl": "tab:blue",
        "scrub": "tab:orange",
        "graddiff": "tab:red",
        "npo": "tab:purple",
        "taskvector": "tab:brown",
        "gradascent": "tab:pink",
        "simnpo": "tab:olive",
        "idkdpo": "tab:cyan",
        "idknll": "tab:gray",
    }
)
"""The fixed colour of each model the demo and the reproduction name (by canonical name)."""

OTHER_COLORS = ("navy", "teal", "goldenrod", "maroon", "darkkhaki", "slateblue", "sienna")
"""Colours of other model names, picked by a hash of the name (stable from run to run)."""

IDEAL_COLOR = "black"
"""The benchmark plot's ideal point: a hollow marker in a colour no model has."""

LABEL_OFFSETS = tuple(
    (round(r * dx), round(r * dy))
    for r in (8, 16, 26)
    for dx, dy in (
        (1, 0),
        (-1, 0),
        (0.8, 0.8),
        (-0.8, 0.8),
        (0.8, -0.8),
        (-0.8, -0.8),
        (0, 1),
        (0, -1),
    )
)
"""Where :func:`label_points` tries a name, in points from its marker: nearest first."""


def model_color(name: str) -> str:
    """The colour of a model (or unlearning method) in every plot: fixed for the names of
    :data:`MODEL_COLORS` (any case, ``_`` and ``-`` ignored), stable for any other name."""
    key = name.lower().replace("_", "").replace("-", "")
    if key in MODEL_COLORS:
        return MODEL_COLORS[key]
    return OTHER_COLORS[zlib.crc32(key.encode()) % len(OTHER_COLORS)]


def typed(models: Results) -> dict[str, WaterDrumResult]:
    """Each model's result as a :class:`WaterDrumResult` (flat dicts read with ``from_dict``)."""
    return {
        name: m if isinstance(m, WaterDrumResult) else WaterDrumResult.from_dict(m)
        for name, m in models.items()
    }


def read_report(path: str | Path) -> dict[str, Any]:
    """A ``report.json`` (or the folder holding it) read back, its models typed: what
    :func:`write_report` takes to render the report again."""
    path = Path(path)
    saved = json.loads((path / "report.json" if path.is_dir() else path).read_text())
    return {**saved, "models": typed(saved["models"])}


def write_report(
    report: Mapping[str, Any], out_dir: str | Path, *, title: str = "WaterDrum report"
) -> list[Path]:
    """Write ``report.json``, ``report.md`` and the plots that apply; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    models = typed(report["models"])
    written = [out / "report.json"]
    flat = {name: m.to_dict() for name, m in models.items()}
    audits = typed_audits(report)
    saved = {**report, "models": flat}
    if audits is not None:
        saved["audits"] = audits.to_dict()
        written.append(out / "audits.json")
        written[-1].write_text(json_text(saved["audits"]))
    written[0].write_text(json_text(saved))
    report = {**report, "models": models, "audits": audits}
    plots: dict[str, Path] = {}
    if any(m.forget and m.retain for m in models.values()):
        plots["benchmark"] = plot_benchmark(models, out / "benchmark.png")
    if report.get("curves"):
        plots["curves"] = plot_curves(report["curves"], out / "curves.png", note=curve_note(report))
    if any(m.per_owner for m in models.values()):
        plots["per_owner"] = plot_per_owner(models, out / "per_owner.png")
    roc_model = "retrained" if "retrained" in models else next(iter(models))
    if models[roc_model].separability_auroc is not None and models[roc_model].query_values:
        plots["roc"] = plot_roc(models[roc_model], out / "roc.png", label=roc_model)
    if audits is not None and audits.audits():
        plots["audits"] = plot_audits(audits, out / "audits.png")
    (out / "report.md").write_text(markdown(report, plots, title=title))
    return [*written, out / "report.md", *plots.values()]


def typed_audits(report: Mapping[str, Any]) -> AuditResults | None:
    """The report's ``"audits"`` as :class:`AuditResults` (``None`` when it has none)."""
    audits = report.get("audits")
    if audits is None or isinstance(audits, AuditResults):
        return audits
    return AuditResults.from_dict(audits)


def closest_to_retrained(models: Results) -> tuple[str, float] | None:
    """The unlearned model whose (forget, retain) point is nearest the retrained model's."""
    models = typed(models)
    target = models.get("retrained")
    if target is None or not (target.forget and target.retain):
        return None
    distances = {
        name: math.hypot(m.forget.value - target.forget.value, m.retain.value - target.retain.value)
        for name, m in models.items()
        if name not in ("original", "retrained") and m.forget and m.retain
    }
    if not distances:
        return None
    best = min(distances, key=distances.get)
    return best, distances[best]


def detected(value: SetValue | OwnerValue | None) -> bool | None:
    """Whether a watermark is still detected (p-value at most :data:`DETECTION_LEVEL`);
    ``None`` without a p-value (no null keys)."""
    if value is None or value.p_value is None:
        return None
    return value.p_value <= DETECTION_LEVEL


def forgotten_owners(models: Results) -> list[str]:
    """The display names of the owners marked forget in any model's per-owner values."""
    return list(
        dict.fromkeys(
            owner
            for m in typed(models).values()
            for owner, entry in (m.per_owner or {}).items()
            if entry.forget
        )
    )


def p_value_floor(settings: Mapping[str, Any]) -> float | None:
    """The smallest p-value ``settings["null_keys"]`` random keys can give, ``1 / (1 + K)``
    (``None`` for the analytic null, whose p-values have no floor)."""
    if settings.get("null") == "analytic":
        return None
    null_keys = settings.get("null_keys")
    return 1 / (1 + null_keys) if isinstance(null_keys, int) and null_keys > 0 else None


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
        f"{_count(sampling['num_samples'], 'sample')} x {sampling['max_new_tokens']} tokens"
    )
    if "num_samples" in settings and "max_new_tokens" in settings and models:
        queries = max(m.num_queries for m in models.values())
        note += (
            f" (the table: {queries} queries x {_count(settings['num_samples'], 'sample')} x "
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
    lines = [f"# {title}", "", *_summary(models, settings), ""]
    verdict = _verdict(models, settings)
    if verdict:
        lines += ["## Verdict", "", *verdict, ""]
    lines += ["## Results", "", *_table(models), ""]
    audits = typed_audits(report)
    if audits is not None and audits.audits():
        lines += ["## Audits: does the unlearning hold?", "", *audit_section(audits), ""]
    lines += [
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
    level = interval_level(models)
    if level:
        lines += [
            f"CI: a {level} confidence interval (percentile bootstrap over queries: each "
            "owner's queries are resampled with replacement, so every owner keeps its number of "
            "queries; the owners are given). It says how far the value could move with other "
            "queries and samples of the same owners; two models whose intervals do not overlap "
            "differ by more than that noise.",
            "",
        ]
    methods = {name: text for name, text in (report.get("methods") or {}).items() if name in models}
    if methods:
        lines += ["## Methods", ""]
        lines += [f"- `{name}`: {text}" for name, text in methods.items()]
        lines += [""]
    if settings:
        lines += ["## Settings", "", *_settings(settings, report.get("setting_help") or {}), ""]
    bars = f" Bars: {level} confidence intervals of both values." if level else ""
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
    }
    if plots:
        lines += ["## Plots", ""]
    for key, path in plots.items():
        lines += [f"![{key}]({path.name})", "", captions[key].strip(), ""]
    if report.get("timings"):
        total = sum(report["timings"].values())
        parts = ", ".join(f"{k} {v:.0f} s" for k, v in report["timings"].items())
        lines += [f"Time: {total:.0f} s ({parts}).", ""]
    return "\n".join(lines)


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
            f" Owner{'s' if len(forget) > 1 else ''} {_names(forget)} asked to be forgotten. "
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


_P_VALUE_NOTES = {
    False: "z: how many standard deviations of the null level (what random keys that own "
    "nothing read on the same texts) the forget value lies above it. p = (1 + the number of "
    "those keys reading at least as high) / (1 + the number of keys): the chance that a key "
    "owning nothing reads this high",
    True: "z: how many standard deviations of the null level (what a key that owns nothing "
    "reads on the same texts, computed exactly from their token-pair counts: the analytic "
    "null) the forget value lies above it. p = P(N(0, 1) >= z): the chance that a key owning "
    "nothing reads this high, in the normal approximation",
}
"""The p-value's explanation under the empirical (False) and the analytic (True) null."""


def _verdict(models: Mapping[str, WaterDrumResult], settings: Mapping[str, Any]) -> list[str]:
    """Which method came closest to retraining, whether that is close enough, and whether the
    forgotten owners' watermark is still detected in each model."""
    lines = []
    whose = "forgotten owners'" if len(forgotten_owners(models)) != 1 else "forgotten owner's"
    if "original" in models and "retrained" in models:  # a benchmark
        lines += _benchmark_verdict(models, whose)
    floor = p_value_floor(settings)
    on_floor = {
        name
        for name, m in models.items()
        if floor is not None
        and detected(m.forget) is not None
        and math.isclose(m.forget.p_value, floor)
    }
    detection = [
        _detection_line(name, m, whose, floor_mark="*" if name in on_floor else "")
        for name, m in models.items()
        if detected(m.forget) is not None
    ]
    if detection:
        lines += [
            *detection,
            "",
            _P_VALUE_NOTES[settings.get("null") == "analytic"]
            + f"; detected means p ≤ {DETECTION_LEVEL}.",
        ]
    if on_floor:
        count, null_keys = len(on_floor), settings["null_keys"]
        lines += [
            "",
            f"\\* p = {floor:.3f} is the smallest p-value {null_keys} null keys can give, "
            f"1 / (1 + {null_keys}): {_count(count, 'model')} {'sit' if count > 1 else 'sits'} "
            "on it" + (", so p cannot rank them; z can." if count > 1 else "."),
        ]
    return lines


def _benchmark_verdict(models: Mapping[str, WaterDrumResult], whose: str) -> list[str]:
    """The closest method to retraining and whether it is close enough; the methods that hid
    the forgotten owners' watermark and what they kept of the retain value."""
    retrained = models["retrained"]
    lines = []
    best = closest_to_retrained(models)
    if best is not None:
        name, distance = best
        forget = models[name].forget
        line = (
            f"**Closest to retraining:** `{name}` (distance {distance:.3f} to the retrained "
            "model in the (forget, retain) plane)."
        )
        if detected(forget):
            line += (
                f" Closest is not close enough: the {whose} watermark is **still "
                f"detected** in its answers (forget {forget.value:+.3f} against a null level "
                f"of {forget.null_mean:+.3f} ± {forget.null_std:.3f}, z = {_z(forget)})"
            )
            if detected(retrained.forget) is False:
                line += (
                    f", where the retrained model's is not (forget {retrained.forget.value:+.3f}, "
                    f"p = {retrained.forget.p_value:.3f})"
                )
            line += "."
        elif detected(forget) is False:
            line += (
                f" Like the retrained model's, its answers no longer show the {whose} "
                f"watermark (p = {forget.p_value:.3f}){_kept_phrase(models[name], models)}."
            )
        lines += [line, ""]
    methods = {
        name: m
        for name, m in models.items()
        if name not in ("original", "retrained") and detected(m.forget) is not None
    }
    gone = [name for name, m in methods.items() if not detected(m.forget)]
    if methods and not gone:
        lines += [
            f"No unlearning method removed the {whose} watermark at these settings: it "
            "is still detected in every unlearned model.",
            "",
        ]
    for name in gone:
        if best is None or name != best[0]:  # the closest one has its line above
            lines += [
                f"The {whose} watermark is no longer detected in `{name}`'s answers "
                f"(p = {methods[name].forget.p_value:.3f}){_kept_phrase(methods[name], models)}.",
                "",
            ]
    if best is not None and detected(models[best[0]].forget):
        lines += [
            "In short, no method matched retraining here: even the closest one still shows the "
            f"{whose} watermark.",
            "",
        ]
    return lines


def _detection_line(name: str, model: WaterDrumResult, whose: str, *, floor_mark: str) -> str:
    """Whether the forgotten owners' watermark is still detected in a model, and owner by owner
    where they differ."""
    forget = model.forget
    line = (
        f"- `{name}`: the {whose} watermark is "
        + ("**still detected**" if detected(forget) else "not detected")
        + f" (z = {_z(forget)}, p = {forget.p_value:.3f}{floor_mark})"
    )
    owners = {
        o: e for o, e in (model.per_owner or {}).items() if e.forget and detected(e) is not None
    }
    still = [o for o, e in owners.items() if detected(e)]
    if len(owners) > 1 and still:
        line += f"; owner by owner: still detected for {_names(still)}"
        if len(still) < len(owners):
            line += f", gone for {_names([o for o in owners if o not in still])}"
    return line + "."


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
    rows = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for name, m in models.items():
        row = [name, *(f"{values[name][s].value:+.3f}" if s in values[name] else "–" for s in sets)]
        if "forget" in sets:
            auroc = m.separability_auroc
            row.append("–" if auroc is None else f"{auroc:.3f}")
        for s in with_ci:
            value = values[name].get(s)
            row.append(_interval(value.ci_low, value.ci_high, "+.3f") if value else "–")
        if auroc_ci:
            row.append(_interval(m.separability_auroc_ci_low, m.separability_auroc_ci_high, ".3f"))
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


def interval_level(models: Results) -> str:
    """The models' confidence level as ``95%`` (``mixed-level`` when they differ, ``""`` when
    no model has intervals)."""
    levels = {m.confidence for m in typed(models).values() if m.confidence is not None}
    if not levels:
        return ""
    return f"{100 * levels.pop():g}%" if len(levels) == 1 else "mixed-level"


def _interval(low: float | None, high: float | None, spec: str) -> str:
    """``[low, high]`` in ``spec``, or ``–`` without an interval."""
    return "–" if low is None or high is None else f"[{low:{spec}}, {high:{spec}}]"


def _settings(settings: Mapping[str, Any], help_text: Mapping[str, str]) -> list[str]:
    """The run's settings as a table, with what each means where known."""
    columns = ["setting", "value", *(["meaning"] if help_text else [])]
    rows = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
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


def _kept_phrase(model: WaterDrumResult, models: Mapping[str, WaterDrumResult]) -> str:
    """``; it kept N% of the original's retain value (retrained: M%)``, where both are known."""
    original = models.get("original")
    kept, gold = _kept(model, original), _kept(models.get("retrained"), original)
    if kept is None or gold is None:
        return ""
    return f"; it kept {kept:.0%} of the original's retain value (retrained: {gold:.0%})"


def _kept(model: WaterDrumResult | None, original: WaterDrumResult | None) -> float | None:
    """The share of the original's retain value a model kept."""
    if model is None or original is None or not (original.retain and model.retain):
        return None
    if original.retain.value <= 0:  # no retain watermark to keep
        return None
    return model.retain.value / original.retain.value


def _z(value: SetValue) -> str:
    return "n/a" if value.z is None else f"{value.z:+.1f}"


def _names(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def plot_benchmark(models: Results, path: str | Path) -> Path:
    """Forget value (x) vs retain value (y) per model, original and retrained marked."""
    return benchmark_figure({"Unlearning benchmark": models}, path)


def benchmark_figure(panels: Mapping[str, Results], path: str | Path) -> Path:
    """One benchmark scatter per titled panel, one legend, every point named where its name
    fits (:func:`label_points`)."""
    fig, axes = new_figure(5.0 * len(panels) + 1.6, 4.6, ncols=len(panels))
    axes = np.atleast_1d(axes)
    points = [
        draw_benchmark(ax, models, title)
        for ax, (title, models) in zip(axes, panels.items(), strict=True)
    ]
    handles = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    axes[-1].legend(
        handles.values(), handles.keys(), fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5)
    )
    fig.tight_layout()  # the axes' final size before the names are placed
    for ax, named in zip(axes, points, strict=True):
        label_points(ax, named)
    return save_figure(fig, path)


def draw_benchmark(ax: Any, models: Results, title: str) -> dict[str, tuple[float, float]]:
    """The benchmark scatter on ``ax``: models, the forget null band and the ideal point.
    Returns the points to name, by name (the names are placed once the layout is final)."""
    models = typed(models)
    points = {}
    for name, m in models.items():
        if not (m.forget and m.retain):
            continue
        marker = {"original": "s", "retrained": "*"}.get(name, "o")
        points[name] = (m.forget.value, m.retain.value)
        if m.forget.ci_low is not None or m.retain.ci_low is not None:
            ax.errorbar(
                *points[name],
                xerr=_error(m.forget),
                yerr=_error(m.retain),
                fmt="none",
                ecolor=model_color(name),
                elinewidth=1,
                capsize=2,
                alpha=0.7,
                zorder=2,
            )
        ax.scatter(
            *points[name],
            marker=marker,
            color=model_color(name),
            s=120 if name == "retrained" else 50,
            zorder=3,
            label=name,
        )
    original = models.get("original")
    reference = models.get("retrained", original)
    null = reference.forget if reference is not None and reference.forget else None
    if null is not None and null.null_mean is not None and original is not None and original.retain:
        points["ideal"] = (null.null_mean, original.retain.value)
        ax.scatter(
            *points["ideal"],
            marker="P",
            s=90,
            facecolors="none",
            edgecolors=IDEAL_COLOR,
            zorder=2,
            label="ideal",
        )
        ax.axvspan(
            null.null_mean - 2 * null.null_std,
            null.null_mean + 2 * null.null_std,
            color="grey",
            alpha=0.15,
            label="forget null ±2 sd",
        )
    ax.margins(0.12)
    ax.set_xlabel("forget WaterDrum value (lower is better)")
    ax.set_ylabel("retain WaterDrum value (higher is better)")
    ax.set_title(title)
    return points


def _error(value: SetValue | OwnerValue) -> np.ndarray | None:
    """Matplotlib's asymmetric error of a value with an interval, ``[[below], [above]]`` (0 on
    a side the value lies beyond: a percentile interval need not hold its point estimate)."""
    if value.ci_low is None or value.ci_high is None:
        return None
    return np.maximum([[value.value - value.ci_low], [value.ci_high - value.value]], 0.0)


def label_points(ax: Any, points: Mapping[str, tuple[float, float]]) -> None:
    """Name each point beside its marker where the name overlaps no other name and no marker
    and stays inside the axes (nearest place of :data:`LABEL_OFFSETS` first, with a leader
    line when further out). A name that fits nowhere is left out: the legend still has it.
    Call once the layout is final: the places are found in display space."""
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

    ax.set_xlim(ax.get_xlim())  # freeze the limits: the names must not move the points
    ax.set_ylim(ax.get_ylim())
    renderer = ax.figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    radius = 5 * ax.figure.dpi / 72  # about the largest marker's radius, in pixels
    taken = [
        Bbox.from_extents(x - radius, y - radius, x + radius, y + radius)
        for x, y in (ax.transData.transform(p) for p in points.values())
    ]
    for name, point in points.items():
        for dx, dy in LABEL_OFFSETS:
            text = ax.annotate(
                name,
                point,
                textcoords="offset points",
                xytext=(dx, dy),
                ha="left" if dx > 0 else "right" if dx < 0 else "center",
                va="bottom" if dy > 0 else "top" if dy < 0 else "center",
                fontsize=8,
                arrowprops=None
                if max(abs(dx), abs(dy)) < 10
                else {"arrowstyle": "-", "lw": 0.5, "color": "grey"},
            )
            text.get_window_extent(renderer)  # places the name (and its leader line)
            box = Text.get_window_extent(text, renderer).padded(1.5)  # the name alone
            inside = (
                frame.x0 <= box.x0
                and box.x1 <= frame.x1
                and frame.y0 <= box.y0
                and box.y1 <= frame.y1
            )
            if inside and not any(box.overlaps(other) for other in taken):
                taken.append(box)
                break
            text.remove()


def plot_curves(
    curves: Mapping[str, Sequence[Mapping[str, float]]],
    path: str | Path,
    *,
    note: str | None = None,
) -> Path:
    """Forget and retain values against the training step, one line per method (in its
    :func:`model_color`); ``note`` (e.g. :func:`curve_note`) goes under the plots."""
    fig, axes = new_figure(9.0, 3.6, ncols=2)
    for ax, key in zip(axes, ("forget", "retain"), strict=True):
        for method, points in curves.items():
            steps = [p["step"] for p in points if key in p]
            ax.plot(
                steps,
                [p[key] for p in points if key in p],
                marker="o",
                markersize=3,
                color=model_color(method),
                label=method,
            )
        ax.set_xlabel("optimizer step")
        ax.set_ylabel(f"{key} value")
        ax.set_title(f"{key.capitalize()} WaterDrum during unlearning")
        ax.axhline(0, color="black", linewidth=0.5)
    axes[1].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
    if note:
        fig.tight_layout()
        fig.text(0.02, 0.0, note, ha="left", va="top", fontsize=7.5, wrap=True)
    return save_figure(fig, path)


def plot_per_owner(models: Results, path: str | Path) -> Path:
    """Grouped bars: each owner's value per model, standard errors, counts and null bands.

    An owner with no scored query gets "n/a" instead of a bar (never a 0, which would read as
    "forgotten").
    """
    per_owner = {name: m.per_owner for name, m in typed(models).items() if m.per_owner}
    owners = list(dict.fromkeys(o for entries in per_owner.values() for o in entries))
    width = 0.8 / max(len(per_owner), 1)
    fig, ax = new_figure(max(6.0, 1.1 * len(owners) * max(1, len(per_owner) / 3) + 2.5), 4.4)
    for i, (name, entries) in enumerate(per_owner.items()):
        x = np.arange(len(owners)) + (i - (len(per_owner) - 1) / 2) * width
        label = name
        for xi, owner in zip(x, owners, strict=True):
            entry = entries.get(owner)
            if entry is None or entry.value is None:
                ax.text(xi, 0, "n/a", ha="center", va="bottom", fontsize=6, rotation=90)
                continue
            n = entry.num_scored_queries
            error = _error(entry)
            if error is None:  # no interval: the standard error
                error = np.full((2, 1), (entry.std or 0.0) / math.sqrt(n))
            ax.bar(
                xi, entry.value, width, yerr=error, capsize=2, color=model_color(name), label=label
            )
            top = max(entry.value, 0) + float(error[1, 0])
            ax.text(xi, top + 0.02, f"n={n}", ha="center", fontsize=6)
            label = None
    for j, owner in enumerate(owners):
        nulls = [
            e[owner] for e in per_owner.values() if owner in e and e[owner].null_mean is not None
        ]
        if nulls:
            mean = float(np.mean([e.null_mean for e in nulls]))
            spread = float(np.mean([e.null_std for e in nulls]))
            ax.fill_between(
                [j - 0.45, j + 0.45],
                mean - 2 * spread,
                mean + 2 * spread,
                color="grey",
                alpha=0.2,
                zorder=0,
                label="null ±2 sd" if j == 0 else None,
            )
    forget = {o for entries in per_owner.values() for o, e in entries.items() if e.forget}
    ax.set_xticks(np.arange(len(owners)))
    ax.set_xticklabels([f"{o}\n(forget)" if o in forget else o for o in owners], fontsize=8)
    ax.axhline(0, color="black", linewidth=0.5)
    ax.set_ylabel("WaterDrum value (mean q)")
    level = interval_level(models)
    ax.set_title(
        f"Per-owner WaterDrum values ({level} CI)"
        if level
        else "Per-owner WaterDrum values (± standard error)"
    )
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return save_figure(fig, path)


def plot_roc(model: WaterDrumResult | Mapping[str, Any], path: str | Path, *, label: str) -> Path:
    """ROC curve of per-query values, retain queries positive, forget queries negative."""
    model = typed({label: model})[label]
    forget_owners = {o for o, e in model.per_owner.items() if e.forget}
    positive = [o not in forget_owners for o in model.query_owners]
    fig, ax = new_figure(4.4, 4.2)
    name = f"{label} (AUROC {model.separability_auroc:.3f})"
    draw_roc(ax, {name: model.query_values}, positive, colors={name: model_color(label)})
    ax.set_title("Separability (D1)")
    return save_figure(fig, path)


def draw_roc(
    ax: Any,
    curves: Mapping[str, Sequence[float]],
    positive: Sequence[bool],
    *,
    colors: Mapping[str, str] | None = None,
) -> None:
    """ROC curves on ``ax``, one per labelled list of per-query values (NaN left out).

    Curves that coincide (two perfect metrics) must both stay visible: the first is a wide,
    pale line underneath, each later one a thin dashed or dotted line drawn over it.
    """
    positive = np.asarray(positive, dtype=bool)
    styles = [{}]  # one curve: a plain line
    if len(curves) > 1:
        styles = [{"linewidth": 4.0, "alpha": 0.45, "zorder": 2}] + [
            {"linewidth": 1.4, "linestyle": style, "zorder": 3 + i}
            for i, style in enumerate(["--", ":", "-."] * len(curves))
        ]
    for (label, raw), style in zip(curves.items(), styles, strict=False):
        values = np.asarray(raw, dtype=float)
        keep = ~np.isnan(values)
        values, labels = values[keep], positive[keep]
        thresholds = np.concatenate([[np.inf], np.unique(values)[::-1]])
        tpr = [(values[labels] >= t).mean() for t in thresholds]
        fpr = [(values[~labels] >= t).mean() for t in thresholds]
        ax.plot(
            fpr,
            tpr,
            drawstyle="steps-post",
            label=label,
            color=(colors or {}).get(label),
            **style,
        )
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=0.8)
    ax.set_xlabel("false positive rate (forget queries)")
    ax.set_ylabel("true positive rate (retain queries)")
    ax.legend(
        fontsize=8,
        loc="lower right",
        title="where lines coincide, the dashed\none lies on the wide one"
        if len(curves) > 1
        else None,
        title_fontsize=7,
    )


def new_figure(width: float, height: float, ncols: int = 1) -> tuple[Any, Any]:
    """A matplotlib ``Figure`` (no pyplot, no display) and its ``ncols`` axes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)  # a renderer to measure text with (label_points)
    return fig, fig.subplots(1, ncols)


def save_figure(fig: Any, path: str | Path) -> Path:
    """Save ``fig`` as a PNG at ``path`` (tight layout, 120 dpi)."""
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return Path(path)


def json_text(value: Any) -> str:
    """Strict JSON (NaN written as ``null``, numpy scalars as numbers), indented."""
    return json.dumps(_without_nan(value), indent=2, allow_nan=False)


def _without_nan(value: Any) -> Any:
    """``value`` with NaN as ``None`` and numpy scalars as Python ones: strict JSON."""
    if isinstance(value, Mapping):
        return {str(k): _without_nan(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_nan(v) for v in value]
    if isinstance(value, (np.floating, np.integer)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


AUDIT_EXPLANATION = (
    "A forget value can flatter a method that only hides the data. Two audits perturb each "
    "model and score it again on the same queries, with the same samples and null keys. "
    "*Relearning* fine-tunes it for a few steps on a small slice of the forget set: knowledge "
    "that unlearning only suppressed comes back (relearning attacks: Hu et al., ICLR 2025; "
    "Lynch et al., 2024). *Quantization* stores its weights in 8 or 4 bits: unlearning that "
    "moved the weights by less than a rounding step is undone (Zhang et al., ICLR 2025: 21 % "
    "of the forget set's knowledge retained at full precision, 83 % after 4-bit "
    "quantization). The yardstick is the retrained model put through the same audit: it never "
    "saw the forget set, so what it reads after relearning comes from the slice alone. "
    "*Excess* is a model's forget value after the audit minus the retrained model's after the "
    "same audit; above 0, the audit brought back more than learning the slice from scratch."
)


def audit_section(audits: AuditResults) -> list[str]:
    """The audits in words, a forget table (value before and after each audit, excess over the
    retrained model, intervals where computed), a retain table and the settings."""
    names = audits.audits()
    settings = audits.settings
    lines = [AUDIT_EXPLANATION, ""]
    header = ["model", "forget before"]
    for audit in names:
        header += [f"forget {AUDIT_TITLES.get(audit, audit)}"]
        if audits.retrained:
            header += ["excess"]
    rows = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for model, entries in audits.models.items():
        row = [model, _set_cell(entries.get(BEFORE), "forget")]
        for audit in names:
            row.append(_set_cell(entries.get(audit), "forget"))
            if audits.retrained:
                excess = audits.excess(model, audit)
                row.append(
                    "(yardstick)"
                    if model == audits.retrained
                    else "–"
                    if excess is None
                    else f"{excess:+.3f}"
                )
        rows.append("| " + " | ".join(row) + " |")
    lines += rows + ["", "Retain values before and after the same audits:", ""]
    header = ["model", "retain before", *(f"retain {AUDIT_TITLES.get(a, a)}" for a in names)]
    rows = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for model, entries in audits.models.items():
        cells = [_set_cell(entries.get(a), "retain") for a in [BEFORE, *names]]
        rows.append("| " + " | ".join([model, *cells]) + " |")
    lines += rows + [""]
    if "relearned" in names:
        lines.append(
            f"Relearning: {settings.get('relearn_steps')} steps at learning rate "
            f"{settings.get('relearn_learning_rate')} (batch {settings.get('relearn_batch_size')}) "
            f"on {_count(settings.get('relearn_texts', 0), 'text')} of the forget set (the first "
            f"{settings.get('relearn_share', 0):.0%})."
        )
    for audit, check in (settings.get("quantization_checks") or {}).items():
        lines.append(
            f"{AUDIT_TITLES.get(audit, audit).capitalize()} (torchao): "
            f"{check['quantized_layers']} of {check['linear_layers']} Linear layers quantized, at "
            f"most {check['levels']} distinct stored values per layer, their weights "
            f"{check['weight_bytes_before'] / 1e6:.2f} MB -> {check['weight_bytes_after'] / 1e6:.2f} MB."
        )
    return lines


def _set_cell(result: WaterDrumResult | None, name: str) -> str:
    """A set's value, with its confidence interval where one was computed."""
    value = getattr(result, name, None) if result is not None else None
    if value is None:
        return "–"
    if value.ci_low is None or value.ci_high is None:
        return f"{value.value:+.3f}"
    return f"{value.value:+.3f} {_interval(value.ci_low, value.ci_high, '+.3f')}"


def plot_audits(audits: AuditResults | Mapping[str, Any], path: str | Path) -> Path:
    """One panel per audit: each model's forget value before (hollow) and after (filled),
    joined by an arrow, intervals as error bars where computed; the retrained model's value
    after the same audit is the dashed line to beat."""
    audits = typed_audits({"audits": audits})
    names = audits.audits()
    models = list(audits.models)
    fig, axes = new_figure(max(4.0, 0.55 * len(models) + 2.0) * len(names), 4.0, ncols=len(names))
    for ax, audit in zip(np.atleast_1d(axes), names, strict=True):
        for x, model in enumerate(models):
            color = model_color(model)
            for which, filled in ((BEFORE, False), (audit, True)):
                result = audits.models[model].get(which)
                if result is None or result.forget is None:
                    continue
                offset = 0.12 if filled else -0.12
                ax.errorbar(
                    x + offset,
                    result.forget.value,
                    yerr=_error(result.forget),
                    fmt="o",
                    color=color,
                    markerfacecolor=color if filled else "white",
                    capsize=2,
                )
            before, after = audits.forget(model, BEFORE), audits.forget(model, audit)
            if before is not None and after is not None:
                ax.annotate(
                    "",
                    (x + 0.12, after),
                    (x - 0.12, before),
                    arrowprops={"arrowstyle": "->", "color": color, "lw": 0.8},
                )
        line = audits.forget(audits.retrained, audit) if audits.retrained else None
        if line is not None:
            ax.axhline(
                line,
                color=model_color("retrained"),
                linestyle="--",
                linewidth=1.0,
                label=f"retrained {AUDIT_TITLES.get(audit, audit)}",
            )
            ax.legend(fontsize=7, loc="upper left")
        ax.axhline(0, color="black", linewidth=0.5)
        ax.set_xticks(range(len(models)))
        ax.set_xticklabels(models, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("forget WaterDrum value")
        ax.set_title(f"Forget value {AUDIT_TITLES.get(audit, audit)}")
    return save_figure(fig, path)
