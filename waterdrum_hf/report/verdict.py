"""``report.md``'s verdict: the method closest to retraining and whether that is close enough,
and whether the forgotten owners' watermark is still detected in each model."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from waterdrum_hf.metric import SetValue, WaterDrumResult
from waterdrum_hf.report.findings import (
    DETECTION_LEVEL,
    closest_to_retrained,
    detected,
    forgotten_owners,
    p_value_floor,
)
from waterdrum_hf.report.formatting import count_phrase, join_names

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


def verdict(models: Mapping[str, WaterDrumResult], settings: Mapping[str, Any]) -> list[str]:
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
        line += f"; owner by owner: still detected for {join_names(still)}"
        if len(still) < len(owners):
            line += f", gone for {join_names([o for o in owners if o not in still])}"
    return line + "."


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
