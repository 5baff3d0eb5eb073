"""The per-owner table that ``waterdrum score`` and ``waterdrum verify`` print: each owner's value,
p-value and verdict. An owner's verdict reads its p-value Holm-adjusted over the owners of its
set, so that among owners whose watermark is absent some owner reads detected by chance at most
5 % of the time, not about one owner in 20."""

from __future__ import annotations

from waterdrum_hf.config import NullConfig
from waterdrum_hf.report.findings import DETECTION_LEVEL, detected, holm_null_keys_needed
from waterdrum_hf.report.formatting import count_phrase
from waterdrum_hf.scoring import OwnerValue, WaterDrumResult

MAX_OWNERS = 20
"""Owners listed at most; every owner is in the full result (report.json, ``--output-file``)."""

_SETS = {True: "forget", False: "retain", None: "overall"}
"""An owner's set (its family for Holm) by its ``forget`` flag."""


def owner_table(result: WaterDrumResult, null: NullConfig | None) -> list[str]:
    """The owners' table (the first :data:`MAX_OWNERS`), then per set how many owners read
    detected, or that none can with too few empirical null keys."""
    owners = result.per_owner or {}
    if not owners:
        return []
    lines = [""]
    null_keys = null.keys if null is not None and null.method == "empirical" else None
    families = _families(owners)
    short = {
        forget: needed
        for forget, tested in families.items()
        if (needed := holm_null_keys_needed(len(tested), null_keys)) is not None
    }
    lines.append(f"{'owner':<12} {'set':<7} {'value':>8} {'p':>7} {'Holm p':>7}  verdict")
    for name, owner in list(owners.items())[:MAX_OWNERS]:
        lines.append(_owner_row(name, owner, too_few_keys=owner.forget in short))
    if len(owners) > MAX_OWNERS:
        lines.append(
            f"... {count_phrase(len(owners) - MAX_OWNERS, 'more owner')} (all in the full result)"
        )
    for forget, tested in families.items():
        label, m = _SETS[forget], len(tested)
        if forget in short:
            lines.append(
                f"{label} owners: none can read detected with {null_keys} null keys (Holm over "
                f"{m} owners needs p <= {DETECTION_LEVEL} / {m}, below 1 / (1 + {null_keys})): "
                f"use --null-keys {short[forget]} or more"
            )
        else:
            lines.append(
                f"{label} owners detected: {sum(bool(detected(o)) for o in tested)} of {m} "
                f"(Holm-adjusted p <= {DETECTION_LEVEL} over the set's owners: family-wise "
                f"error at most {DETECTION_LEVEL})"
            )
    return lines


def _families(owners: dict[str, OwnerValue]) -> dict[bool | None, list[OwnerValue]]:
    """The tested owners (those with a Holm-adjusted p-value) of each set that has some."""
    families: dict[bool | None, list[OwnerValue]] = {}
    for owner in owners.values():
        if owner.adjusted_p_value is not None:
            families.setdefault(owner.forget, []).append(owner)
    return families


def _owner_row(name: str, owner: OwnerValue, *, too_few_keys: bool) -> str:
    """One owner's row: set, value, p-value, Holm-adjusted p-value and verdict (none where
    its set has ``too_few_keys`` for Holm to declare any owner detected)."""
    value = "n/a" if owner.value is None else f"{owner.value:+.4f}"
    p_value, adjusted = (
        "-" if p is None else f"{p:.4f}" for p in (owner.p_value, owner.adjusted_p_value)
    )
    verdict = {True: "detected", False: "not detected", None: "-"}[detected(owner)]
    if too_few_keys:
        verdict = "cannot tell: too few null keys"
    return f"{name:<12} {_SETS[owner.forget]:<7} {value:>8} {p_value:>7} {adjusted:>7}  {verdict}"
