"""``report.md``'s words: what was done, the verdict, the results table, what the numbers mean,
the methods and settings, the plots' captions."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from waterdrum_hf.metric import SetValue, WaterDrumResult
from waterdrum_hf.report.audit_section import audit_section
from waterdrum_hf.report.findings import (
    DETECTION_LEVEL,
    closest_to_retrained,
    detected,
    forgotten_owners,
    interval_level,
    p_value_floor,
    typed,
    typed_audits,
)
from waterdrum_hf.report.formatting import count_phrase, format_interval

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
        and m.forget is not None
        and m.forget.p_value is not None
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
            f"1 / (1 + {null_keys}): {count_phrase(count, 'model')} {'sit' if count > 1 else 'sits'} "
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
        if forget is not None and detected(forget):
            line += (
                f" Closest is not close enough: the {whose} watermark is **still "
                f"detected** in its answers (forget {forget.value:+.3f} against a null level "
                f"of {forget.null_mean:+.3f} ± {forget.null_std:.3f}, z = {_z(forget)})"
            )
            retrained_forget = retrained.forget
            if retrained_forget is not None and detected(retrained_forget) is False:
                line += (
                    f", where the retrained model's is not (forget {retrained_forget.value:+.3f}, "
                    f"p = {retrained_forget.p_value:.3f})"
                )
            line += "."
        elif forget is not None and detected(forget) is False:
            line += (
                f" Like the retrained model's, its answers no longer show the {whose} "
                f"watermark (p = {forget.p_value:.3f}){_kept_phrase(models[name], models)}."
            )
        lines += [line, ""]
    methods = {
        name: m.forget
        for name, m in models.items()
        if name not in ("original", "retrained")
        and m.forget is not None
        and detected(m.forget) is not None
    }
    gone = [name for name, forget in methods.items() if not detected(forget)]
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
                f"(p = {methods[name].p_value:.3f}){_kept_phrase(models[name], models)}.",
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
    assert forget is not None  # only models whose forget set has a p-value get a line
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
