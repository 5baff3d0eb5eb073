"""Callbacks that act through the trainer that runs them, told which one in a documented way.

Transformers calls a callback with the training arguments, state, control, model, processing
class, optimizer, scheduler and dataloaders, never with the trainer; yet only ``Trainer.log``
reaches every ``report_to`` integration. TRL's callbacks that need their trainer take it when
built (``LogCompletionsCallback(trainer, ...)``); a :class:`BoundCallback` does too
(``trainer=``), can be bound afterwards (:meth:`BoundCallback.bind`), and the trainers of
:mod:`waterdrum_hf.trainers` bind the ones they are given. An unbound one stops the run when
training begins, before any step, saying what to write.
"""

from __future__ import annotations

from typing import Any

from transformers import Trainer, TrainerCallback, TrainerControl, TrainerState, TrainingArguments


class BoundCallback(TrainerCallback):
    """A ``TrainerCallback`` that generates, logs or saves through its trainer (:attr:`trainer`).

    Args:
        trainer: the trainer that runs the callback; or :meth:`bind` it later.
    """

    def __init__(self, trainer: Trainer | None = None) -> None:
        self.trainer: Trainer | None = None
        """The trainer that runs this callback (see :meth:`bind`)."""
        if trainer is not None:
            self.bind(trainer)

    def bind(self, trainer: Trainer) -> None:
        """Say which trainer runs this callback, for a trainer that does not bind it itself
        (``Trainer``, TRL's); binding again replaces the trainer."""
        if not isinstance(trainer, Trainer):
            raise TypeError(
                f"{type(self).__name__}.bind takes a transformers Trainer, got "
                f"{type(trainer).__name__}."
            )
        self.trainer = trainer

    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        """Stop before the first step unless the trainer that runs this callback is bound."""
        if self.trainer is None or self not in self.trainer.callback_handler.callbacks:
            name = type(self).__name__
            state_ = "no trainer" if self.trainer is None else "a trainer that does not run it"
            raise RuntimeError(
                f"{name} is bound to {state_}; it acts through its trainer, which transformers "
                f"does not hand to callbacks. Bind it before training: trainer.add_callback("
                f"{name}(..., trainer=trainer)), or callback.bind(trainer) after "
                "Trainer(callbacks=[callback]) (the trainers of waterdrum_hf.trainers bind it "
                "themselves)."
            )


def bind_callbacks(trainer: Trainer) -> None:
    """Bind every :class:`BoundCallback` that ``trainer`` runs to it."""
    for callback in trainer.callback_handler.callbacks:
        if isinstance(callback, BoundCallback):
            callback.bind(trainer)
