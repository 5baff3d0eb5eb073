"""``report.md``'s verdict: the method closest to retraining and whether that is close enough,
and whether the forgotten owners' watermark is still detected in each model."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from waterdrum_hf.report.findings import (
    DETECTION_LEVEL,
    detected,
    forgotten_owners,
    holm_null_keys_needed,
    p_value_floor,
)
from waterdrum_hf.report.formatting import count_phrase, join_names
from waterdrum_hf.scoring import OwnerValue, SetValue, WaterDrumResult
from waterdrum_hf.scoring.seed_comparison import (
    MIN_SEPARATING_RUNS,
    SeedComparison,
    compare_seeds,
)

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

_HOLM_NOTE = (
    " Owner by owner, each forgotten owner's p-value is Holm-adjusted over the model's "
    "forgotten owners: some owner whose watermark is gone still reads detected at most "
    f"{DETECTION_LEVEL:.0%} of the time (the family-wise error), whatever the dependence between "
    "owners, who share the model and the null keys. Unadjusted, with 20 such owners some owner "
    "would read detected in about 64% of models (1 - 0.95^20)."
)
"""The owner-by-owner verdict's explanation (Holm, family-wise error)."""


def verdict(
    models: Mapping[str, WaterDrumResult],
    settings: Mapping[str, Any],
    comparison: SeedComparison | None = None,
) -> list[str]:
    """Which method came closest to retraining over the training runs of ``comparison``
    (default: ``models`` as one run), whether that is close enough, and whether the forgotten
    owners' watermark is still detected in each model (of the first run)."""
    lines = []
    whose = "forgotten owners'" if len(forgotten_owners(models)) != 1 else "forgotten owner's"
    if "original" in models and "retrained" in models:  # a benchmark
        if comparison is None:
            comparison = compare_seeds({name: [m] for name, m in models.items()})
        lines += _benchmark_verdict(models, comparison, whose)
    floor = p_value_floor(settings)
    on_floor = {
        name
        for name, m in models.items()
        if floor is not None
        and m.forget is not None
        and m.forget.p_value is not None
        and math.isclose(m.forget.p_value, floor)
    }
    null_keys = settings["null_keys"] if floor is not None else None
    detection = [
        _detection_line(
            name, m, whose, floor_mark="*" if name in on_floor else "", null_keys=null_keys
        )
        for name, m in models.items()
        if detected(m.forget) is not None
    ]
    if detection:
        holm = any(_holm_adjusted(_forget_family(m)) for m in models.values())
        runs = 1 if comparison is None else comparison.num_seeds()
        if runs > 1:
            lines += [f"Still detected? In the first of the {runs} training runs:", ""]
        lines += [
            *detection,
            "",
            _P_VALUE_NOTES[settings.get("null") == "analytic"]
            + f"; detected means p ≤ {DETECTION_LEVEL}."
            + (_HOLM_NOTE if holm else ""),
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


def _benchmark_verdict(
    models: Mapping[str, WaterDrumResult], comparison: SeedComparison, whose: str
) -> list[str]:
    """The closest method to retraining (or the methods that tie) and whether it is close
    enough; the methods that hid the forgotten owners' watermark and what they kept of the
    retain value."""
    retrained = models["retrained"]
    lines = []
    closest = comparison.closest
    # a comparison passed in may rank a method this report holds no model for
    best = closest.names[0] if closest is not None and closest.names[0] in models else None
    if closest is not None and best is not None:
        name = best
        forget = models[name].forget
        line = closest_line(comparison)
        in_run = f" in the first of the {closest.num_seeds} runs" if closest.num_seeds > 1 else ""
        if forget is not None and detected(forget):
            line += (
                f" Closest is not close enough: the {whose} watermark is **still "
                f"detected** in its answers{in_run} (forget {forget.value:+.3f} against a null level "
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
                f" Like the retrained model's, its answers{in_run} no longer show the {whose} "
                f"watermark (p = {forget.p_value:.3f}){_still_owners_phrase(models[name])}"
                f"{_kept_phrase(models[name], models)}."
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
    runs = comparison.num_seeds()
    first = f" in the first of the {runs} runs" if runs > 1 else ""  # what detection reads
    if methods and not gone:
        lines += [
            f"No unlearning method removed the {whose} watermark at these settings: it "
            f"is still detected in every unlearned model{first}.",
            "",
        ]
    for name in gone:
        if name != best:  # the closest one has its line above
            lines += [
                f"The {whose} watermark is no longer detected in `{name}`'s answers{first} "
                f"(p = {methods[name].p_value:.3f}){_still_owners_phrase(models[name])}"
                f"{_kept_phrase(models[name], models)}.",
                "",
            ]
    if best is not None and detected(models[best].forget):
        lines += [
            "In short, no method matched retraining here: even the closest one still shows the "
            f"{whose} watermark{first}.",
            "",
        ]
    return lines


def closest_line(comparison: SeedComparison) -> str:
    """The verdict's first line: the method closest to retraining when the runs separate it
    from every other, the methods that tie otherwise, and how many runs it rests on."""
    closest = comparison.closest
    assert closest is not None  # only a comparison with distances has a verdict
    distances = comparison.distances
    name, runs = closest.names[0], closest.num_seeds
    plane = "to the retrained model in the (forget, retain) plane"
    if runs == 1:
        return (
            f"**Closest to retraining (1 run):** `{name}` (distance "
            f"{distances[name].value:.3f} {plane}). One run cannot say whether a rerun would "
            "name the same method: compare several training runs (the demo's `--num-seeds`, "
            "`waterdrum compare`)."
        )
    level = f"{100 * comparison.confidence:g}%"
    plane = f"of the mean points over {runs} runs {plane}, the runs' noise taken out"
    if closest.winner is not None:
        d = distances[name]
        return (
            f"**Closest to retraining:** `{name}` (distance {d.value:.3f}, {level} interval "
            f"[{d.ci_low:.3f}, {d.ci_high:.3f}], {plane}); every other method's squared "
            f"distance exceeds its own by more than the runs' {level} interval."
        )
    tied = ", ".join(f"`{m}` {distances[m].value:.3f}" for m in closest.names)
    names = join_names([f"`{m}`" for m in closest.names])
    if runs < MIN_SEPARATING_RUNS:
        return (
            f"**Closest to retraining: {runs} runs cannot tell** between {names} (distance "
            f"{plane}: {tied}). A distance's interval needs {MIN_SEPARATING_RUNS} runs or "
            "more (the demo's `--num-seeds`)."
        )
    return (
        f"**Closest to retraining: a tie** between {names} (distance {plane}: {tied}). The "
        f"runs cannot tell them apart: the {level} interval of each one's squared distance "
        f"minus `{name}`'s includes 0."
    )


def _detection_line(
    name: str, model: WaterDrumResult, whose: str, *, floor_mark: str, null_keys: int | None
) -> str:
    """Whether the forgotten owners' watermark is still detected in a model, and owner by owner
    (:func:`_owner_phrase`; ``null_keys``: the empirical null's, ``None`` for the analytic)."""
    forget = model.forget
    assert forget is not None  # only models whose forget set has a p-value get a line
    pooled = ", pooled over the set," if _still_owners_phrase(model) else ""
    line = (
        f"- `{name}`: the {whose} watermark{pooled} is "
        + ("**still detected**" if detected(forget) else "not detected")
        + f" (z = {_z(forget)}, p = {forget.p_value:.3f}{floor_mark})"
    )
    return line + _owner_phrase(model, null_keys) + "."


def _forget_family(model: WaterDrumResult) -> dict[str, OwnerValue]:
    """The forgotten owners with a p-value: the family their p-values are adjusted over."""
    return {
        o: e for o, e in (model.per_owner or {}).items() if e.forget and detected(e) is not None
    }


def _holm_adjusted(owners: Mapping[str, OwnerValue]) -> bool:
    """Whether several owners have Holm-adjusted p-values (results saved before have none)."""
    return len(owners) > 1 and all(e.adjusted_p_value is not None for e in owners.values())


def _owner_phrase(model: WaterDrumResult, null_keys: int | None) -> str:
    """``; owner by owner (...): ...`` where there are several forgotten owners and the set or
    some owner is detected: which owners are, by Holm-adjusted p-values; or that no owner can
    be, when ``null_keys`` (the empirical null's) are too few for Holm's first step."""
    owners = _forget_family(model)
    if len(owners) < 2:
        return ""
    how = "unadjusted p-values: a result saved before the Holm adjustment"
    if _holm_adjusted(owners):
        needed = holm_null_keys_needed(len(owners), null_keys)
        if needed is not None:
            return (
                f"; owner by owner it cannot be detected with {null_keys} null keys: Holm over "
                f"the {len(owners)} forgotten owners needs p ≤ {DETECTION_LEVEL} / {len(owners)}"
                f" at its first step, below the smallest p-value 1 / (1 + {null_keys}), so it "
                f"needs at least {needed} keys"
            )
        how = f"Holm-adjusted p-values over the {len(owners)} forgotten owners"
    still = [o for o, e in owners.items() if detected(e)]
    if not still and not detected(model.forget):
        return ""
    if not still:
        return f"; owner by owner ({how}): detected for none of them on its own"
    phrase = f"; owner by owner ({how}): still detected for {join_names(still)}"
    if len(still) < len(owners):
        phrase += f", gone for {join_names([o for o in owners if o not in still])}"
    return phrase


def _still_owners_phrase(model: WaterDrumResult) -> str:
    """Where the set's pooled watermark is gone but some forgotten owner's alone still reads
    detected (Holm-adjusted): ``, pooled over the set; owner-6's alone still is (...)``, so
    that the set's verdict and the owners' cannot read as a contradiction."""
    owners = _forget_family(model)
    if not _holm_adjusted(owners):
        return ""
    still = [o for o, e in owners.items() if detected(e)]
    if not still:
        return ""
    alone = f"{join_names(still)}'s alone still {'is' if len(still) == 1 else 'are'}"
    return f", pooled over the set; {alone} (Holm-adjusted over the {len(owners)} forgotten owners)"


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
