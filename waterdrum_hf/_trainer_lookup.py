"""Finding the ``Trainer`` that calls a callback (transformers hands callbacks no trainer)."""

from __future__ import annotations

import inspect

from transformers import Trainer, TrainerCallback


def find_trainer(callback: TrainerCallback) -> Trainer:
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
