"""What the audits found: each model's WaterDrum result before and after each audit.

Typed inside (:class:`AuditResults`), flat at the edges: :meth:`AuditResults.scalars` is a flat
dict of scalars (``trainer.log``, W&B and JSON take it as it is) and :meth:`AuditResults.to_dict`
the JSON-able whole that ``report.json`` holds under ``"audits"`` and ``audits.json`` holds
alone (:func:`waterdrum_hf.report.write_report` writes both; read back with
:meth:`AuditResults.from_dict`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from waterdrum_hf.scoring import WaterDrumResult

BEFORE = "before"
"""The unperturbed model's entry in each model's results."""

AUDIT_TITLES: Mapping[str, str] = {
    "relearned": "after relearning",
    "int8": "8-bit weights",
    "int4": "4-bit weights",
}
"""How the report names each perturbed model."""


def audit_title(audit: str) -> str:
    """How the report names an audit: :data:`AUDIT_TITLES`, or ``under NAME:STRENGTH`` for a
    text attack (named by its spec)."""
    return AUDIT_TITLES.get(audit, f"under {audit}")


@dataclass(frozen=True)
class AuditResults:
    """Each audited model's results by perturbation, and the settings that produced them.

    Attributes:
        models: ``{model: {"before": result, "relearned": result, "int8": ..., "int4": ...,
            "deletion:0.2": ...}}`` (the perturbations that were run; a text attack by its
            ``NAME:STRENGTH``).
        retrained: the model every other is compared with (``None``: no comparison).
        settings: the audits' settings (:class:`~waterdrum_hf.audits.AuditConfig`), the size of
            the relearning slice and what each quantization changed (no keys, no texts).
    """

    models: dict[str, dict[str, WaterDrumResult]]
    retrained: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    def audits(self) -> list[str]:
        """The perturbations run, in order (``before`` excluded)."""
        names = dict.fromkeys(a for entries in self.models.values() for a in entries)
        return [a for a in names if a != BEFORE]

    def forget(self, model: str, audit: str) -> float | None:
        """``model``'s forget value after ``audit`` (``"before"``: unperturbed)."""
        result = self.models.get(model, {}).get(audit)
        return result.forget.value if result is not None and result.forget else None

    def excess(self, model: str, audit: str) -> float | None:
        """How much higher ``model``'s forget value is after ``audit`` than the retrained
        model's after the same audit: what the audit brought back beyond what the perturbation
        gives a model that never saw the forget set (``None`` without a retrained model)."""
        mine = self.forget(model, audit)
        reference = self.forget(self.retrained, audit) if self.retrained else None
        if mine is None or reference is None:
            return None
        return mine - reference

    def scalars(self) -> dict[str, float]:
        """Flat scalars: ``<audit>/<model>/<key>`` for every scalar of every result (``before``
        included), and ``<audit>/<model>/forget_excess`` (:meth:`excess`)."""
        flat: dict[str, float] = {}
        for model, entries in self.models.items():
            for audit, result in entries.items():
                flat.update({f"{audit}/{model}/{k}": v for k, v in result.scalars().items()})
                excess = self.excess(model, audit)
                if excess is not None and model != self.retrained:
                    flat[f"{audit}/{model}/forget_excess"] = excess
        return flat

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: settings, the retrained model's name, each result's flat dict."""
        return {
            "settings": self.settings,
            "retrained": self.retrained,
            "models": {
                model: {audit: result.to_dict() for audit, result in entries.items()}
                for model, entries in self.models.items()
            },
        }

    @classmethod
    def from_dict(cls, saved: Mapping[str, Any]) -> AuditResults:
        """The results back from :meth:`to_dict` (or from ``report.json``'s ``"audits"``)."""
        return cls(
            models={
                model: {
                    audit: r if isinstance(r, WaterDrumResult) else WaterDrumResult.from_dict(r)
                    for audit, r in entries.items()
                }
                for model, entries in saved["models"].items()
            },
            retrained=saved.get("retrained"),
            settings=dict(saved.get("settings") or {}),
        )
