"""Paraphrase candidates: prompt, generate (under each row's watermark key), decode.

:class:`Paraphraser` turns texts into ``num_candidates`` paraphrases per text, either by
diverse beam search (the paper's setting) or by sampling, with a watermark scheme's keyed
perturbation as the last logits processor when it is given one. Choosing among the candidates
is the caller's business (:class:`waterdrum_hf.WatermarkedDataset` watermarks; the paraphrase
attack rewrites without a watermark).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from transformers import (
    GenerationConfig,
    LogitsProcessor,
    LogitsProcessorList,
    TemperatureLogitsWarper,
    TopPLogitsWarper,
)

from waterdrum_hf.generation.diverse_beam_search import diverse_beam_search
from waterdrum_hf.generation.paraphrase_config import ParaphraseConfig
from waterdrum_hf.generation.prompting import BLANK_LINES, paraphrase_prompt_ids
from waterdrum_hf.generation.sampling import unfiltered_sampling_config
from waterdrum_hf.utils.torch_plumbing import model_device, pad_batch, pad_token_id, seeded


class Paraphraser:
    """Generates paraphrase candidates with ``model`` as ``config`` says.

    The model is called as it is (device, mode); wrap calls in
    :func:`waterdrum_hf.utils.torch_plumbing.inference_mode`. A watermark's permutation cache
    persists across calls.

    Args:
        model: the paraphrasing causal LM.
        tokenizer: its tokenizer.
        config: the generation settings (``repetition_penalty`` already resolved).
        watermark: a scheme's keyed logits processor (``scheme.logits_processor(...)``), run
            last and reset to each batch's watermark ids; ``None`` paraphrases unwatermarked.
    """

    def __init__(
        self, model: Any, tokenizer: Any, config: ParaphraseConfig, watermark: Any | None = None
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.config = config
        self._processor = watermark
        self._end_ids: list[int] | None = None

    def prompt_ids(self, text: str) -> list[int]:
        """Token ids of the paraphrasing prompt for ``text``."""
        return paraphrase_prompt_ids(
            self.tokenizer,
            text,
            instruction=self.config.prompt,
            response_prefix=self.config.response_prefix,
            flatten_blank_lines=self.config.stop_at_double_newline,
        )

    def candidates(
        self, prompts: Sequence[list[int]], texts: Sequence[str], ids: Sequence[int]
    ) -> list[list[str]]:
        """``num_candidates`` decoded candidates per prompt, cut at the first blank line
        (``ids``: each prompt's watermark id, unused without a watermark)."""
        candidates = []
        for row in self.candidate_tokens(prompts, texts, np.asarray(ids, dtype=np.int64)):
            decoded = [self.tokenizer.decode(t, skip_special_tokens=True).strip() for t in row]
            if self.config.stop_at_double_newline:  # also a blank line made of several tokens
                decoded = [BLANK_LINES.split(text, maxsplit=1)[0] for text in decoded]
            candidates.append(decoded)
        return candidates

    def candidate_tokens(
        self, prompts: Sequence[list[int]], texts: Sequence[str], ids: np.ndarray
    ) -> list[list[list[int]]]:
        """Generated token ids (up to the first end token) of each prompt's candidates."""
        config = self.config
        input_ids, attention_mask = pad_batch(prompts, self._pad_id(), model_device(self.model))
        length = input_ids.shape[1]
        budget = config.max_new_tokens
        if budget is None:
            longest = max(
                map(len, self.tokenizer(list(texts), add_special_tokens=False)["input_ids"])
            )
            budget = math.ceil(1.5 * longest) + 16
        processor = self._processor
        watermark = [] if processor is None else [processor]

        def reset() -> None:
            if processor is not None:
                processor.reset(ids, prompt_length=length)

        if config.do_sample:
            reset()
            warpers: list[LogitsProcessor] = []
            if config.temperature != 1.0:
                warpers.append(TemperatureLogitsWarper(config.temperature))
            if config.top_p < 1.0:
                warpers.append(TopPLogitsWarper(config.top_p))
            with seeded(self._batch_seed(texts), input_ids.device):
                outputs = [
                    self.model.generate(
                        input_ids=input_ids,
                        attention_mask=attention_mask,
                        generation_config=self._generation_config(budget, config.num_candidates),
                        logits_processor=LogitsProcessorList([*warpers, *watermark]),
                    )
                ]
        else:
            outputs = diverse_beam_search(
                self.model,
                input_ids,
                attention_mask,
                num_groups=config.num_beam_groups,
                diversity_penalty=config.diversity_penalty,
                generation_config=self._generation_config(budget, config.beams_per_group),
                logits_processors=watermark,
                before_group=reset,
            )
        ends = set(self._end_token_ids())
        per_row = outputs[0].shape[0] // len(prompts)
        candidates = []
        for row in range(len(prompts)):
            tokens = []
            for sequences in outputs:
                for generated in sequences[row * per_row : (row + 1) * per_row, length:].tolist():
                    end = next((j for j, t in enumerate(generated) if t in ends), len(generated))
                    tokens.append(generated[:end])
            candidates.append(tokens)
        return candidates

    def _generation_config(self, max_new_tokens: int, per_row: int) -> GenerationConfig:
        """An explicit config, so that no default of the model or of transformers sneaks in."""
        common = {
            "max_new_tokens": max_new_tokens,
            "num_return_sequences": per_row,
            "eos_token_id": self._end_token_ids(),
            "pad_token_id": self._pad_id(),
            "repetition_penalty": self.config.repetition_penalty,
            "no_repeat_ngram_size": self.config.no_repeat_ngram_size,
            "use_cache": True,
        }
        if self.config.do_sample:
            # Temperature and top-p run before the perturbation (our warpers); the rest are off,
            # top_k=0 included: transformers' global top_k=50 default (or a model's own sampling
            # defaults) would otherwise cut the distribution after the perturbation.
            return unfiltered_sampling_config(**common)
        return GenerationConfig(
            do_sample=False, num_beams=per_row, length_penalty=1.0, early_stopping=False, **common
        )

    def _pad_id(self) -> int:
        try:
            return pad_token_id(self.tokenizer)
        except ValueError:  # the model's generation_config may still name an end token
            return self._end_token_ids()[0]

    def _end_token_ids(self) -> list[int]:
        """The model's and tokenizer's end tokens, plus blank-line tokens when asked."""
        if self._end_ids is not None:
            return self._end_ids
        ids: list[int] = []
        for source in (getattr(self.model, "generation_config", None), self.tokenizer):
            value = getattr(source, "eos_token_id", None)
            ids.extend([value] if isinstance(value, int) else list(value or []))
        if not ids:
            raise ValueError(
                "The tokenizer has no eos_token_id: set one (tokenizer.eos_token = ...)."
            )
        if self.config.stop_at_double_newline:
            vocab_size = int(self.tokenizer.vocab_size)
            pieces = self.tokenizer.batch_decode([[t] for t in range(vocab_size)])
            ids.extend(t for t, piece in enumerate(pieces) if "\n\n" in piece)
        self._end_ids = list(dict.fromkeys(ids))
        return self._end_ids

    def _batch_seed(self, texts: Sequence[str]) -> int | None:
        """A sampling seed that depends only on ``seed`` and the texts of the batch."""
        if self.config.seed is None:
            return None
        digest = hashlib.sha256("\0".join([str(self.config.seed), *texts]).encode()).digest()
        return int.from_bytes(digest[:8], "little") >> 1
