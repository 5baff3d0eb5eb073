"""Values that hold on a rerun: each model's value over several training runs (seeds), with an
interval that covers the run-to-run spread, differences between models, and which unlearning
method is closest to retraining when the runs can tell.

A WaterDrum value moves with the training run (seed, and the floating point of the machine,
which fine-tuning and unlearning amplify) far more than with the sampling of queries: on two
machines the demo's values moved by three times their query intervals. So a value that decides
a comparison is the mean over ``S`` runs, each run one :class:`~waterdrum_hf.WaterDrumResult`.

The interval is Student's t over the runs' values, ``mean ± t(S-1) · sd / √S``: each run's
value already carries its own query sampling (its queries were sampled and scored anew), so
the spread of the run values holds both levels, seed and query, and t makes the interval exact
for normal run values whatever ``S`` (the "ultimate cluster" estimator of two-stage sampling).
A two-level bootstrap (runs, then queries within each) was measured instead and covers too
little with few runs: with 3 runs it resamples from 3 values, whose spread underestimates the
runs' by ``(S - 1) / S`` and whose percentiles have no tails
(``benchmarks/results/seed_interval_coverage/results.md``).

Differences are paired by run where every model has the same runs (the ``i``-th result of
each model comes from the same seed: the unlearning methods start from that seed's original
model and answer the same queries), which cancels what the models' runs share; otherwise Welch's
unpaired interval. With one run nothing covers a rerun: the value keeps its query interval,
marked as such, and no difference is called. Intervals are cut to the range the quantity can
take (a set value lies in [-1, 1], Waterfall's score being a cosine): with 2 runs t's interval
is 12.7 standard errors wide, and the true mean cannot lie outside the range.

A method's distance to retraining is the distance between its mean (forget, retain) point and
the retrained model's, estimated without the runs' noise: the mean of per-run distances, or the
distance of the mean points, grows with the run-to-run spread (a method whose mean point is the
retrained model's reads 0.088 at a spread of 0.07 per coordinate), so ranking by it rewards low
variance rather than location. The squared distance ``|mean offset|**2 - tr(cov)/S`` (per-run
offsets from the retrained run, ``tr(cov)/S`` their noise) is unbiased for the squared distance
of the means; its interval, and that of one method's minus another's (which decides a tie), is
the jackknife's over runs with Student's t (3 runs or more: with 2 the runs cannot tell).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats

from waterdrum_hf.bootstrap import check_confidence
from waterdrum_hf.scoring import WaterDrumResult

SETS = ("forget", "retain", "overall")
VALUE_RANGE = (-1.0, 1.0)
"""The range of a set value (a mean of Waterfall scores, each a cosine)."""
MIN_SEPARATING_RUNS = 3
"""The fewest runs that give a distance an interval (the jackknife leaves one run out of at
least 2)."""


@dataclass(frozen=True)
class SeedValue:
    """A mean over runs and its interval.

    Attributes:
        value: the mean over the runs.
        ci_low, ci_high: the interval (``None`` where there is none: one run without a query
            interval, or a difference of one run).
        num_seeds: the runs it rests on.
        std: standard deviation of the run values (``None`` with one run).
        interval_over: ``"seeds"`` (t over runs: covers a rerun), ``"queries"`` (one run's
            bootstrap over queries: says nothing of a rerun) or ``None``.
    """

    value: float
    ci_low: float | None
    ci_high: float | None
    num_seeds: int
    std: float | None = None
    interval_over: Literal["seeds", "queries"] | None = None

    def excludes_zero(self) -> bool:
        """Whether the interval over runs lies wholly above or below 0."""
        if self.interval_over != "seeds" or self.ci_low is None or self.ci_high is None:
            return False
        return self.ci_low > 0 or self.ci_high < 0


@dataclass(frozen=True)
class ClosestMethods:
    """Which unlearning methods are closest to retraining in the (forget, retain) plane.

    Attributes:
        names: the closest method by estimated distance first, then every method whose
            squared distance the runs cannot tell apart from its (closest first); with 2 runs,
            which give no interval, every method.
        num_seeds: the runs it rests on.
    """

    names: tuple[str, ...]
    num_seeds: int

    @property
    def winner(self) -> str | None:
        """The one closest method, when the runs separate it from every other; else ``None``."""
        return (
            self.names[0]
            if len(self.names) == 1 and self.num_seeds >= MIN_SEPARATING_RUNS
            else None
        )


@dataclass(frozen=True)
class SeedComparison:
    """What :func:`compare_seeds` returns.

    Attributes:
        confidence: the level of every interval.
        values: each model's set values over its runs, ``values[model][set]``.
        differences: ``differences[(a, b)][set]`` is model ``a``'s value minus ``b``'s, for
            every pair in the order the models came.
        distances: each unlearning method's distance to the reference model in the (forget,
            retain) plane, over runs.
        closest: the methods closest to the reference (``None`` without distances).
        paired: whether differences were paired by run.
    """

    confidence: float
    values: dict[str, dict[str, SeedValue]]
    differences: dict[tuple[str, str], dict[str, SeedValue]]
    distances: dict[str, SeedValue]
    closest: ClosestMethods | None
    paired: bool

    def num_seeds(self) -> int:
        """The most runs any model's values rest on."""
        return max((v.num_seeds for sets in self.values.values() for v in sets.values()), default=0)

    def to_dict(self) -> dict[str, Any]:
        """Flat scalars: ``<model>/<set>``, ``<model>/<set>_ci_low`` and ``_ci_high``,
        ``<model>/num_seeds``, ``<model>/distance`` (with its interval),
        ``<a>-vs-<b>/<set>_difference`` (with its interval), ``closest`` (the tied names
        joined by ``,``) and ``closest_separated``. A value not computed is left out."""
        flat: dict[str, Any] = {"confidence": self.confidence}
        for model, sets in self.values.items():
            for name, value in sets.items():
                flat |= _flat(f"{model}/{name}", value)
                flat[f"{model}/num_seeds"] = value.num_seeds
            if model in self.distances:
                flat |= _flat(f"{model}/distance", self.distances[model])
        for (a, b), sets in self.differences.items():
            for name, value in sets.items():
                flat |= _flat(f"{a}-vs-{b}/{name}_difference", value)
        if self.closest is not None:
            flat["closest"] = ",".join(self.closest.names)
            flat["closest_separated"] = self.closest.winner is not None
        return flat


