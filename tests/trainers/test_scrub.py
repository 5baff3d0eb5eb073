"""SCRUB alternates its max and min phases as configured, with one optimizer."""

from __future__ import annotations

from trainer_setup import (
    make_trainer,
    small_model,
)
from transformers import (
    TrainerCallback,
)

from waterdrum_hf import trainers


class OptimizerProbe(TrainerCallback):
    """Records, after every optimizer step, which optimizer and scheduler ran and their counts."""

    def __init__(self):
        self.optimizers, self.schedulers, self.adam_steps = [], [], []

    def on_step_end(self, args, state, control, optimizer=None, lr_scheduler=None, **kwargs):
        self.optimizers.append(id(optimizer))
        self.schedulers.append(id(lr_scheduler))
        param = optimizer.param_groups[0]["params"][0]
        self.adam_steps.append(int(optimizer.state[param]["step"]))


def test_scrub_alternates_as_configured_with_one_optimizer(tokenizer, tmp_path):
    probe = OptimizerProbe()
    trainer = make_trainer(
        "scrub",
        small_model(tokenizer),
        tokenizer,
        tmp_path,
        max_phase_steps=2,
        min_phase_steps=1,
        num_max_phases=2,
        max_steps=7,
        callbacks=[probe],
    )
    trainer.train()
    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    phases = [entry["scrub/max_phase"] for entry in logs]
    assert phases == [1, 1, 0, 1, 1, 0, 0]
    assert [trainers.scrub_phase(s, 2, 1, 2) for s in range(7)] == ["max"] * 2 + ["min"] + [
        "max"
    ] * 2 + ["min"] * 2
    for entry, phase in zip(logs, phases, strict=True):
        assert ("loss/forget_kl" in entry) == bool(phase)
        assert ("loss/retain_nll" in entry) == (not phase)
    # One optimizer and one schedule across phases: Adam's step count never restarts and the
    # learning rate decays once, linearly, over the whole run.
    assert len(set(probe.optimizers)) == 1 and len(set(probe.schedulers)) == 1
    assert probe.adam_steps == list(range(1, 8))
    rates = [entry["learning_rate"] for entry in logs]
    assert all(later < earlier for earlier, later in zip(rates, rates[1:], strict=False))
