"""WaterDrumCallback: forget and retain WaterDrum values logged while a model trains.

At step 0, every ``eval_steps`` optimizer steps and at the last step, the callback samples
completions of the forget and retain owners' queries with the model being trained, verifies
them with the owners' keys (:func:`waterdrum_hf.waterdrum_result`) and logs the result's flat
scalars through the trainer (``trainer.log``), so that they land in ``state.log_history`` and in
every ``report_to`` integration (TensorBoard, W&B, ...) next to the loss.

Distributed runs work the way TRL's completion-logging callback does: every process generates
its share of the queries on the unwrapped model (ZeRO-3 parameters gathered), the completions
are gathered, the main process scores them, and the values are broadcast so that every process
logs the same entry and takes the same stopping decision (the reporting integrations write on
the main process only). Training is not disturbed: sampling runs under its own seed with the
global RNG restored, in eval mode with the train mode, gradient checkpointing and dropout put
back afterwards.
"""

from __future__ import annotations

import functools
import inspect
import logging
import math
import numbers
import operator
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from transformers import Trainer, TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from waterdrum_hf._validation import check_positive_int, check_string_list
from waterdrum_hf._warnings import warn_user
from waterdrum_hf.config import KEYWORDS, WaterDrumConfig
from waterdrum_hf.generation import SamplingConfig, generate
from waterdrum_hf.keys import check_watermark_ids
from waterdrum_hf.metric import WaterDrumResult, owner_display_names, waterdrum_result
from waterdrum_hf.verification import Verifier, load_tokenizer

logger = logging.getLogger(__name__)

PREFIX = "waterdrum/"
_GENERATION_KWARGS = ("temperature", "top_p", "batch_size")
_BOUNDS = {"max": operator.le, "min": operator.ge}
_RATIO_SETS = ("forget", "retain")
"""Sets whose value is also logged as ``<set>_ratio``, a share of its step-0 value."""
_OWNER_PREFIX = "owner/"
"""Each owner's value is logged as ``owner/<display name>``."""

StopRule = Callable[[Mapping[str, float]], bool] | Mapping[str, float]


@dataclass(frozen=True)
class EvaluationPlan:
    """When :class:`WaterDrumCallback` evaluates, on how many queries, and when it stops the run.

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
    """

    eval_steps: int = 50
    max_queries_per_owner: int | None = None
    stop_when: StopRule | None = None
    save_on_stop: bool = False

    def __post_init__(self) -> None:
        check_positive_int(self.eval_steps, "eval_steps")
        if self.max_queries_per_owner is not None:
            check_positive_int(self.max_queries_per_owner, "max_queries_per_owner")
        if self.save_on_stop and self.stop_when is None:
            raise ValueError("`save_on_stop` saves when `stop_when` holds: pass a stop_when rule.")


CALLBACK_SAMPLING = SamplingConfig(num_samples=2, max_new_tokens=64, seed=0)
"""The callback's sampling by default: 2 samples of 64 tokens per query, seed 0 (the same at
every evaluation, so curves move with the model, not with the sampling noise)."""

_PLAN_KEYWORDS = ("eval_steps", "max_queries_per_owner", "stop_when", "save_on_stop")
_SAMPLING_KEYWORDS = ("num_samples", "max_new_tokens", "generation_kwargs", "seed")


def _accepts_callback_keywords(init: Callable[..., None]) -> Callable[..., None]:
    """The 0.1 keywords of the callback (the plan's, the sampling's, the scoring's and
    ``tokenizer``), mapped to ``plan``/``sampling``/``config`` with a FutureWarning."""

    @functools.wraps(init)
    def call(self: WaterDrumCallback, *args: Any, **kwargs: Any) -> None:
        old = [
            k for k in (*_PLAN_KEYWORDS, *_SAMPLING_KEYWORDS, *KEYWORDS, "tokenizer") if k in kwargs
        ]
        if not old:
            init(self, *args, **kwargs)
            return
        if any(kwargs.get(name) is not None for name in ("plan", "sampling", "config")):
            raise TypeError(f"{old} belong inside plan=, sampling= or config=, not beside them.")
        warn_user(
            f"The keyword arguments {old} are deprecated and will be removed in 0.3: pass "
            "plan=EvaluationPlan(...), sampling=SamplingConfig(...) and "
            "config=WaterDrumConfig(...).",
            FutureWarning,
        )
        tokenizer = kwargs.pop("tokenizer", None)
        kwargs["plan"] = EvaluationPlan(**{k: kwargs.pop(k) for k in _PLAN_KEYWORDS if k in kwargs})
        seed = kwargs.pop("seed", 0)
        sampling = {k: kwargs.pop(k) for k in ("num_samples", "max_new_tokens") if k in kwargs}
        kwargs["sampling"] = replace(
            CALLBACK_SAMPLING,
            **sampling,
            **_generation_kwargs(kwargs.pop("generation_kwargs", None)),
            seed=seed,
        )
        scoring = {k: kwargs.pop(k) for k in KEYWORDS if k in kwargs}
        if scoring.get("null_keys") and scoring.get("null") in (None, "empirical"):
            scoring["null_seed"] = seed
        if scoring.get("confidence") is not None:
            scoring["bootstrap_seed"] = seed
        kwargs["config"] = WaterDrumConfig.from_keywords(scoring)
        init(self, *args, **kwargs)
        self.tokenizer = tokenizer

    return call