def _flat(key: str, value: SeedValue) -> dict[str, float]:
    flat = {key: value.value}
    if value.ci_low is not None and value.ci_high is not None:
        flat |= {f"{key}_ci_low": value.ci_low, f"{key}_ci_high": value.ci_high}
    return flat


def seed_interval(
    values: Sequence[float],
    confidence: float = 0.95,
    *,
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> SeedValue:
    """The mean of run values with Student's t interval over runs (none for one run), cut to
    ``bounds``, the range the quantity can take (a distance's starts at 0): with few runs t's
    interval can reach past it, and the true mean cannot lie there."""
    array = _finite(values, "values")
    mean, std = float(array.mean()), _sample_std(array)
    return moments_interval(mean, std, len(array), confidence, bounds=bounds)


def moments_interval(
    mean: float,
    std: float,
    num_seeds: int,
    confidence: float = 0.95,
    *,
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> SeedValue:
    """:func:`seed_interval` from the runs' mean and sample standard deviation (ddof 1) alone,
    as a results file keeps them: Student's t interval over ``num_seeds`` runs, cut to
    ``bounds`` (none for one run)."""
    confidence = check_confidence(confidence)
    if num_seeds < 2:
        return SeedValue(mean, None, None, num_seeds)
    half = _t(confidence, num_seeds - 1) * std / math.sqrt(num_seeds)
    low, high = max(mean - half, bounds[0]), min(mean + half, bounds[1])
    return SeedValue(mean, low, high, num_seeds, std, "seeds")


def difference_interval(
    a: Sequence[float],
    b: Sequence[float],
    confidence: float = 0.95,
    *,
    paired: bool = True,
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> SeedValue:
    """``mean(a) - mean(b)`` with its interval over runs: paired t on ``a[i] - b[i]`` (the
    ``i``-th runs share a seed), or Welch's t for unpaired runs; cut to ``bounds``. No interval
    with one run."""
    x, y = _finite(a, "a"), _finite(b, "b")
    if paired:
        if len(x) != len(y):
            raise ValueError(
                f"Paired differences need the same runs of both models, got {len(x)} and "
                f"{len(y)}: pass paired=False for runs that share no seed."
            )
        return seed_interval(x - y, confidence, bounds=bounds)
    x_moments, y_moments = ((float(v.mean()), _sample_std(v), len(v)) for v in (x, y))
    return welch_interval(x_moments, y_moments, confidence, bounds=bounds)


def welch_interval(
    a: tuple[float, float, int],
    b: tuple[float, float, int],
    confidence: float = 0.95,
    *,
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> SeedValue:
    """``a``'s mean minus ``b``'s with Welch's t interval, from each side's ``(mean, sample
    standard deviation (ddof 1), runs)`` alone, as a results file keeps them; cut to
    ``bounds``. No interval where a side has one run; a side of sd 0 is a fixed number."""
    confidence = check_confidence(confidence)
    value, runs = a[0] - b[0], min(a[2], b[2])
    if runs < 2:
        return SeedValue(value, None, None, runs)
    va, vb = a[1] ** 2 / a[2], b[1] ** 2 / b[2]
    se = math.sqrt(va + vb)
    if se == 0:
        return SeedValue(value, value, value, runs, 0.0, "seeds")
    df = (va + vb) ** 2 / (va**2 / (a[2] - 1) + vb**2 / (b[2] - 1))
    half = _t(confidence, df) * se
    low, high = max(value - half, bounds[0]), min(value + half, bounds[1])
    return SeedValue(value, low, high, runs, None, "seeds")


def compare_seeds(
    runs: Mapping[str, Sequence[WaterDrumResult | Mapping[str, Any]]],
    *,
    confidence: float = 0.95,
    paired: bool = True,
    reference: str = "retrained",
    baseline: str = "original",
) -> SeedComparison:
    """Each model's values over its runs with intervals that cover a rerun, their pairwise
    differences, and which methods are closest to ``reference`` (the retrained model).

    Args:
        runs: each model's results, one per run (``WaterDrumResult`` or its flat dict, e.g. a
            model's entry of ``report.json``); with ``paired``, the ``i``-th result of every
            model comes from the same seed.
        confidence: level of every interval.
        paired: pair differences by run (every model needs the same number of runs).
        reference: the model unlearning should match.
        baseline: the model unlearning starts from. Every model other than these two is an
            unlearning method, ranked by its distance to ``reference`` in the (forget, retain)
            plane.

    A method's distance is that of its mean point from the reference's, estimated without the
    runs' noise (see the module). A method is named closest alone only when the interval of
    every other method's squared distance minus its own lies above 0, which takes 3 runs or
    more; otherwise the methods that tie are named with it.
    """
    confidence = check_confidence(confidence)
    typed = _typed_runs(runs, paired)
    values = {
        model: {
            name: _set_value([getattr(r, name) for r in results], confidence)
            for name in SETS
            if all(getattr(r, name) is not None for r in results)
        }
        for model, results in typed.items()
    }
    models = list(typed)
    differences = {
        (a, b): {
            name: difference_interval(
                _values(typed[a], name),
                _values(typed[b], name),
                confidence,
                paired=paired,
                bounds=(VALUE_RANGE[0] - VALUE_RANGE[1], VALUE_RANGE[1] - VALUE_RANGE[0]),
            )  # fmt: skip
            for name in values[a]
            if name in values[b]  # in the sets' order: no set's hash order reaches the dict
        }
        for i, a in enumerate(models)
        for b in models[i + 1 :]
    }
    points = _points(typed, reference, baseline)
    distances = {
        m: _distance(points[reference], p, confidence, paired)
        for m, p in points.items()
        if m != reference
    }
    closest = _closest(points, reference, confidence, paired) if distances else None
    return SeedComparison(confidence, values, differences, distances, closest, paired)


def _typed_runs(
    runs: Mapping[str, Sequence[WaterDrumResult | Mapping[str, Any]]], paired: bool
) -> dict[str, list[WaterDrumResult]]:
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError("`runs` must map each model's name to its results, one per run.")
    typed = {}
    for model, results in runs.items():
        if isinstance(results, (str, bytes, Mapping, WaterDrumResult)) or not results:
            raise ValueError(
                f"`runs[{model!r}]` must be a non-empty list of results, one per run (seed)."
            )
        typed[str(model)] = [
            r if isinstance(r, WaterDrumResult) else WaterDrumResult.from_dict(r) for r in results
        ]
    counts = {model: len(results) for model, results in typed.items()}
    if paired and len(set(counts.values())) > 1:
        raise ValueError(
            f"Paired comparison needs the same number of runs of every model, got {counts}: "
            "pass paired=False (or --unpaired) for runs that share no seed."
        )
    return typed


def _values(results: Sequence[WaterDrumResult], name: str) -> list[float]:
    return [getattr(r, name).value for r in results]


def _set_value(values: Sequence[Any], confidence: float) -> SeedValue:
    """A set's value over runs; one run keeps its query interval, marked as such."""
    summary = seed_interval([v.value for v in values], confidence, bounds=VALUE_RANGE)
    (first,) = values[:1]
    if summary.num_seeds == 1 and first.ci_low is not None and first.ci_high is not None:
        return SeedValue(summary.value, first.ci_low, first.ci_high, 1, None, "queries")
    return summary


def _points(
    typed: Mapping[str, Sequence[WaterDrumResult]], reference: str, baseline: str
) -> dict[str, np.ndarray]:
    """The (forget, retain) point of each run (runs x 2) of the reference and of every
    unlearning method with both sets; none without a reference that has them."""
    points = {}
    for model, results in typed.items():
        run_points = [_point(r) for r in results]
        if model != baseline and None not in run_points:
            points[model] = np.array(run_points, dtype=np.float64)
    return points if reference in points and len(points) > 1 else {}


def _point(result: WaterDrumResult) -> tuple[float, float] | None:
    """A result's (forget, retain) point; ``None`` without both sets."""
    if result.forget is None or result.retain is None:
        return None
    return result.forget.value, result.retain.value


def _squared_distance(method: np.ndarray, reference: np.ndarray, *, paired: bool) -> float:
    """An unbiased estimate of the squared distance between the mean points of two sets of
    runs (each runs x coordinates), ``|mean offset|**2`` less its noise:
    ``paired`` (run ``i`` of each from one seed), ``tr(cov(offsets)) / S``, so that what the
    runs share cancels; else ``tr(cov(method)) / S_m + tr(cov(reference)) / S_r``. Negative
    where the noise exceeds the offset."""
    samples = [method - reference] if paired else [method, reference]
    mean = method.mean(axis=0) - reference.mean(axis=0)
    return float(mean @ mean - sum(_noise(sample) for sample in samples))


def _noise(runs: np.ndarray) -> float:
    """The variance of the mean point of ``runs`` summed over its coordinates (0 for one run,
    which has no spread to estimate)."""
    return float(runs.var(axis=0, ddof=1).sum() / len(runs)) if len(runs) > 1 else 0.0


def _distance(
    reference: np.ndarray, method: np.ndarray, confidence: float, paired: bool
) -> SeedValue:
    """A method's distance to the reference: the root of :func:`squared_distance` (0 where
    that is negative), with the roots of its jackknife interval (3 runs or more); one run: the
    distance of the two points."""
    runs = min(len(method), len(reference))
    if runs == 1:
        offset = method.mean(axis=0) - reference.mean(axis=0)
        return SeedValue(float(math.hypot(*offset)), None, None, 1)
    paired = paired and len(method) == len(reference)

    def statistic(m: np.ndarray, r: np.ndarray) -> float:
        return _squared_distance(m, r, paired=paired)

    value = statistic(method, reference)
    interval = _jackknife(statistic, [method, reference], confidence, paired)
    if interval is None:
        return SeedValue(_root(value), None, None, runs)
    return SeedValue(_root(value), _root(interval[0]), _root(interval[1]), runs, None, "seeds")


def _root(squared: float) -> float:
    """The distance of a squared-distance estimate (0 where the noise made it negative)."""
    return math.sqrt(max(squared, 0.0))


def _jackknife(
    statistic: Any, samples: Sequence[np.ndarray], confidence: float, paired: bool
) -> tuple[float, float] | None:
    """Student's t interval of ``statistic(*samples)`` with the jackknife's standard error:
    leaving out one run at a time, of every sample at once where they are ``paired`` by run,
    else of each sample in turn. ``None`` below :data:`MIN_SEPARATING_RUNS` runs."""
    value = statistic(*samples)
    sizes = {len(sample) for sample in samples}
    if min(sizes) < MIN_SEPARATING_RUNS:
        return None
    if paired:  # run k left out of every sample
        (size,) = sizes
        left_out = [[statistic(*(np.delete(x, k, axis=0) for x in samples)) for k in range(size)]]
    else:
        left_out = [
            [
                statistic(
                    *(np.delete(x, k, axis=0) if j == i else x for j, x in enumerate(samples))
                )
                for k in range(len(sample))
            ]
            for i, sample in enumerate(samples)
        ]
    variance = sum(
        (len(v) - 1) / len(v) * np.sum((np.array(v) - np.mean(v)) ** 2) for v in left_out
    )
    half = _t(confidence, min(sizes) - 1) * math.sqrt(variance)
    return value - half, value + half


def _closest(
    points: Mapping[str, np.ndarray], reference: str, confidence: float, paired: bool
) -> ClosestMethods:
    """The method of smallest estimated squared distance, and every method whose squared
    distance minus its own has an interval that does not lie above 0 (all of them where the
    runs give no interval)."""
    target = points[reference]
    methods = [m for m in points if m != reference]
    runs = min(len(p) for p in points.values())
    paired = paired and len({len(p) for p in points.values()}) == 1
    squared = {m: _squared_distance(points[m], target, paired=paired) for m in methods}
    best, *others = sorted(methods, key=squared.__getitem__)

    def excess(method: np.ndarray, closest: np.ndarray, target: np.ndarray) -> float:
        return _squared_distance(method, target, paired=paired) - _squared_distance(
            closest, target, paired=paired
        )

    tied = []
    for m in others:
        interval = _jackknife(excess, [points[m], points[best], target], confidence, paired)
        if interval is None or interval[0] <= 0:
            tied.append(m)
    return ClosestMethods((best, *tied), runs)


def _sample_std(values: np.ndarray) -> float:
    return float(values.std(ddof=1)) if len(values) > 1 else math.nan


def _t(confidence: float, df: float) -> float:
    return float(stats.t.ppf((1 + confidence) / 2, df))


def _finite(values: Sequence[float], name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or len(array) == 0:
        raise ValueError(f"`{name}` must be a non-empty list of run values.")
    if not np.isfinite(array).all():
        raise ValueError(f"`{name}` holds NaN/inf: every run must have a value.")
    return array
