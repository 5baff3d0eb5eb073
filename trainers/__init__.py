"""TRL-style unlearning trainers (importable as ``waterdrum_hf.trainers``).

Each method is a ``transformers.Trainer`` with its config dataclass; :func:`get` finds both by
name, so a script can pick the method from the command line::

    trainer_cls, config_cls = waterdrum_hf.trainers.get("kl")
    trainer = trainer_cls(
        model=model,
        args=config_cls(output_dir="out"),
        train_dataset=ForgetRetainDataset(forget, retain),
        processing_class=tokenizer,
    )
    trainer.train()
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from waterdrum_hf.trainers import losses
from waterdrum_hf.trainers.base import UnlearningTrainer
from waterdrum_hf.trainers.config import UnlearningConfig
from waterdrum_hf.trainers.grad_ascent import GradAscentConfig, GradAscentTrainer
from waterdrum_hf.trainers.grad_diff import GradDiffConfig, GradDiffTrainer
from waterdrum_hf.trainers.idk import REFUSAL_ANSWERS
from waterdrum_hf.trainers.idk_dpo import IdkDPOConfig, IdkDPOTrainer
from waterdrum_hf.trainers.idk_nll import IdkNLLConfig, IdkNLLTrainer
from waterdrum_hf.trainers.kl import KLConfig, KLTrainer
from waterdrum_hf.trainers.npo import NPOConfig, NPOTrainer
from waterdrum_hf.trainers.scrub import SCRUBConfig, SCRUBTrainer, scrub_phase
from waterdrum_hf.trainers.simnpo import SimNPOConfig, SimNPOTrainer
from waterdrum_hf.trainers.task_vector import TaskVectorConfig, TaskVectorTrainer, apply_task_vector

_METHODS: dict[str, type[UnlearningTrainer]] = {
    "gradascent": GradAscentTrainer,
    "graddiff": GradDiffTrainer,
    "kl": KLTrainer,
    "scrub": SCRUBTrainer,
    "npo": NPOTrainer,
    "simnpo": SimNPOTrainer,
    "idkdpo": IdkDPOTrainer,
    "idknll": IdkNLLTrainer,
    "taskvector": TaskVectorTrainer,
}

DESCRIPTIONS: Mapping[str, str] = MappingProxyType(
    {name: trainer.description for name, trainer in _METHODS.items()}
)
"""A one-line, plain-words description of each method of :func:`available` (for reports)."""


def available() -> list[str]:
    """The canonical method names :func:`get` knows."""
    return list(_METHODS)


def canonical_name(name: str) -> str:
    """The name of :func:`available` that ``name`` means; any case, ``_`` and ``-`` ignored."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {type(name).__name__}")
    key = name.lower().replace("_", "").replace("-", "")
    if key not in _METHODS:
        raise ValueError(f"unknown unlearning method {name!r}; known: {', '.join(_METHODS)}")
    return key


def get(name: str) -> tuple[type[UnlearningTrainer], type[UnlearningConfig]]:
    """``(TrainerClass, ConfigClass)`` of a method; any case, ``_`` and ``-`` ignored."""
    trainer = _METHODS[canonical_name(name)]
    return trainer, trainer.config_class


def trainer_for(config: UnlearningConfig) -> type[UnlearningTrainer]:
    """The trainer of a method's config: each method has a config class of its own."""
    for trainer in _METHODS.values():
        if type(config) is trainer.config_class:
            return trainer
    raise ValueError(
        f"{type(config).__name__} is no method's config; each method's is "
        f"waterdrum_hf.trainers.get(name)[1] ({', '.join(_METHODS)})"
    )


__all__ = [
    "DESCRIPTIONS",
    "REFUSAL_ANSWERS",
    "GradAscentConfig",
    "GradAscentTrainer",
    "GradDiffConfig",
    "GradDiffTrainer",
    "IdkDPOConfig",
    "IdkDPOTrainer",
    "IdkNLLConfig",
    "IdkNLLTrainer",
    "KLConfig",
    "KLTrainer",
    "NPOConfig",
    "NPOTrainer",
    "SCRUBConfig",
    "SCRUBTrainer",
    "SimNPOConfig",
    "SimNPOTrainer",
    "TaskVectorConfig",
    "TaskVectorTrainer",
    "UnlearningConfig",
    "UnlearningTrainer",
    "apply_task_vector",
    "available",
    "canonical_name",
    "get",
    "losses",
    "scrub_phase",
    "trainer_for",
]
