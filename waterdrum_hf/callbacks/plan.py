"""What :class:`~waterdrum_hf.WaterDrumCallback` does during a run: its plan
(:class:`CallbackPlan`: when it evaluates, stops, saves and writes the model card), the query
sets it samples from (checked, subsampled per owner), and the stopping rule."""

from __future__ import annotations

import logging
import math
import numbers
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from waterdrum_hf.generation.sampling import SamplingConfig
from waterdrum_hf.hub_results.config import HubResultsConfig
from waterdrum_hf.keys import check_watermark_ids
from waterdrum_hf.scoring.results import WaterDrumResult
from waterdrum_hf.utils.validation import check_positive_int, check_string_list

logger = logging.getLogger(__name__)

BOUNDS = {"max": operator.le, "min": operator.ge}
RATIO_SETS = ("forget", "retain")
"""Sets whose value is also logged as ``<set>_ratio``, a share of its step-0 value."""
OWNER_PREFIX = "owner/"
"""Each owner's value is logged as ``owner/<display name>``."""

StopRule = Callable[[Mapping[str, float]], bool] | Mapping[str, float]
"""A stopping rule: a callable on the logged values, or a dict of bounds."""


@dataclass(frozen=True)
class CallbackPlan:
    """What :class:`WaterDrumCallback` does during a run: when it evaluates and on how many
    queries, when it stops the run, whether it saves the model then, and the model card.

    Args:
        eval_steps: evaluate every this many optimizer steps (and at step 0 and the end).
        max_queries_per_owner: evaluate at most this many queries per owner (drawn once, with
            the sampling seed), to bound the cost; ``None``: all.
        stop_when: stop training when this holds: a callable taking the logged values
            (without the prefix) and returning a bool, or a dict of bounds such as
            ``{"max_forget_ratio": 0.05, "min_retain_ratio": 0.8}`` (all must hold; a value
            equal to its bound holds). ``None``: never stop.
        save_on_stop: when ``stop_when`` first holds, save the model to
            ``<output_dir>/waterdrum-stop-step-<step>`` (the best checkpoint by the rule).
        model_card: at the end of training, write the last values in the Hub's formats into
            ``<output_dir>`` (its ``README.md``'s ``model-index``, and ``.eval_results/`` for
            the published benchmarks: :func:`~waterdrum_hf.hub_results.publish.write_hub_results`);
            a :class:`~waterdrum_hf.hub_results.publish.HubResultsConfig` naming the dataset.
    """

    eval_steps: int = 50
    max_queries_per_owner: int | None = None
    stop_when: StopRule | None = None
    save_on_stop: bool = False
    model_card: HubResultsConfig | None = None

    def __post_init__(self) -> None:
        check_positive_int(self.eval_steps, "eval_steps")
        if self.max_queries_per_owner is not None:
            check_positive_int(self.max_queries_per_owner, "max_queries_per_owner")
        if self.save_on_stop and self.stop_when is None:
            raise ValueError("`save_on_stop` saves when `stop_when` holds: pass a stop_when rule.")


def query_set(
    queries: Sequence[str], ids: Sequence[int], name: str
) -> tuple[list[str], np.ndarray]:
    queries = check_string_list(queries, f"{name}_queries")
    if not queries:
        raise ValueError(f"`{name}_queries` is empty: pass at least one query per set.")
    if isinstance(ids, (str, bytes)) or not hasattr(ids, "__len__"):
        raise TypeError(f"`{name}_ids` must be a list with one watermark id per query.")
    if len(ids) != len(queries):
        raise ValueError(
            f"`{name}_ids` has {len(ids)} entries but there are {len(queries)} {name} queries: "
            "pass one owner id per query."
        )
    return queries, check_watermark_ids(list(ids), len(queries), f"{name}_ids")