class WaterDrumCallback(TrainerCallback):
    """Logs WaterDrum forget/retain values during training; optionally stops the run.

    Logged (all under ``waterdrum/``): ``forget``, ``retain``, ``separability_auroc``,
    ``forget_ratio`` and ``retain_ratio`` (shares of the step-0 values), ``owner/<name>`` per
    owner (never the key), the sample counts, with a null (``config.null``) the null levels,
    z-scores and p-values, with an interval (``config.interval``) the confidence intervals
    (``forget_ci_low``, ``forget_ci_high``, the same for ``retain`` and ``separability_auroc``,
    and the level), and ``seconds`` (generation and verification time of that evaluation).

    Args:
        forget_queries: prompts made from the forget owners' data (see :meth:`from_dataset`).
        forget_ids: the watermark id of the owner behind each forget query.
        retain_queries: prompts made from the retain owners' data.
        retain_ids: the watermark id behind each retain query.
        watermark_tokenizer: tokenizer that watermarked the data (or its name/path).
        config: how values are read (:class:`~waterdrum_hf.WaterDrumConfig`: scheme, pooling,
            null, interval); default: Waterfall, no null, no interval. An analytic null costs a
            few percent of the scoring; intervals a fraction of a second beside the sampling.
        sampling: how completions are sampled (:class:`~waterdrum_hf.SamplingConfig`);
            default :data:`CALLBACK_SAMPLING` (2 samples of 64 tokens, seed 0). Its seed must be
            set: every evaluation samples with it, and the training RNG is untouched.
        plan: when to evaluate and stop (:class:`EvaluationPlan`; default every 50 steps).
        owner_names: display name per owner id; default ``owner-1``, ``owner-2``, ...
        trainer: the trainer that logs the values. The public way to say which one (e.g.
            ``trainer.add_callback(WaterDrumCallback(..., trainer=trainer))``); without it, the
            callback finds the trainer that calls it when training begins (up the call stack:
            transformers hands callbacks no trainer), so
            ``Trainer(callbacks=[WaterDrumCallback(...)])`` works.

    The generating tokenizer is the trainer's ``processing_class`` unless
    :attr:`tokenizer` is set.
    """

    @_accepts_callback_keywords
    def __init__(
        self,
        forget_queries: Sequence[str],
        forget_ids: Sequence[int],
        retain_queries: Sequence[str],
        retain_ids: Sequence[int],
        watermark_tokenizer: Any,
        *,
        config: WaterDrumConfig | None = None,
        sampling: SamplingConfig | None = None,
        plan: EvaluationPlan | None = None,
        owner_names: Mapping[int, str] | None = None,
        trainer: Trainer | None = None,
    ) -> None:
        forget_set = _query_set(forget_queries, forget_ids, "forget")
        retain_set = _query_set(retain_queries, retain_ids, "retain")
        self.config = _typed(config, WaterDrumConfig, "config") or WaterDrumConfig()
        self.sampling = _typed(sampling, SamplingConfig, "sampling") or CALLBACK_SAMPLING
        self.plan = _typed(plan, EvaluationPlan, "plan") or EvaluationPlan()
        if self.sampling.seed is None:
            raise ValueError(
                "The callback samples every evaluation with the same seed, so that its curves "
                "move with the model: set SamplingConfig(seed=...)."
            )
        try:
            self.watermark_tokenizer = load_tokenizer(watermark_tokenizer)
        except OSError as error:
            raise ValueError(
                f"`watermark_tokenizer` could not be loaded ({type(error).__name__}); pass the "
                "tokenizer of the model that watermarked the data, or a path to it."
            ) from None
        # The scheme fits this vocabulary (checked once, here).
        Verifier(self.watermark_tokenizer, self.config.scheme)
        forget_keys = np.unique(forget_set[1])
        if np.isin(forget_keys, retain_set[1]).any():
            raise ValueError("An owner cannot be in both the forget and the retain query sets.")
        limit = self.plan.max_queries_per_owner
        if limit is not None:
            forget_set = _subsample(*forget_set, limit, self.sampling.seed)
            retain_set = _subsample(*retain_set, limit, self.sampling.seed)
        self.queries = forget_set[0] + retain_set[0]
        self._ids = np.concatenate([forget_set[1], retain_set[1]])
        self._forget_ids = forget_keys.tolist()
        self._names = owner_display_names(self._ids, owner_names)
        self.stop_when = _stop_rule(self.plan.stop_when, list(self._names.values()))
        self.tokenizer: Any | None = None
        """The tokenizer that generates; ``None``: the trainer's ``processing_class``."""
        self.trainer = trainer
        self.history: list[dict[str, float]] = []
        """The logged values of every evaluation (with ``step``), on every process."""
        self.stopped_at: int | None = None
        """The step at which ``stop_when`` first held, if it did."""
        self.stop_reason: str | None = None
        self._baseline: dict[str, float] = {}
        self._seconds = 0.0
        self._train_start: float | None = None
        self._last_step: int | None = None

    def settings(self) -> dict[str, Any]:
        """What decides the logged values, keys excluded (their slow hashes stand in): for cache
        digests of runs that log through this callback."""
        from waterdrum_hf._fingerprint import key_digest

        return {
            "queries": self.queries,
            "keys": [key_digest(int(k)) for k in self._ids],
            "eval_steps": self.plan.eval_steps,
            "sampling": asdict(self.sampling),
            "config": self.config.to_dict(),
        }

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(queries={len(self.queries)}, owners={len(self._names)}, "
            f"forget_owners={len(self._forget_ids)}, eval_steps={self.plan.eval_steps}, "
            f"num_samples={self.sampling.num_samples}, "
            f"max_new_tokens={self.sampling.max_new_tokens})"
        )

    @classmethod
    def from_dataset(
        cls,
        dataset: Any,
        forget_ids: Sequence[int],
        tokenizer: Any,
        watermark_tokenizer: Any,
        *,
        text_column: str = "text",
        question_column: str = "question",
        id_column: str = "owner_id",
        prefix_tokens: int = 50,
        **kwargs: Any,
    ) -> WaterDrumCallback:
        """Build the query sets the paper's way from a dataset with an owner column.

        Rows with ``text_column`` give completion queries (their first ``prefix_tokens``
        tokens under the evaluated model's ``tokenizer``, which also generates); without it,
        ``question_column`` gives QA queries in the model's chat format. Rows owned by
        ``forget_ids`` form the forget set, the rest the retain set. ``kwargs`` go to the
        constructor.
        """
        from waterdrum_hf.prompting import completion_queries, qa_queries

        columns = dataset.column_names
        if id_column not in columns:
            raise ValueError(f"id_column {id_column!r} is not a column (columns: {columns}).")
        if text_column in columns:
            queries = completion_queries(dataset[text_column], tokenizer, prefix_tokens)
        elif question_column in columns:
            queries = qa_queries(dataset[question_column], tokenizer)
        else:
            raise ValueError(
                f"The dataset has neither {text_column!r} nor {question_column!r} (columns: "
                f"{columns}); pass text_column= or question_column=."
            )
        watermark_ids = check_watermark_ids(list(dataset[id_column]), len(dataset), id_column)
        callback = cls.from_queries(
            queries, watermark_ids.tolist(), forget_ids, watermark_tokenizer, **kwargs
        )
        callback.tokenizer = tokenizer
        return callback

    @classmethod
    def from_queries(
        cls,
        queries: Sequence[str],
        watermark_ids: Sequence[int],
        forget_ids: Sequence[int],
        watermark_tokenizer: Any,
        **kwargs: Any,
    ) -> WaterDrumCallback:
        """Split queries (one watermark id each) into the forget set (the queries of
        ``forget_ids``) and the retain set (the rest). ``kwargs`` go to the constructor."""
        from waterdrum_hf.data import partition_by_owner

        forget = set(check_watermark_ids(list(forget_ids), len(forget_ids), "forget_ids").tolist())
        forget_queries, retain_queries = partition_by_owner(queries, watermark_ids, forget)
        forget_watermark_ids, retain_watermark_ids = partition_by_owner(
            watermark_ids, watermark_ids, forget
        )
        return cls(
            forget_queries,
            forget_watermark_ids,
            retain_queries,
            retain_watermark_ids,
            watermark_tokenizer,
            **kwargs,
        )

    # ---- events ----------------------------------------------------------------------------

    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        if self.trainer is None:
            self.trainer = _find_trainer(self)
        self._train_start = time.perf_counter()
        self._seconds = 0.0
        self._evaluate(state, control)

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        if state.global_step % self.plan.eval_steps == 0 or control.should_training_stop:
            self._evaluate(state, control)

    def on_train_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        if self._train_start is None or not state.is_world_process_zero:
            return
        total = time.perf_counter() - self._train_start
        message = (
            f"WaterDrumCallback: {self._seconds:.1f} s of {total:.1f} s of training "
            f"({100 * self._seconds / max(total, 1e-9):.1f} %) went to WaterDrum evaluation."
        )
        logger.info(message)

    # ---- one evaluation --------------------------------------------------------------------

    def evaluate(
        self, model: Any, tokenizer: Any, accelerator: Any | None = None
    ) -> dict[str, float]:
        """Sample, verify and summarise once; returns the values (without the prefix).

        Under several processes every process must call this; every process gets the values.
        """
        start = time.perf_counter()
        completions = generate(
            model,
            tokenizer,
            self.queries,
            self.sampling,
            show_progress=False,
            accelerator=accelerator,
        )
        values: dict[str, float] = {}
        error: str | None = None
        if accelerator is None or accelerator.is_main_process:
            try:
                values = self._score(completions)
            except (ValueError, TypeError) as failure:
                if accelerator is None or accelerator.num_processes == 1:
                    raise
                error = f"{type(failure).__name__}: {failure}"  # every process must learn of it
        if accelerator is not None and accelerator.num_processes > 1:
            from accelerate.utils import broadcast_object_list

            values, error = broadcast_object_list([values, error])
            if error is not None:
                raise RuntimeError(
                    f"WaterDrumCallback: scoring failed on the main process: {error}"
                )
        values["seconds"] = time.perf_counter() - start
        return values

    def _score(self, completions: list[list[str]]) -> dict[str, float]:
        """The result's flat scalars and each scored owner's value: what is logged."""
        result = waterdrum_result(
            completions,
            self._ids.tolist(),
            self.watermark_tokenizer,
            config=self.config,
            forget_ids=self._forget_ids,
            owner_names=self._names,
            return_details=True,
        )
        values = {name: float(value) for name, value in result.scalars().items()}
        for name, owner in (result.per_owner or {}).items():  # set with return_details
            if owner.value is not None:
                values[_OWNER_PREFIX + name] = owner.value
        return values

    def _evaluate(self, state: TrainerState, control: TrainerControl) -> None:
        if self._last_step == state.global_step:
            return
        self._last_step = state.global_step
        trainer = self.trainer
        assert trainer is not None  # found by on_train_begin, or given
        tokenizer = self.tokenizer or trainer.processing_class
        if tokenizer is None:
            raise ValueError(
                "WaterDrumCallback needs the trained model's tokenizer to generate: pass "
                "tokenizer= to the callback or processing_class= to the trainer."
            )
        values = self.evaluate(trainer.model_wrapped, tokenizer, trainer.accelerator)
        self._seconds += values["seconds"]
        if state.global_step == 0 or not self._baseline:
            self._baseline = {k: values[k] for k in _RATIO_SETS if k in values}
        for name, base in self._baseline.items():
            if name in values and base > 0:
                values[f"{name}_ratio"] = values[name] / base
        self.history.append({"step": state.global_step, **values})
        if self.stop_when is not None and self.stopped_at is None and state.global_step > 0:
            # The rule sees what every process sees alike: not the local timing.
            self._check_stop(
                {k: v for k, v in values.items() if k != "seconds"}, values, state, control
            )
        should_log = control.should_log  # Trainer.log resets it: the step's own log must stay
        trainer.log({PREFIX + name: value for name, value in values.items()})
        control.should_log = should_log

    def _check_stop(
        self,
        shared: dict[str, float],
        values: dict[str, float],
        state: TrainerState,
        control: TrainerControl,
    ) -> None:
        assert self.stop_when is not None  # _evaluate checks before it calls
        holds, reason = self.stop_when(shared)
        if not holds:
            return
        self.stopped_at, self.stop_reason = state.global_step, reason
        values["stopped"] = 1.0
        control.should_training_stop = True
        message = f"WaterDrumCallback: stopping at step {state.global_step}: {reason}."
        if self.plan.save_on_stop:
            trainer = self.trainer
            assert trainer is not None and trainer.args.output_dir is not None  # while training
            path = os.path.join(trainer.args.output_dir, f"waterdrum-stop-step-{state.global_step}")
            trainer.save_model(path)
            message += f" Model saved to {path}."
        logger.warning(message)


