"""Where WaterDrum values were measured, as the Hub records them (:class:`HubResultsConfig`):
what :mod:`waterdrum_hf.hub_results.publish` writes into a model card, and what the callback's
:class:`~waterdrum_hf.CallbackPlan` takes to write one at the end of training."""

from __future__ import annotations

from dataclasses import dataclass

from waterdrum_hf.data.hub import WATERDRUM_AX, WATERDRUM_TOFU
from waterdrum_hf.utils.fields import flag

BENCHMARKS = (WATERDRUM_AX, WATERDRUM_TOFU)
"""The Hub datasets whose results also go to ``.eval_results/``."""


@dataclass(frozen=True)
class HubResultsConfig:
    """Where the values were measured, as the Hub records it."""

    dataset_id: str = flag(
        help=f"Hub id (or name) of the dataset the queries came from, e.g. {WATERDRUM_TOFU}; "
        f"{' and '.join(BENCHMARKS)} also get .eval_results/ files."
    )
    dataset_config: str | None = flag(None, "The dataset's configuration, e.g. forget_10.")
    dataset_split: str | None = flag(None, "The split the queries came from, e.g. full.")
    dataset_revision: str | None = flag(None, "The dataset's git revision (commit hash).")
    model_name: str | None = flag(
        None, "The model's name in model-index (default: the card's, or the repo's)."
    )
    scheme: str | None = flag(None, "Watermark scheme, recorded as the metric's config.")
    notes: str | None = flag(
        None, "The setup in a few words (samples, tokens, null), for .eval_results/."
    )
    source_url: str | None = flag(None, "Link to the evaluation's logs or report.")

    def __post_init__(self) -> None:
        if not isinstance(self.dataset_id, str) or not self.dataset_id.strip():
            raise ValueError(
                "`dataset_id` must name the dataset the queries came from (e.g. "
                f"{WATERDRUM_TOFU!r}, or a local name)."
            )
        for name in ("dataset_config", "dataset_split", "dataset_revision", "model_name"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(f"`{name}` must be a non-empty string or None.")

    @property
    def benchmark(self) -> bool:
        """Whether the values also go to ``.eval_results/`` (a published benchmark and a
        config to name the task by)."""
        known = {b.lower() for b in BENCHMARKS}
        return self.dataset_id.lower() in known and self.dataset_config is not None