def dataset_queries(
    dataset: Any,
    tokenizer: Any,
    *,
    text_column: str,
    question_column: str,
    id_column: str,
    prefix_tokens: int,
) -> tuple[list[str], list[int]]:
    """``(queries, watermark ids)`` of a dataset with an owner column: its rows' queries
    (:func:`waterdrum_hf.generation.prompting.row_queries`, under the evaluated model's ``tokenizer``)."""
    from waterdrum_hf.generation.prompting import row_queries

    columns = dataset.column_names
    if id_column not in columns:
        raise ValueError(f"id_column {id_column!r} is not a column (columns: {columns}).")
    queries = row_queries(
        dataset, tokenizer, text_column=text_column, question_column=question_column,
        prefix_tokens=prefix_tokens,
    )  # fmt: skip
    watermark_ids = check_watermark_ids(list(dataset[id_column]), len(dataset), id_column)
    return queries, watermark_ids.tolist()


def subsample(
    queries: list[str], ids: np.ndarray, limit: int, seed: int
) -> tuple[list[str], np.ndarray]:
    """At most ``limit`` queries per owner, drawn once with ``seed``, in their original order."""
    rng = np.random.default_rng(seed)
    keep = np.zeros(len(ids), dtype=bool)
    for owner in np.unique(ids):
        rows = np.flatnonzero(ids == owner)
        keep[rng.permutation(rows)[:limit]] = True
    return [q for q, k in zip(queries, keep, strict=True) if k], ids[keep]


def logged_names(owner_names: Sequence[str]) -> frozenset[str]:
    """Every value the callback can log (without the prefix) that a stopping rule may bound:
    the metric's scalars, the ratios and each owner's value."""
    return frozenset(
        [*WaterDrumResult.scalar_names(), *(f"{s}_ratio" for s in RATIO_SETS)]
        + [OWNER_PREFIX + name for name in owner_names]
    )


def stop_rule(
    rule: StopRule | None, owner_names: Sequence[str]
) -> Callable[[Mapping[str, float]], tuple[bool, str]] | None:
    """The stopping rule as a function of the values returning ``(holds, why)``; a dict's
    keys must bound values that are logged (``owner/<name>`` for the owners named here)."""
    if rule is None:
        return None
    if callable(rule):
        return lambda values: (
            bool(rule(values)),
            f"stop_when held ({getattr(rule, '__name__', 'rule')})",
        )
    if not isinstance(rule, Mapping) or not rule:
        raise TypeError(
            "`stop_when` must be a callable or a dict of bounds such as "
            "{'max_forget_ratio': 0.05, 'min_retain_ratio': 0.8}."
        )
    bounds: list[tuple[str, str, float]] = []
    logged = logged_names(owner_names)
    for key, limit in rule.items():
        kind, _, metric = str(key).partition("_")
        if kind not in BOUNDS or not metric:
            raise ValueError(f"`stop_when` key {key!r} must be 'max_<value>' or 'min_<value>'.")
        if metric not in logged:
            raise ValueError(
                f"`stop_when` key {key!r}: {metric!r} is not a value the callback logs (e.g. "
                "forget, retain, forget_ratio, retain_ratio, separability_auroc, forget_p_value, "
                f"{OWNER_PREFIX}<owner name>)."
            )
        if (
            isinstance(limit, bool)
            or not isinstance(limit, numbers.Real)
            or not math.isfinite(limit)
        ):
            raise ValueError(f"`stop_when[{key!r}]` must be a finite number, got {limit!r}.")
        bounds.append((metric, kind, float(limit)))

    missing: set[str] = set()

    def check(values: Mapping[str, float]) -> tuple[bool, str]:
        parts = []
        for metric, kind, limit in bounds:
            value = values.get(metric)
            if value is None and metric not in missing:
                missing.add(metric)  # e.g. a ratio whose step-0 value was <= 0
                logger.warning(
                    "WaterDrumCallback: stop_when needs %r, which was not logged.", metric
                )
            if value is None or not BOUNDS[kind](value, limit):
                return False, ""
            parts.append(f"{metric} {value:.3f} {'<=' if kind == 'max' else '>='} {limit:g}")
        return True, " and ".join(parts)

    return check


CALLBACK_SAMPLING = SamplingConfig(num_samples=2, max_new_tokens=64, seed=0)
"""The callback's sampling by default: 2 samples of 64 tokens per query, seed 0 (the same at
every evaluation, so curves move with the model, not with the sampling noise)."""
