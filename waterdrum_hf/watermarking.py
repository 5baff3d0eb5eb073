"""Waterfall watermarking of a ``datasets.Dataset``: a map function that paraphrases with a key.

``dataset.map(WatermarkedDataset(model, tokenizer), batched=True)`` asks ``model`` to
paraphrase every text while :class:`~waterdrum_hf.perturbation.WaterfallLogitsProcessor` adds
the owner's key-dependent perturbation, then keeps the best of several candidates. The result
verifies with :func:`waterdrum_hf.verify_texts` (and ``waterfall``'s own verifier) under the
row's key and the paraphraser's tokenizer.

Generation runs through the installed ``transformers`` directly, not through
``waterfall.Watermarker.generate``: on transformers >= 5.3 that one routes every call through a
bundled group-beam-search ``custom_generate`` that rejects sampling, and lets the global
``top_k=50`` default cut the distribution after the perturbation. Group (diverse) beam search
itself left ``transformers`` for a Hub repository in 5.x, so it is run here group by group (see
:class:`_GroupDiversity`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import numbers
from typing import Any

import numpy as np
import torch
from transformers import (
    GenerationConfig,
    LogitsProcessor,
    LogitsProcessorList,
    TemperatureLogitsWarper,
    TopPLogitsWarper,
)

from . import __version__
from ._fingerprint import (
    key_digest,
    module_identity,
    register_with_datasets_hasher,
    tokenizer_identity,
)
from ._progress import progress_bar
from ._sampling import seeded, unfiltered_sampling_config
from ._validation import check_positive_int, check_watermark_id
from .perturbation import WaterfallLogitsProcessor
from .prompting import BLANK_LINES, PARAPHRASE_PREFILL, PARAPHRASE_PROMPT, paraphrase_prompt_ids
from .verification import Verifier, watermark_function_terms

logger = logging.getLogger(__name__)

SCORE_COLUMN = "watermark_score"
STS_COLUMN = "watermark_sts"


class WatermarkedDataset:
    """Watermark the texts of a dataset with Waterfall, as a batched ``datasets`` map function.

    Example::

        wm = WatermarkedDataset(model, tokenizer, id_column="owner_id")
        watermarked = dataset.map(wm, batched=True, batch_size=64)

    Every text is paraphrased by ``model`` under the key of its row (``id_column``, or the
    fixed ``id``). The prompt is the tokenizer's chat template with ``prompt`` as the system
    message, the text as the user message and ``response_prefix`` opening the answer; a
    template that rejects the system role gets the instruction at the head of the user
    message; a tokenizer without a chat template gets the plain prompt
    ``"{prompt}\\n\\n{text}\\n\\n{response_prefix}"``.

    By default (the paper's setting) candidates come from diverse beam search:
    ``num_beam_groups`` groups of ``beams_per_group`` beams, each group penalised by
    ``diversity_penalty`` for every token an earlier group chose at the same step. With
    ``do_sample=True``, ``num_beam_groups * beams_per_group`` independent samples (temperature,
    top-p, no top-k) are the candidates; set both to 1 for a single sample. The chosen
    candidate maximises ``sts_weight * STS + q`` with an STS model, ``q`` without, where ``q``
    is its watermark score under the row's key.

    Output columns: ``text_column`` holds the watermarked text, ``<text_column>_original`` the
    input text, ``watermark_score`` the chosen text's ``q`` and, with an STS model,
    ``watermark_sts`` its similarity to the original. Every other column passes through. A row
    whose text is not a non-empty string is kept unchanged with NaN scores and counted in
    :attr:`num_skipped` (and logged, as a count); a row whose candidates all came out empty
    gets an empty text and a NaN score.

    Caching: ``datasets`` fingerprints this callable from its configuration, the model's
    ``name_or_path``/commit/dtype (a hash of the weights when the model has no name), the
    tokenizer's content and a slow one-way hash of ``id``, never from pickled weights; an
    identical map is served from the cache, a different ``kappa`` or key is not. A model
    changed in memory after loading keeps its name: pass ``new_fingerprint`` to ``map`` then.
    The ``id`` is never printed or logged.

    Args:
        model: causal LM that paraphrases (an instruction-tuned one in practice); it stays on
            its device and generation runs there.
        tokenizer: the model's tokenizer. Its ``vocab_size`` is the watermark's N and
            verification must use the same tokenizer.
        text_column: column with the texts to watermark.
        id_column: column with each row's watermark id (0..2**32-1); ignored when ``id`` is set.
        id: one watermark id for every row, instead of ``id_column``.
        kappa: perturbation strength (the paper uses 2).
        k_p: watermarking function (the paper uses 1).
        n_gram: watermark context length plus one (2 in the paper).
        num_beam_groups: groups of diverse beam search (4 in the paper).
        beams_per_group: beams per group (2 in the paper).
        diversity_penalty: Hamming diversity penalty between groups (0.5 in the paper).
        do_sample: sample candidates instead of beam search.
        temperature: sampling temperature, applied before the perturbation as Waterfall does.
        top_p: nucleus sampling threshold, applied before the perturbation.
        repetition_penalty: transformers' repetition penalty, applied before the perturbation;
            ``None`` takes the model's ``generation_config`` value (as Waterfall does on
            transformers 5), else 1. Small paraphrasers loop without one (the built-in tiny
            model ships 1.3), and a looping candidate can win on ``q`` alone.
        max_new_tokens: generation budget; ``None`` gives 1.5 times the longest text of each
            generation batch in tokens, plus 16.
        sts_model: a ``sentence_transformers.SentenceTransformer`` (anything with ``encode``)
            to rank candidates by semantic similarity; ``None`` ranks by ``q`` alone.
        sts_weight: weight of the STS term in the ranking (Waterfall's ``STS_scale``).
        prompt: the paraphrasing instruction.
        response_prefix: text the answer starts with (not part of the output); ``None`` for none.
        stop_at_double_newline: end a candidate at its first blank line (models tend to start
            over after one, as Waterfall notes): tokens that contain one end generation, and
            the decoded text is cut there; blank lines in the input become spaces in the prompt.
        seed: seeds sampling (per generation batch, from the seed and the batch's texts), so
            reruns give the same text; ``None`` uses torch's global generator.
        batch_size: texts generated together (each with all its beams or samples).
        show_progress: progress bar over generation batches; ``None`` shows it on a terminal.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        text_column: str = "text",
        id_column: str = "owner_id",
        id: int | None = None,
        kappa: float = 2.0,
        k_p: int = 1,
        n_gram: int = 2,
        num_beam_groups: int = 4,
        beams_per_group: int = 2,
        diversity_penalty: float = 0.5,
        do_sample: bool = False,
        temperature: float = 1.0,
        top_p: float = 1.0,
        repetition_penalty: float | None = None,
        max_new_tokens: int | None = None,
        sts_model: Any | None = None,
        sts_weight: float = 2.0,
        prompt: str = PARAPHRASE_PROMPT,
        response_prefix: str | None = PARAPHRASE_PREFILL,
        stop_at_double_newline: bool = True,
        seed: int | None = None,
        batch_size: int = 8,
        show_progress: bool | None = None,
    ) -> None:
        if not callable(getattr(model, "generate", None)):
            raise TypeError(
                f"`model` must be a transformers causal LM with `generate`, got {type(model).__name__}."
            )
        if not hasattr(tokenizer, "vocab_size") or not callable(tokenizer):
            raise TypeError(
                f"`tokenizer` must be the model's transformers tokenizer, got {type(tokenizer).__name__}."
            )
        for name, value in (
            ("text_column", text_column),
            ("id_column", id_column),
            ("prompt", prompt),
        ):
            if not isinstance(value, str) or not value:
                raise TypeError(f"`{name}` must be a non-empty string.")
        if response_prefix is not None and not isinstance(response_prefix, str):
            raise TypeError("`response_prefix` must be a string or None.")
        if sts_model is not None and (
            isinstance(sts_model, str) or not callable(getattr(sts_model, "encode", None))
        ):
            raise TypeError(
                "`sts_model` must be a loaded sentence-transformers model (with `encode`), e.g. "
                "`SentenceTransformer('sentence-transformers/all-mpnet-base-v2')`, or None."
            )
        if seed is not None:
            check_positive_int(seed, "seed", minimum=0)
        if max_new_tokens is not None:
            check_positive_int(max_new_tokens, "max_new_tokens")
        for name, value, low in (
            ("kappa", kappa, 0.0),
            ("diversity_penalty", diversity_penalty, 0.0),
            ("sts_weight", sts_weight, -math.inf),
        ):
            if not isinstance(value, numbers.Real) or not math.isfinite(value) or value < low:
                raise ValueError(
                    f"`{name}` must be a finite number{'' if low == -math.inf else ' >= 0'}, got {value!r}."
                )
        if not isinstance(temperature, numbers.Real) or not 0 < temperature < math.inf:
            raise ValueError(f"`temperature` must be a positive number, got {temperature!r}.")
        if not isinstance(top_p, numbers.Real) or not 0 < top_p <= 1:
            raise ValueError(f"`top_p` must be in (0, 1], got {top_p!r}.")
        if repetition_penalty is None:
            repetition_penalty = getattr(
                getattr(model, "generation_config", None), "repetition_penalty", None
            ) or 1.0
        if not isinstance(repetition_penalty, numbers.Real) or not 0 < repetition_penalty < math.inf:
            raise ValueError(
                f"`repetition_penalty` must be a positive number, got {repetition_penalty!r}."
            )

        self.model = model
        self.tokenizer = tokenizer
        self.vocab_size = int(tokenizer.vocab_size)
        self.text_column = text_column
        self.id_column = id_column
        self.id = None if id is None else check_watermark_id(id, "id")
        self.kappa = float(kappa)
        self.k_p = int(k_p)
        watermark_function_terms(self.k_p, self.vocab_size)  # validates k_p for this vocabulary
        self.n_gram = check_positive_int(n_gram, "n_gram", minimum=2)
        self.num_beam_groups = check_positive_int(num_beam_groups, "num_beam_groups")
        self.beams_per_group = check_positive_int(beams_per_group, "beams_per_group")
        self.diversity_penalty = float(diversity_penalty)
        self.do_sample = bool(do_sample)
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.repetition_penalty = float(repetition_penalty)
        self.max_new_tokens = max_new_tokens
        self.sts_model = sts_model
        self.sts_weight = float(sts_weight)
        self.prompt = prompt
        self.response_prefix = response_prefix
        self.stop_at_double_newline = bool(stop_at_double_newline)
        self.seed = seed
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.show_progress = show_progress

        self.num_skipped = 0
        """Rows left unwatermarked (text missing, not a string or blank) by calls in this process."""
        self.num_watermarked = 0
        """Rows watermarked by calls in this process (a map served from the cache adds none)."""
        self._processor: WaterfallLogitsProcessor | None = None
        self._blank_line_ids: list[int] | None = None
        self._identity: dict[str, Any] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_with_datasets_hasher(cls)

    def __repr__(self) -> str:
        name = getattr(self.model, "name_or_path", "") or type(self.model).__name__
        key = f"id_column={self.id_column!r}" if self.id is None else "id=<secret>"
        return (
            f"{type(self).__name__}(model={name!r}, text_column={self.text_column!r}, {key}, "
            f"kappa={self.kappa}, k_p={self.k_p}, n_gram={self.n_gram}, "
            + (
                f"do_sample=True, num_samples={self.num_candidates}"
                if self.do_sample
                else f"num_beam_groups={self.num_beam_groups}, beams_per_group={self.beams_per_group}"
            )
            + f", sts_model={type(self.sts_model).__name__ if self.sts_model is not None else None})"
        )

    @property
    def num_candidates(self) -> int:
        """Candidates generated per text (beams or samples)."""
        return self.num_beam_groups * self.beams_per_group

    @property
    def original_column(self) -> str:
        """Name of the column that keeps the input text."""
        return f"{self.text_column}_original"

    @property
    def fingerprint(self) -> str:
        """Stable digest of everything that decides the output; what ``datasets`` hashes."""
        if self._identity is None:
            self._identity = {
                "model": module_identity(self.model),
                "tokenizer": tokenizer_identity(self.tokenizer),
                "sts_model": None if self.sts_model is None else module_identity(self.sts_model),
            }
        config = {
            name: getattr(self, name)
            for name in (
                "text_column",
                "id_column",
                "kappa",
                "k_p",
                "n_gram",
                "num_beam_groups",
                "beams_per_group",
                "diversity_penalty",
                "do_sample",
                "temperature",
                "top_p",
                "repetition_penalty",
                "max_new_tokens",
                "sts_weight",
                "prompt",
                "response_prefix",
                "stop_at_double_newline",
                "seed",
                "batch_size",  # with max_new_tokens=None the budget follows the batch
            )
        }
        payload = {
            "class": type(self).__qualname__,
            "version": __version__,
            "config": config,
            "key": None if self.id is None else key_digest(self.id),
            **self._identity,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def __call__(self, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        """Watermark one batch of rows (``dataset.map(..., batched=True)`` calls this)."""
        texts = self._column(batch, self.text_column)
        if isinstance(texts, (str, bytes)) or not hasattr(texts, "__len__"):
            raise TypeError(
                "WatermarkedDataset works on batches: call `dataset.map(wm, batched=True)`."
            )
        texts = list(texts)
        for name in (self.original_column, SCORE_COLUMN, STS_COLUMN):
            if name in batch:
                raise ValueError(
                    f"The dataset already has a column {name!r} (watermarked before?): remove or "
                    "rename it first, e.g. `dataset.rename_column(...)`, so nothing is overwritten."
                )
        if self.id is None:
            raw_ids = self._column(batch, self.id_column)
            ids = [
                check_watermark_id(value, f"{self.id_column} (batch row {i})")
                for i, value in enumerate(raw_ids)
            ]
        else:
            ids = [self.id] * len(texts)

        rows = [i for i, text in enumerate(texts) if isinstance(text, str) and text.strip()]
        output = list(texts)
        scores = [math.nan] * len(texts)
        similarities = [math.nan] * len(texts)
        if rows:
            chosen, chosen_scores, chosen_sts = self._watermark(
                [texts[i] for i in rows], [ids[i] for i in rows]
            )
            for i, text, score, sts in zip(rows, chosen, chosen_scores, chosen_sts, strict=True):
                output[i], scores[i], similarities[i] = text, score, sts

        skipped = len(texts) - len(rows)
        self.num_skipped += skipped
        self.num_watermarked += len(rows)
        if skipped:
            logger.warning(
                "%d of %d rows have no text to watermark (missing, not a string, or blank); they "
                "are kept unwatermarked with a NaN %s (%d such rows so far).",
                skipped,
                len(texts),
                SCORE_COLUMN,
                self.num_skipped,
            )
        result = {self.text_column: output, self.original_column: list(texts), SCORE_COLUMN: scores}
        if self.sts_model is not None:
            result[STS_COLUMN] = similarities
        return result

    # ------------------------------------------------------------------------------------
    # Generation

    def _watermark(
        self, texts: list[str], ids: list[int]
    ) -> tuple[list[str], list[float], list[float]]:
        """Paraphrase ``texts`` under ``ids``; return the chosen texts, their q and STS."""
        prompts = [self._prompt_ids(text) for text in texts]
        order = sorted(range(len(texts)), key=lambda i: len(prompts[i]))  # less padding
        chunks = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        chosen: list[str] = [""] * len(texts)
        chosen_scores = [math.nan] * len(texts)
        chosen_sts = [math.nan] * len(texts)
        verifier = Verifier(self.tokenizer, k_p=self.k_p, n_gram=self.n_gram, show_progress=False)
        was_training = getattr(self.model, "training", False)
        self.model.eval()
        try:
            for chunk in progress_bar(
                chunks, desc="Watermarking", unit="batch", enabled=self.show_progress
            ):
                candidates = self._generate(
                    [prompts[i] for i in chunk],
                    [texts[i] for i in chunk],
                    np.array([ids[i] for i in chunk]),
                )
                q = self._scores(verifier, candidates, [ids[i] for i in chunk])
                ranking = np.where(np.isnan(q), -np.inf, q)
                sts = np.full_like(q, math.nan)
                if self.sts_model is not None:
                    sts = self._similarity([texts[i] for i in chunk], candidates)
                    ranking = ranking + self.sts_weight * sts
                best = np.argmax(ranking, axis=1)
                for row, i in enumerate(chunk):
                    chosen[i] = candidates[row][best[row]]
                    chosen_scores[i] = float(q[row, best[row]])
                    chosen_sts[i] = float(sts[row, best[row]])
        finally:
            self.model.train(was_training)
        return chosen, chosen_scores, chosen_sts

    def _scores(
        self, verifier: Verifier, candidates: list[list[str]], ids: list[int]
    ) -> np.ndarray:
        """Watermark score of every candidate under its row's key, ``(rows, candidates)``.

        Candidates too short to score (an empty answer) get NaN without a warning each.
        """
        token_ids = verifier.token_ids([c for row in candidates for c in row])
        keys = np.repeat(ids, self.num_candidates)
        scorable = [i for i, tokens in enumerate(token_ids) if len(tokens) >= self.n_gram]
        q = np.full(len(token_ids), math.nan)
        if scorable:
            q[scorable] = verifier.score_token_ids([token_ids[i] for i in scorable], keys[scorable])
        return q.reshape(len(candidates), self.num_candidates)

    def _generate(
        self, prompts: list[list[int]], texts: list[str], ids: np.ndarray
    ) -> list[list[str]]:
        """``num_candidates`` decoded candidates for each prompt."""
        candidates = []
        for row in self._generate_tokens(prompts, texts, ids):
            decoded = []
            for tokens in row:
                text = self.tokenizer.decode(tokens, skip_special_tokens=True).strip()
                if self.stop_at_double_newline:  # also a blank line made of several tokens
                    text = BLANK_LINES.split(text, maxsplit=1)[0]
                decoded.append(text)
            candidates.append(decoded)
        return candidates

    def _generate_tokens(
        self, prompts: list[list[int]], texts: list[str], ids: np.ndarray
    ) -> list[list[list[int]]]:
        """Generated token ids (up to the first end token) of each prompt's candidates."""
        device = self.model.device
        pad_id = self.tokenizer.pad_token_id
        if pad_id is None:
            pad_id = self._eos_token_ids()[0]
        length = max(len(p) for p in prompts)
        input_ids = torch.full((len(prompts), length), pad_id, dtype=torch.long)
        attention_mask = torch.zeros((len(prompts), length), dtype=torch.long)
        for row, prompt in enumerate(prompts):  # left padding, as decoder-only generation needs
            input_ids[row, length - len(prompt) :] = torch.tensor(prompt)
            attention_mask[row, length - len(prompt) :] = 1
        inputs = {"input_ids": input_ids.to(device), "attention_mask": attention_mask.to(device)}
        max_new_tokens = self.max_new_tokens
        if max_new_tokens is None:
            longest = max(
                len(t) for t in self.tokenizer(texts, add_special_tokens=False)["input_ids"]
            )
            max_new_tokens = math.ceil(1.5 * longest) + 16
        processor = self._perturbation()

        if self.do_sample:
            processor.reset(ids, prompt_length=length)
            warpers: list[LogitsProcessor] = []
            if self.temperature != 1.0:
                warpers.append(TemperatureLogitsWarper(self.temperature))
            if self.top_p < 1.0:
                warpers.append(TopPLogitsWarper(self.top_p))
            config = self._generation_config(max_new_tokens, pad_id, self.num_candidates)
            with seeded(self._chunk_seed(texts), device):
                outputs = [
                    self.model.generate(
                        **inputs,
                        generation_config=config,
                        logits_processor=LogitsProcessorList([*warpers, processor]),
                    )
                ]
        else:
            diversity = _GroupDiversity(self.diversity_penalty, self.beams_per_group, length)
            config = self._generation_config(max_new_tokens, pad_id, self.beams_per_group)
            outputs = []
            for _ in range(self.num_beam_groups):
                processor.reset(ids, prompt_length=length)
                diversity.start_group()
                outputs.append(
                    self.model.generate(
                        **inputs,
                        generation_config=config,
                        logits_processor=LogitsProcessorList([diversity, processor]),
                    )
                )

        per_row = outputs[0].shape[0] // len(prompts)
        eos = set(self._eos_token_ids())
        candidates = []
        for row in range(len(prompts)):
            tokens = []
            for sequences in outputs:
                for generated in sequences[row * per_row : (row + 1) * per_row, length:].tolist():
                    end = next((j for j, t in enumerate(generated) if t in eos), len(generated))
                    tokens.append(generated[:end])
            candidates.append(tokens)
        return candidates

    def _generation_config(
        self, max_new_tokens: int, pad_id: int, per_row: int
    ) -> GenerationConfig:
        """An explicit config, so that no default of the model or of transformers sneaks in."""
        common = {
            "max_new_tokens": max_new_tokens,
            "num_return_sequences": per_row,
            "eos_token_id": self._eos_token_ids(),
            "pad_token_id": pad_id,
            "repetition_penalty": self.repetition_penalty,
            "no_repeat_ngram_size": 0,
            "num_beam_groups": 1,
            "diversity_penalty": 0.0,
            "use_cache": True,
        }
        if self.do_sample:
            # Temperature and top-p run before the perturbation (our warpers); the rest are off,
            # top_k=0 included: transformers' global top_k=50 default (or a model's own sampling
            # defaults) would otherwise cut the distribution after the perturbation.
            return unfiltered_sampling_config(**common)
        return GenerationConfig(
            do_sample=False, num_beams=per_row, length_penalty=1.0, early_stopping=False, **common
        )

    def _perturbation(self) -> WaterfallLogitsProcessor:
        """The perturbation processor for the current settings (its permutation cache persists)."""
        processor = self._processor
        if processor is None or (processor.kappa, processor.k_p, processor.n_gram) != (
            self.kappa,
            self.k_p,
            self.n_gram,
        ):
            processor = self._processor = WaterfallLogitsProcessor(
                self.vocab_size, 0, kappa=self.kappa, k_p=self.k_p, n_gram=self.n_gram
            )  # the ids are set per generation batch
        return processor

    def _prompt_ids(self, text: str) -> list[int]:
        """Token ids of the paraphrasing prompt for ``text``."""
        return paraphrase_prompt_ids(
            self.tokenizer,
            text,
            instruction=self.prompt,
            response_prefix=self.response_prefix,
            flatten_blank_lines=self.stop_at_double_newline,
        )

    def _eos_token_ids(self) -> list[int]:
        """The model's and tokenizer's end tokens, plus blank-line tokens when asked."""
        ids: list[int] = []
        for source in (getattr(self.model, "generation_config", None), self.tokenizer):
            value = getattr(source, "eos_token_id", None)
            ids.extend([value] if isinstance(value, int) else list(value or []))
        if not ids:
            raise ValueError(
                "The tokenizer has no eos_token_id: set one (tokenizer.eos_token = ...)."
            )
        if self.stop_at_double_newline:
            if self._blank_line_ids is None:
                pieces = self.tokenizer.batch_decode([[t] for t in range(self.vocab_size)])
                self._blank_line_ids = [t for t, piece in enumerate(pieces) if "\n\n" in piece]
            ids.extend(self._blank_line_ids)
        return list(dict.fromkeys(ids))

    def _chunk_seed(self, texts: list[str]) -> int | None:
        """A sampling seed that depends only on ``seed`` and the texts of the batch."""
        if self.seed is None:
            return None
        digest = hashlib.sha256("\0".join([str(self.seed), *texts]).encode()).digest()
        return int.from_bytes(digest[:8], "little") >> 1

    def _similarity(self, originals: list[str], candidates: list[list[str]]) -> np.ndarray:
        """Cosine similarity of each candidate to its original, ``(texts, candidates)``."""
        flat = [c for row in candidates for c in row]
        with torch.no_grad():
            embeddings = self.sts_model.encode(originals + flat, convert_to_tensor=True)
        embeddings = torch.nn.functional.normalize(embeddings.float(), dim=-1)
        originals_emb = embeddings[: len(originals)].repeat_interleave(self.num_candidates, dim=0)
        cosine = (originals_emb * embeddings[len(originals) :]).sum(-1)
        return cosine.reshape(len(originals), self.num_candidates).cpu().numpy().astype(np.float64)

    def _column(self, batch: Any, name: str) -> Any:
        if name not in batch:
            raise ValueError(
                f"Column {name!r} not found; the dataset has {sorted(batch.keys())}. Pass "
                f"`{'text_column' if name == self.text_column else 'id_column'}=` (or a fixed "
                "`id=` for the key)."
            )
        return batch[name]


class _GroupDiversity(LogitsProcessor):
    """Hamming diversity for diverse beam search run one group after the other.

    In diverse beam search (Vijayakumar et al., 2016) group ``g`` at step ``t`` is penalised
    for the tokens groups ``0..g-1`` chose at step ``t``; earlier groups never depend on later
    ones, so running the groups as consecutive ordinary beam searches gives the same search.
    This processor records the tokens each group's running beams chose at every step (seen as
    the last column of the next call's ``input_ids``) and subtracts ``penalty`` times their
    count from later groups' scores at the same step. The tokens a group chose at its very last
    step are never seen, so the next group runs that step unpenalised.
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

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
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


register_with_datasets_hasher(WatermarkedDataset)
