"""Step ``callback``: ``WaterDrumCallback``'s share of training time at a few
``max_queries_per_owner``.

A KL LoRA run at the Llama-2-7B shape (adapter-disabled reference, no checkpointing) without
the callback, then the same run with it at each ``max_queries_per_owner``, evaluating every
``callback_eval_steps`` steps with the callback's default sampling (2 samples of 64 tokens).
Around every evaluation a probe records the live tensors and the GPU memory allocated, before
and after: an evaluation must give back what it took.
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

from transformers import TrainerCallback

from benchmarks.gpu.common import (
    Budget,
    Setup,
    allocated_gib,
    build_model,
    is_oom,
    live_tensors,
    median,
    release,
    reset_peak,
    secret_ids,
    word_texts,
    word_tokenizer,
)
from benchmarks.gpu.training import lora_model, unlearning_trainer


class MemoryProbe(TrainerCallback):
    """Records the live tensors and the GPU memory allocated when training begins and at every
    step end where the watched WaterDrumCallback evaluates; placed before it and after it in
    the callback list, its records bracket each evaluation."""

    def __init__(self, watched: Any, setup: Setup) -> None:
        self.watched, self.setup = watched, setup
        self.live_tensors: list[int] = []
        self.allocated_gib: list[float | None] = []
        self.seconds = 0.0  # the probe's own time (a full garbage collection), not training's

    def _record(self) -> None:
        start = time.perf_counter()
        self.live_tensors.append(live_tensors())
        self.allocated_gib.append(allocated_gib(self.setup.device))
        self.seconds += time.perf_counter() - start

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._record()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if _evaluates(self.watched, state, control):
            self._record()


class BeforeEvaluation(MemoryProbe):
    """The probe placed before the WaterDrumCallback."""


class AfterEvaluation(MemoryProbe):
    """The probe placed after the WaterDrumCallback."""


def _evaluates(callback: Any, state: Any, control: Any) -> bool:
    """Whether the WaterDrumCallback evaluates at this step end (its own rule)."""
    return state.global_step % callback.plan.eval_steps == 0 or control.should_training_stop


def callback_for(setup: Setup, queries_per_owner: int) -> Any:
    from waterdrum_hf import CallbackPlan, WaterDrumCallback

    sizes = setup.sizes
    owners = secret_ids(sizes.callback_owners)
    per_owner = max(sizes.queries_per_owner)
    texts = word_texts(setup.shape.vocab_size, len(owners) * per_owner, sizes.prompt_tokens, 3)
    ids = [owner for owner in owners for _ in range(per_owner)]
    return WaterDrumCallback.from_queries(
        texts,
        ids,
        owners[: len(owners) // 2],
        word_tokenizer(setup.shape.vocab_size),
        plan=CallbackPlan(
            eval_steps=sizes.callback_eval_steps, max_queries_per_owner=queries_per_owner
        ),
    )


def one_run(setup: Setup, queries_per_owner: int | None) -> dict[str, Any]:
    """A KL LoRA run, with the callback at ``queries_per_owner`` (None: without it)."""
    reset_peak(setup.device)
    model = lora_model(build_model(setup))
    callbacks: list[Any] = []
    probes: list[MemoryProbe] = []
    watched = None
    if queries_per_owner is not None:
        watched = callback_for(setup, queries_per_owner)
        probes = [BeforeEvaluation(watched, setup), AfterEvaluation(watched, setup)]
        callbacks = [probes[0], watched, probes[1]]
    with tempfile.TemporaryDirectory() as output_dir:
        trainer = unlearning_trainer(
            setup,
            "kl",
            model,
            steps=setup.sizes.callback_steps,
            output_dir=output_dir,
            callbacks=callbacks,
        )
        runtime = float(trainer.train().metrics["train_runtime"])
    runtime -= sum(probe.seconds for probe in probes)
    row: dict[str, Any] = {
        "max_queries_per_owner": "none" if queries_per_owner is None else queries_per_owner,
        "train_runtime_s": runtime,
    }
    if watched is not None:
        seconds = [entry["seconds"] for entry in watched.history]
        row.update(
            evaluations=len(seconds),
            queries=len(watched.queries),
            eval_s=median(seconds),
            eval_seconds=seconds,  # each evaluation's: the first compiles on the static path
            callback_s=sum(seconds),
            callback_share=sum(seconds) / runtime,
            forget=watched.history[-1].get("forget"),
            retain=watched.history[-1].get("retain"),
            live_tensors_before=probes[0].live_tensors,
            live_tensors_after=probes[1].live_tensors,
            allocated_gib_before=probes[0].allocated_gib,
            allocated_gib_after=probes[1].allocated_gib,
        )
    del trainer, model, watched, probes, callbacks
    release(setup.device)
    return row


def compile_kernels() -> None:
    """Compile the verification kernel (numba, a few seconds once) outside the measurements."""
    import numpy as np

    from waterdrum_hf.schemes.permutation import permuted_positions

    permuted_positions(np.array([[1, 2]]), np.array([3]), 8)


def run(setup: Setup, budget: Budget) -> dict[str, Any]:
    compile_kernels()
    rows: list[dict[str, Any]] = []
    for queries in (None, *setup.sizes.queries_per_owner):
        label = "none" if queries is None else queries
        if budget.expired:
            rows.append({"max_queries_per_owner": label, "skipped": "time budget"})
            continue
        try:
            rows.append(one_run(setup, queries))
        except Exception as error:
            if not is_oom(error):
                raise
            release(setup.device)
            rows.append({"max_queries_per_owner": label, "skipped": "out of memory"})
    baseline = rows[0].get("train_runtime_s")
    for row in rows[1:]:
        if baseline and "train_runtime_s" in row:
            row["overhead_vs_no_callback"] = row["train_runtime_s"] / baseline - 1
    sizes = setup.sizes
    return {
        "rows": rows,
        "notes": [
            f"KL, LoRA r 8, random {setup.shape.name} weights, {sizes.callback_steps} steps of "
            f"{sizes.batch_size} x {sizes.seq_len} tokens, evaluation every "
            f"{sizes.callback_eval_steps} steps and at step 0, {sizes.callback_owners} owners",
            "callback_share: the callback's own generation + verification seconds over the run; "
            "train_runtime_s excludes the memory probes' garbage collections",
        ],
    }
