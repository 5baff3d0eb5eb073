"""How a model paraphrases: one dataclass of generation settings, validated.

:class:`ParaphraseConfig` is what :class:`~waterdrum_hf.generation.paraphraser.Paraphraser`
reads: diverse beam search or sampling, the prompt and where a candidate ends. Watermarking
(:class:`~waterdrum_hf.WatermarkingConfig`, which adds the scheme and the columns) and the
paraphrase attack (no watermark) both paraphrase with it. Every field carries ``help`` metadata.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

from waterdrum_hf.generation.prompting import PARAPHRASE_PREFILL, PARAPHRASE_PROMPT
from waterdrum_hf.utils.fields import flag
from waterdrum_hf.utils.validation import (
    check_finite_at_least,
    check_positive_fields,
    check_positive_int,
)

Config = TypeVar("Config", bound="ParaphraseConfig")


@dataclass(frozen=True)
class ParaphraseConfig:
    """Settings of paraphrasing by generation (defaults: the paper's diverse beam search)."""

    num_beam_groups: int = flag(4, "Groups of diverse beam search (4 in the paper).")
    beams_per_group: int = flag(2, "Beams per group (2 in the paper).")
    diversity_penalty: float = flag(
        0.5, "Hamming diversity penalty between groups (0.5 in the paper)."
    )
    do_sample: bool = flag(
        False, "Sample num_beam_groups * beams_per_group candidates instead of beam search."
    )
    temperature: float = flag(1.0, "Sampling temperature, applied before the perturbation.")
    top_p: float = flag(1.0, "Nucleus sampling threshold, applied before the perturbation.")
    repetition_penalty: float | None = flag(
        None,
        (
            "Repetition penalty before the perturbation; None takes the model's "
            "generation_config value, else 1 (small paraphrasers loop without one)."
        ),
    )
    no_repeat_ngram_size: int = flag(
        0,
        (
            "Forbid repeating any n-gram of this size within a candidate (0: off, as in "
            "the paper). Small paraphrasers fall into loops that repeat one token pair; such a "
            "text reads +-1 under any key, so its watermark proves little."
        ),
    )
    max_new_tokens: int | None = flag(
        None, "Generation budget; None gives 1.5x the longest text of each batch, plus 16."
    )
    prompt: str = flag(PARAPHRASE_PROMPT, "The paraphrasing instruction.")
    response_prefix: str | None = flag(
        PARAPHRASE_PREFILL, "Text the answer starts with (not part of the output); None for none."
    )
    stop_at_double_newline: bool = flag(
        True, "End a candidate at its first blank line; blank lines in the input become spaces."
    )
    seed: int | None = flag(
        None,
        "Seeds sampling per batch (from the seed and the batch's texts); None: torch's global RNG.",
    )
    batch_size: int = flag(8, "Texts generated together.")

    def __post_init__(self) -> None:
        if not isinstance(self.prompt, str) or not self.prompt:
            raise TypeError("`prompt` must be a non-empty string.")
        if self.response_prefix is not None and not isinstance(self.response_prefix, str):
            raise TypeError("`response_prefix` must be a string or None.")
        check_positive_fields(self, "num_beam_groups", "beams_per_group", "batch_size")
        check_positive_int(self.no_repeat_ngram_size, "no_repeat_ngram_size", minimum=0)
        if self.seed is not None:
            check_positive_int(self.seed, "seed", minimum=0)
        if self.max_new_tokens is not None:
            check_positive_int(self.max_new_tokens, "max_new_tokens")
        check_finite_at_least(self.diversity_penalty, "diversity_penalty", 0.0)
        if not isinstance(self.temperature, numbers.Real) or not 0 < self.temperature < math.inf:
            raise ValueError(f"`temperature` must be a positive number, got {self.temperature!r}.")
        if not isinstance(self.top_p, numbers.Real) or not 0 < self.top_p <= 1:
            raise ValueError(f"`top_p` must be in (0, 1], got {self.top_p!r}.")
        penalty = self.repetition_penalty
        if penalty is not None and (
            not isinstance(penalty, numbers.Real) or not 0 < penalty < math.inf
        ):
            raise ValueError(f"`repetition_penalty` must be a positive number, got {penalty!r}.")

    def updated(self: Config, **changes: Any) -> Config:
        """A copy with ``changes`` applied and validated; an unknown field name raises."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise TypeError(
                f"Unknown {type(self).__name__} field(s) {unknown}; the fields are {sorted(known)}."
            )
        return replace(self, **changes)

    @property
    def num_candidates(self) -> int:
        """Candidates generated per text (beams or samples)."""
        return self.num_beam_groups * self.beams_per_group
