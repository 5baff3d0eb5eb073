"""Diverse beam search (Vijayakumar et al., 2016), run one group after the other.

Group ``g`` at step ``t`` is penalised for the tokens groups ``0..g-1`` chose at step ``t``;
earlier groups never depend on later ones, so running the groups as consecutive ordinary beam
searches gives the same search. transformers 5 moved group beam search out of the library (to
a Hub repository), so this is what watermarking with the paper's 4 groups x 2 beams runs on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import torch
from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList

if TYPE_CHECKING:
    from waterdrum_hf.utils.torch_plumbing import GenerativeModel


class HammingDiversityLogitsProcessor(LogitsProcessor):
    """Subtracts ``penalty`` times how often earlier groups chose each token at this step.

    It records the tokens each group's running beams chose at every step (seen as the last
    column of the next call's ``input_ids``); :meth:`start_group` folds them into the history
    before the next group runs. The tokens a group chose at its very last step are never seen,
    so the next group runs that step unpenalised.
    """

    def __init__(self, penalty: float, beams: int, prompt_length: int) -> None:
        self.penalty = penalty
        self.beams = beams
        self.prompt_length = prompt_length
        self._earlier: list[torch.Tensor] = []  # step -> (batch, tokens of earlier groups)
        self._current: list[torch.Tensor] = []

    def start_group(self) -> None:
        """Fold the finished group's choices into the history before the next group runs."""
        for step, tokens in enumerate(self._current):
            if step < len(self._earlier):
                self._earlier[step] = torch.cat([self._earlier[step], tokens], dim=1)
            else:
                self._earlier.append(tokens)
        self._current = []

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> torch.Tensor:
        step = input_ids.shape[1] - self.prompt_length
        if step > 0:
            self._current.append(input_ids[:, -1].reshape(-1, self.beams))
        if step >= len(self._earlier) or self.penalty == 0:
            return scores
        earlier = self._earlier[step].to(scores.device)
        counts = torch.zeros(
            (earlier.shape[0], scores.shape[1]), dtype=scores.dtype, device=scores.device
        )
        counts.scatter_add_(1, earlier, torch.ones_like(earlier, dtype=scores.dtype))
        return scores - self.penalty * counts.repeat_interleave(self.beams, dim=0)


def diverse_beam_search(
    model: GenerativeModel,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    *,
    num_groups: int,
    diversity_penalty: float,
    generation_config: GenerationConfig,
    logits_processors: Sequence[LogitsProcessor] = (),
    before_group: Callable[[], None] | None = None,
) -> list[torch.Tensor]:
    """Run ``num_groups`` beam searches of ``generation_config.num_beams`` beams each.

    ``logits_processors`` run after the diversity penalty (a watermark perturbation goes
    there); ``before_group`` is called before each group (e.g. to reset a stateful
    processor). Returns each group's ``generate`` output (prompt included; rows are the
    ``num_return_sequences`` beams of each input row, in input order).
    """
    diversity = HammingDiversityLogitsProcessor(
        diversity_penalty, generation_config.num_beams, input_ids.shape[1]
    )
    outputs = []
    for _ in range(num_groups):
        if before_group is not None:
            before_group()
        diversity.start_group()
        outputs.append(
            model.generate(
                input_ids=input_ids,
                attention_mask=attention_mask,
                generation_config=generation_config,
                logits_processor=LogitsProcessorList([diversity, *logits_processors]),
            )
        )
    return outputs
