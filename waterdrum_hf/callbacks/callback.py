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
back afterwards. Evaluations stay warm: nothing is released between them, so on CUDA (where
``SamplingConfig(cache="auto")`` decodes on a static, compiled KV cache) the first evaluation
compiles the decoding step and the later ones reuse its graphs and the allocator's blocks;
only an out-of-memory error gives blocks back (and halves the batch).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from typing import Any

import numpy as np
from transformers import Trainer, TrainerControl, TrainerState, TrainingArguments

from waterdrum_hf.bound_callback import BoundCallback
from waterdrum_hf.callbacks.plan import (
    CALLBACK_SAMPLING,
    OWNER_PREFIX,
    RATIO_SETS,
    CallbackPlan,
    dataset_queries,
    query_set,
    stop_rule,
    subsample,
)
from waterdrum_hf.config import WaterDrumConfig
from waterdrum_hf.generation.engine import generate
from waterdrum_hf.generation.sampling import SamplingConfig
from waterdrum_hf.keys import check_watermark_ids
from waterdrum_hf.scoring import WaterDrumResult, owner_display_names, waterdrum_result
from waterdrum_hf.scoring.verification import Verifier, load_tokenizer
from waterdrum_hf.tiny import pretrained_location
from waterdrum_hf.utils.validation import check_instance_or_none

logger = logging.getLogger(__name__)

PREFIX = "waterdrum/"