def _query_set(
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


def _subsample(
    queries: list[str], ids: np.ndarray, limit: int, seed: int
) -> tuple[list[str], np.ndarray]:
    """At most ``limit`` queries per owner, drawn once with ``seed``, in their original order."""
    rng = np.random.default_rng(seed)
    keep = np.zeros(len(ids), dtype=bool)
    for owner in np.unique(ids):
        rows = np.flatnonzero(ids == owner)
        keep[rng.permutation(rows)[:limit]] = True
    return [q for q, k in zip(queries, keep, strict=True) if k], ids[keep]


def _generation_kwargs(kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The 0.1 ``generation_kwargs``: ``temperature``, ``top_p`` or ``batch_size``."""
    kwargs = dict(kwargs or {})
    unknown = sorted(set(kwargs) - set(_GENERATION_KWARGS))
    if unknown:
        raise ValueError(
            f"generation_kwargs {unknown} are not supported; use {list(_GENERATION_KWARGS)} "
            "(sampling stays unfiltered: no top-k, as the paper samples)."
        )
    return kwargs


def _typed(value: Any, kind: type, name: str) -> Any:
    """``value`` if it is a ``kind`` (or None), else a TypeError naming the argument."""
    if value is not None and not isinstance(value, kind):
        raise TypeError(f"`{name}` must be a {kind.__name__}, got {type(value).__name__}.")
    return value


def _logged_names(owner_names: Sequence[str]) -> frozenset[str]:
    """Every value the callback can log (without the prefix) that a stopping rule may bound:
    the metric's scalars, the ratios and each owner's value."""
    return frozenset(
        [*WaterDrumResult.scalar_names(), *(f"{s}_ratio" for s in _RATIO_SETS)]
        + [_OWNER_PREFIX + name for name in owner_names]
    )


def _stop_rule(
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
    logged = _logged_names(owner_names)
    for key, limit in rule.items():
        kind, _, metric = str(key).partition("_")
        if kind not in _BOUNDS or not metric:
            raise ValueError(f"`stop_when` key {key!r} must be 'max_<value>' or 'min_<value>'.")
        if metric not in logged:
            raise ValueError(
                f"`stop_when` key {key!r}: {metric!r} is not a value the callback logs (e.g. "
                "forget, retain, forget_ratio, retain_ratio, separability_auroc, forget_p_value, "
                f"{_OWNER_PREFIX}<owner name>)."
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
            if value is None or not _BOUNDS[kind](value, limit):
                return False, ""
            parts.append(f"{metric} {value:.3f} {'<=' if kind == 'max' else '>='} {limit:g}")
        return True, " and ".join(parts)

    return check


def _find_trainer(callback: TrainerCallback) -> Trainer:
    """The ``Trainer`` whose callback handler is calling ``callback``, found up the call stack.

    Why the stack: transformers calls a callback with the training arguments, state, control,
    model, processing class, optimizer, scheduler and dataloaders, never with the trainer, and
    only ``Trainer.log`` reaches every ``report_to`` integration (each is another callback of
    the trainer's handler). ``trainer=`` is the public way; this keeps
    ``Trainer(callbacks=[WaterDrumCallback(...)])`` working for any Trainer. It relies on
    transformers firing the event from a method of the trainer (``self`` in that frame);
    ``tests/test_callbacks.py::test_finds_the_trainer_that_calls_it`` fails if that changes.
    """
    frame = inspect.currentframe()
    try:
        while frame is not None:
            candidate = frame.f_locals.get("self")
            if isinstance(candidate, Trainer) and callback in candidate.callback_handler.callbacks:
                return candidate
            frame = frame.f_back
    finally:
        del frame  # a frame held in a local keeps every frame above it alive
    raise RuntimeError(
        "WaterDrumCallback logs through the trainer but could not find it: pass trainer= or add "
        "the callback with Trainer(callbacks=[...]) / trainer.add_callback(...)."
    )
