"""The audits' settings: one dataclass whose fields are the flags of ``waterdrum audit``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from waterdrum_hf import attacks as text_attacks
from waterdrum_hf.generation.sampling import SamplingConfig
from waterdrum_hf.utils.fields import flag
from waterdrum_hf.utils.validation import check_positive_fields, check_positive_int

AUDITS = ("relearning", "quantization")
"""The audits :class:`AuditConfig` can run, by name."""

QUANTIZATION_BITS = (8, 4)
"""The weight widths a quantization audit can ask for."""


@dataclass(frozen=True)
class AuditConfig:
    """What the audits do to each model before scoring it again (how it is scored is the
    :class:`~waterdrum_hf.WaterDrumConfig` given to :func:`~waterdrum_hf.run_audits`).

    Relearning fine-tunes a copy of each model for ``relearn_steps`` optimizer steps on the
    first ``relearn_share`` of the forget set's texts; quantization stores each model's linear
    weights in ``quantization_bits`` bits. Every perturbed model is sampled and scored like the
    original (same queries, samples, seed and scoring). Each text attack of ``attacks``
    (``NAME:STRENGTH``) edits each model's unperturbed completions, scored beside them.
    """

    audits: tuple[str, ...] = flag(
        AUDITS,
        f"Audits to run: any of {', '.join(AUDITS)}; '' for none (text attacks only).",
    )
    relearn_share: float = flag(
        0.25,
        (
            "Share of the forget set's texts (its first ones, at least one text) that "
            "relearning fine-tunes on."
        ),
    )
    relearn_steps: int = flag(10, "Optimizer steps of the relearning fine-tune.")
    relearn_learning_rate: float = flag(
        1e-3, "Learning rate of the relearning fine-tune (constant)."
    )
    relearn_batch_size: int = flag(4, "Batch size of the relearning fine-tune.")
    quantization_bits: tuple[int, ...] = flag(
        QUANTIZATION_BITS,
        (
            "Weight widths of the quantization audit: 8 (int8 weights) and/or 4 (int4 "
            "weights); each needs torchao and a device its kernels support."
        ),
    )
    attacks: tuple[str, ...] = flag(
        (),
        (
            "Text attacks, each NAME:STRENGTH (e.g. deletion:0.2; names: "
            f"{', '.join(text_attacks.names())}): each is its own audit, every model's unperturbed "
            "completions edited (waterdrum_hf.attacks) and scored beside the unedited ones."
        ),
        aliases=["--attack"],
        repeatable=True,
    )
    attack_seed: int | None = flag(None, "Seed of the text attacks (default: seed).")
    num_samples: int = flag(4, "Completions sampled per query when scoring.")
    max_new_tokens: int = flag(96, "Tokens generated per completion.")
    batch_size: int = flag(
        16, "Sequences per forward pass when sampling (the samples depend on it)."
    )
    seed: int = flag(0, "Seed of the fine-tune and of sampling.")

    _argument_group_name: ClassVar[str] = "AuditConfig options"  # HfArgumentParser's section

    def __post_init__(self) -> None:
        object.__setattr__(self, "attacks", _checked_attacks(self.attacks))
        if not self.audits and not self.attacks:
            raise ValueError(
                f"`audits` must name at least one of {', '.join(AUDITS)}, or `attacks` one "
                "text attack."
            )
        unknown = [a for a in self.audits if a not in AUDITS]
        if unknown:
            raise ValueError(f"unknown audit {unknown[0]!r}; known: {', '.join(AUDITS)}.")
        if not 0 < self.relearn_share <= 1:
            raise ValueError(f"`relearn_share` must be in (0, 1], got {self.relearn_share}.")
        if not self.relearn_learning_rate > 0:
            raise ValueError("`relearn_learning_rate` must be > 0.")
        check_positive_fields(
            self,
            "relearn_steps",
            "relearn_batch_size",
            "num_samples",
            "max_new_tokens",
            "batch_size",
        )
        check_positive_int(self.seed, "seed", minimum=0)
        if self.attack_seed is not None:
            check_positive_int(self.attack_seed, "attack_seed", minimum=0)
        if "quantization" in self.audits:
            if not self.quantization_bits:
                raise ValueError("`quantization_bits` must name 8 and/or 4.")
            for bits in self.quantization_bits:
                if bits not in QUANTIZATION_BITS:
                    raise ValueError(f"`quantization_bits` may hold 8 and 4, got {bits}.")

    def sampling_config(self) -> SamplingConfig:
        """How every model (perturbed or not) is sampled: the same queries, samples and seed."""
        return SamplingConfig(
            num_samples=self.num_samples,
            max_new_tokens=self.max_new_tokens,
            batch_size=self.batch_size,
            seed=self.seed,
        )

    def audit_names(self) -> list[str]:
        """The perturbed models each audited model gets, in order: ``relearned``, ``int8``,
        ``int4`` (as asked); the text attacks (:attr:`attacks`) come after them."""
        names = ["relearned"] if "relearning" in self.audits else []
        if "quantization" in self.audits:
            names += [f"int{bits}" for bits in self.quantization_bits]
        return names

    def text_attack_seed(self) -> int:
        """The seed of the text attacks: ``attack_seed``, else ``seed``."""
        return self.seed if self.attack_seed is None else self.attack_seed


def _checked_attacks(specs: Iterable[str]) -> tuple[str, ...]:
    """The text attacks, each checked by :func:`waterdrum_hf.attacks.parse` and written as
    :func:`waterdrum_hf.attacks.spec` writes it (the audit's name); none twice."""
    if isinstance(specs, str):
        raise TypeError("`attacks` must be a list of NAME:STRENGTH texts, e.g. ['deletion:0.2'].")
    found = tuple(text_attacks.spec(*text_attacks.parse(text)) for text in specs)
    twice = [s for i, s in enumerate(found) if s in found[:i]]
    if twice:
        raise ValueError(f"the text attack {twice[0]!r} is given twice in `attacks`.")
    return found