class WaterDrumCallback(BoundCallback):
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
            null, interval); default: Waterfall, the analytic null, no interval. The analytic null costs a
            few percent of the scoring; intervals a fraction of a second beside the sampling.
        sampling: how completions are sampled (:class:`~waterdrum_hf.SamplingConfig`);
            default :data:`CALLBACK_SAMPLING` (2 samples of 64 tokens, seed 0). Its seed must be
            set: every evaluation samples with it, and the training RNG is untouched.
        plan: when to evaluate and stop (:class:`CallbackPlan`; default every 50 steps).
        owner_names: display name per owner id; default ``owner-1``, ``owner-2``, ... by first
            appearance in the forget then retain queries here, in the data's order through
            :meth:`from_queries`/:meth:`from_dataset` (as the metric names them).
        trainer: the trainer that runs the callback and logs its values (as for TRL's
            ``LogCompletionsCallback(trainer, ...)``); or :meth:`bind` it later.

    Transformers hands callbacks no trainer, so the callback is told its trainer
    (:class:`~waterdrum_hf.bound_callback.BoundCallback`): the trainers of
    :mod:`waterdrum_hf.trainers` bind the callbacks they run; for any other (``Trainer``,
    TRL's), pass ``trainer=`` or call :meth:`bind`. Unbound, it stops the run when training
    begins.

    The generating tokenizer is the trainer's ``processing_class`` unless
    :attr:`tokenizer` is set.
    """

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
        plan: CallbackPlan | None = None,
        owner_names: Mapping[int, str] | None = None,
        trainer: Trainer | None = None,
    ) -> None:
        forget_set = query_set(forget_queries, forget_ids, "forget")
        retain_set = query_set(retain_queries, retain_ids, "retain")
        self.config = check_instance_or_none(config, WaterDrumConfig, "config") or WaterDrumConfig()
        self.sampling = (
            check_instance_or_none(sampling, SamplingConfig, "sampling") or CALLBACK_SAMPLING
        )
        self.plan = check_instance_or_none(plan, CallbackPlan, "plan") or CallbackPlan()
        if self.sampling.seed is None:
            raise ValueError(
                "The callback samples every evaluation with the same seed, so that its curves "
                "move with the model: set SamplingConfig(seed=...)."
            )
        self.watermark_tokenizer = _watermark_tokenizer(watermark_tokenizer, self.config)
        forget_keys = np.unique(forget_set[1])
        if np.isin(forget_keys, retain_set[1]).any():
            raise ValueError("An owner cannot be in both the forget and the retain query sets.")
        limit = self.plan.max_queries_per_owner
        if limit is not None:
            forget_set = subsample(*forget_set, limit, self.sampling.seed)
            retain_set = subsample(*retain_set, limit, self.sampling.seed)
        self.queries = forget_set[0] + retain_set[0]
        self._ids = np.concatenate([forget_set[1], retain_set[1]])
        self._forget_ids = forget_keys.tolist()
        self._names = owner_display_names(self._ids, owner_names)
        self.stop_when = stop_rule(self.plan.stop_when, list(self._names.values()))
        self.tokenizer: Any | None = None
        """The tokenizer that generates; ``None``: the trainer's ``processing_class``."""
        super().__init__(trainer)
        self.history: list[dict[str, float]] = []
        """The logged values of every evaluation (with ``step``), on every process."""
        self.stopped_at: int | None = None
        """The step at which ``stop_when`` first held, if it did."""
        self.stop_reason: str | None = None
        self.last_result: WaterDrumResult | None = None
        """The last evaluation's result (on the main process)."""
        self._baseline: dict[str, float] = {}
        self._seconds = 0.0
        self._train_start: float | None = None
        self._last_step: int | None = None

    def settings(self) -> dict[str, Any]:
        """What decides the logged values, keys excluded (their slow hashes stand in): for cache
        digests of runs that log through this callback."""
        from waterdrum_hf.utils.fingerprint import key_digest

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
        queries, watermark_ids = dataset_queries(
            dataset,
            tokenizer,
            text_column=text_column,
            question_column=question_column,
            id_column=id_column,
            prefix_tokens=prefix_tokens,
        )
        callback = cls.from_queries(
            queries, watermark_ids, forget_ids, watermark_tokenizer, **kwargs
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
        ``forget_ids``) and the retain set (the rest). ``kwargs`` go to the constructor.

        Owners are named as the metric names them when it scores these queries in order
        (``owner-<n>`` by first appearance in ``watermark_ids``; ids are secret keys, never
        shown), not by their place in the forget-first sets, unless ``owner_names`` says."""
        from waterdrum_hf.data import partition_by_owner

        ids = check_watermark_ids(list(watermark_ids), len(watermark_ids), "watermark_ids")
        kwargs.setdefault("owner_names", owner_display_names(ids, None))
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
        super().on_train_begin(args, state, control, **kwargs)  # stops if unbound
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
        logger.info(
            f"WaterDrumCallback: {self._seconds:.1f} s of {total:.1f} s of training "
            f"({100 * self._seconds / max(total, 1e-9):.1f} %) went to WaterDrum evaluation."
        )
        if self.plan.model_card is not None and self.last_result is not None:
            from waterdrum_hf.hub_results.publish import write_hub_results

            assert args.output_dir is not None  # TrainingArguments sets a default folder
            written = write_hub_results(self.last_result, args.output_dir, self.plan.model_card)
            logger.info("WaterDrumCallback: the last values are in %s.", written[0])

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
        self.last_result = replace(result, scores=None)
        values = {name: float(value) for name, value in result.scalars().items()}
        for name, owner in (result.per_owner or {}).items():  # set with return_details
            if owner.value is not None:
                values[OWNER_PREFIX + name] = owner.value
        return values

    def _evaluate(self, state: TrainerState, control: TrainerControl) -> None:
        if self._last_step == state.global_step:
            return
        self._last_step = state.global_step
        trainer = self.trainer
        assert trainer is not None  # on_train_begin checked that it is bound
        tokenizer = self.tokenizer or trainer.processing_class
        if tokenizer is None:
            raise ValueError(
                "WaterDrumCallback needs the trained model's tokenizer to generate: pass "
                "tokenizer= to the callback or processing_class= to the trainer."
            )
        values = self.evaluate(trainer.model_wrapped, tokenizer, trainer.accelerator)
        self._seconds += values["seconds"]
        if state.global_step == 0 or not self._baseline:
            self._baseline = {k: values[k] for k in RATIO_SETS if k in values}
        for name, base in self._baseline.items():
            if name in values and base > 0:
                values[f"{name}_ratio"] = values[name] / base
        self.history.append({"step": state.global_step, **values})
        if self.stop_when is not None and self.stopped_at is None and state.global_step > 0:
            self._check_stop(values, state, control)
        should_log = control.should_log  # Trainer.log resets it: the step's own log must stay
        trainer.log({PREFIX + name: value for name, value in values.items()})
        control.should_log = should_log

    def _check_stop(
        self, values: dict[str, float], state: TrainerState, control: TrainerControl
    ) -> None:
        assert self.stop_when is not None  # _evaluate checks before it calls
        # The rule sees what every process sees alike: not the local timing.
        holds, reason = self.stop_when({k: v for k, v in values.items() if k != "seconds"})
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


def _watermark_tokenizer(tokenizer: Any, config: WaterDrumConfig) -> Any:
    """The watermarking tokenizer (loaded when given as a path), checked once against the
    scheme's vocabulary."""
    if isinstance(tokenizer, str):  # "tiny": the built-in model's
        tokenizer = pretrained_location(tokenizer, "watermark tokenizer")
    try:
        loaded = load_tokenizer(tokenizer)
    except OSError as error:
        raise ValueError(
            f"`watermark_tokenizer` could not be loaded ({type(error).__name__}); pass the "
            "tokenizer of the model that watermarked the data, or a path to it."
        ) from None
    Verifier(loaded, config.scheme)
    return loaded
