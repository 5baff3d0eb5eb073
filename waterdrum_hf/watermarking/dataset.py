"""Waterfall watermarking of a ``datasets.Dataset``: a map function that paraphrases with a key.

``dataset.map(WatermarkedDataset(model, tokenizer), batched=True)`` asks ``model`` to
paraphrase every text while :class:`~waterdrum_hf.schemes.waterfall.processor.WaterfallLogitsProcessor` adds
the owner's key-dependent perturbation, then keeps the best of several candidates. The result
verifies with :func:`waterdrum_hf.verify_texts` (and ``waterfall``'s own verifier) under the
row's key and the paraphraser's tokenizer.

Generation runs through the installed ``transformers`` directly, not through
``waterfall.Watermarker.generate``: on transformers >= 5.3 that one routes every call through a
bundled group-beam-search ``custom_generate`` that rejects sampling, and lets the global
``top_k=50`` default cut the distribution after the perturbation.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
import torch

from waterdrum_hf._version import library_version
from waterdrum_hf.generation.paraphraser import Paraphraser
from waterdrum_hf.keys import check_watermark_id
from waterdrum_hf.scoring.verification import SCORE_COLUMN, Verifier
from waterdrum_hf.utils.fingerprint import (
    json_digest,
    key_digest,
    module_identity,
    register_with_datasets_hasher,
    tokenizer_identity,
)
from waterdrum_hf.utils.progress import progress_bar
from waterdrum_hf.utils.torch_plumbing import inference_mode
from waterdrum_hf.watermarking.config import WatermarkingConfig

logger = logging.getLogger(__name__)

STS_COLUMN = "watermark_sts"


class WatermarkedDataset:
    """Watermark the texts of a dataset with Waterfall, as a batched ``datasets`` map function.

    Example::

        wm = WatermarkedDataset(model, tokenizer, id_column="owner_id")
        watermarked = dataset.map(wm, batched=True, batch_size=64)

    Every text is paraphrased by ``model`` under the key of its row (``config.id_column``, or
    the fixed ``watermark_id``); :class:`~waterdrum_hf.generation.paraphraser.Paraphraser` makes the
    candidates, by diverse beam search (the paper's setting) or by sampling
    (``do_sample=True``). The chosen candidate maximises ``sts_weight * STS + q`` with an STS
    model, ``q`` without, where ``q`` is its watermark score under the row's key.

    Output columns: ``text_column`` holds the watermarked text, ``<text_column>_original`` the
    input text, ``watermark_score`` the chosen text's ``q`` and, with an STS model,
    ``watermark_sts`` its similarity to the original. Every other column passes through. A row
    whose text is not a non-empty string is kept unchanged with NaN scores and counted in
    :attr:`num_skipped` (and logged, as a count); a row whose candidates all came out empty
    gets an empty text and a NaN score.

    Caching: ``datasets`` fingerprints this callable from its configuration (``asdict``), the
    model's ``name_or_path``/commit/dtype (a hash of the weights when the model has no name),
    the tokenizer's content, the package version and a slow one-way hash of ``watermark_id``, never from
    pickled weights. A model changed in memory after loading keeps its name: pass
    ``new_fingerprint`` to ``map`` then. The ``watermark_id`` is never printed or logged.

    Args:
        model: causal LM that paraphrases (an instruction-tuned one in practice); it stays on
            its device and generation runs there.
        tokenizer: the model's tokenizer. Its ``vocab_size`` is the watermark's N and
            verification must use the same tokenizer.
        config: a :class:`WatermarkingConfig`; ``None`` for the defaults (the paper's).
        watermark_id: one watermark id for every row, instead of ``config.id_column``.
        sts_model: a ``sentence_transformers.SentenceTransformer`` (anything with ``encode``)
            to rank candidates by semantic similarity; ``None`` ranks by ``q`` alone.
        **overrides: fields of :class:`WatermarkingConfig` to change (``kappa=3.0``, ...).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        config: WatermarkingConfig | None = None,
        *,
        watermark_id: int | None = None,
        sts_model: Any | None = None,
        **overrides: Any,
    ) -> None:
        if not callable(getattr(model, "generate", None)):
            raise TypeError(
                f"`model` must be a transformers causal LM with `generate`, got {type(model).__name__}."
            )
        if not hasattr(tokenizer, "vocab_size") or not callable(tokenizer):
            raise TypeError(
                f"`tokenizer` must be the model's transformers tokenizer, got {type(tokenizer).__name__}."
            )
        if sts_model is not None and (
            isinstance(sts_model, str) or not callable(getattr(sts_model, "encode", None))
        ):
            raise TypeError(
                "`sts_model` must be a loaded sentence-transformers model (with `encode`), e.g. "
                "`SentenceTransformer('sentence-transformers/all-mpnet-base-v2')`, or None."
            )
        if config is not None and not isinstance(config, WatermarkingConfig):
            raise TypeError(f"`config` must be a WatermarkingConfig, got {type(config).__name__}.")
        config = (config or WatermarkingConfig()).updated(**overrides)
        if config.repetition_penalty is None:  # the model's own, as Waterfall does
            default = getattr(getattr(model, "generation_config", None), "repetition_penalty", None)
            config = config.updated(repetition_penalty=float(default or 1.0))
        self.config = config
        self.vocab_size = int(tokenizer.vocab_size)
        self.config.watermark_scheme().check_vocab_size(self.vocab_size)  # e.g. k_p fits it
        self.model = model
        self.tokenizer = tokenizer
        self.watermark_id = (
            None if watermark_id is None else check_watermark_id(watermark_id, "watermark_id")
        )
        self.sts_model = sts_model
        self.num_skipped = 0
        """Rows left unwatermarked (text missing, not a string or blank) by calls in this process."""
        self.num_watermarked = 0
        """Rows watermarked by calls in this process (a map served from the cache adds none)."""
        watermark = self.config.watermark_scheme().logits_processor(
            self.vocab_size, 0, **self.config.writer_settings()
        )  # the ids are set per generation batch
        self.paraphraser = Paraphraser(model, tokenizer, self.config, watermark)
        self._identity: dict[str, Any] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_with_datasets_hasher(cls)

    def __repr__(self) -> str:
        name = getattr(self.model, "name_or_path", "") or type(self.model).__name__
        key = (
            "watermark_id=<secret>"
            if self.watermark_id is not None
            else f"id_column={self.config.id_column!r}"
        )
        sts = type(self.sts_model).__name__ if self.sts_model is not None else None
        return (
            f"{type(self).__name__}(model={name!r}, {key}, sts_model={sts}, config={self.config})"
        )

    @property
    def original_column(self) -> str:
        """Name of the column that keeps the input text."""
        return f"{self.config.text_column}_original"

    @property
    def fingerprint(self) -> str:
        """Stable digest of everything that decides the output; what ``datasets`` hashes."""
        if self._identity is None:
            self._identity = {
                "model": module_identity(self.model),
                "tokenizer": tokenizer_identity(self.tokenizer),
                "sts_model": None if self.sts_model is None else module_identity(self.sts_model),
            }
        payload = {
            "class": type(self).__qualname__,
            "version": library_version(),
            "config": self.config.fingerprint_fields(),
            "key": None if self.watermark_id is None else key_digest(self.watermark_id),
            **self._identity,
        }
        return json_digest(payload)

    def __call__(self, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        """Watermark one batch of rows (``dataset.map(..., batched=True)`` calls this)."""
        config = self.config
        texts = self._column(batch, config.text_column, "text_column")
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
        if self.watermark_id is None:
            raw_ids = self._column(batch, config.id_column, "id_column")
            ids = [
                check_watermark_id(value, f"{config.id_column} (batch row {i})")
                for i, value in enumerate(raw_ids)
            ]
        else:
            ids = [self.watermark_id] * len(texts)

        rows = [i for i, text in enumerate(texts) if isinstance(text, str) and text.strip()]
        output, scores, similarities = self._watermark(texts, ids, rows)

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
        result = {config.text_column: output, self.original_column: texts, SCORE_COLUMN: scores}
        if self.sts_model is not None:
            result[STS_COLUMN] = similarities
        return result

    def _watermark(
        self, texts: list[Any], ids: list[int], rows: list[int]
    ) -> tuple[list[Any], list[float], list[float]]:
        """Paraphrase the ``rows`` of ``texts`` under their ``ids``; return the texts with those
        rows replaced by the chosen paraphrases, and each row's q and STS (NaN for the others)."""
        chosen = list(texts)
        chosen_scores = [math.nan] * len(texts)
        chosen_sts = [math.nan] * len(texts)
        if not rows:
            return chosen, chosen_scores, chosen_sts
        prompts = {i: self.paraphraser.prompt_ids(texts[i]) for i in rows}
        order = sorted(rows, key=lambda i: len(prompts[i]))  # less padding
        size = self.config.batch_size
        chunks = [order[i : i + size] for i in range(0, len(order), size)]
        verifier = Verifier(self.tokenizer, self.config.watermark_scheme(), show_progress=False)
        bar = progress_bar(
            chunks, desc="Watermarking", unit="batch", enabled=self.config.show_progress
        )
        with inference_mode(self.model):
            for chunk in bar:
                candidates = self.paraphraser.candidates(
                    [prompts[i] for i in chunk], [texts[i] for i in chunk], [ids[i] for i in chunk]
                )
                q = self._scores(verifier, candidates, [ids[i] for i in chunk])
                ranking = np.where(np.isnan(q), -np.inf, q)
                sts = np.full_like(q, math.nan)
                if self.sts_model is not None:
                    sts = self._similarity(self.sts_model, [texts[i] for i in chunk], candidates)
                    ranking = ranking + self.config.sts_weight * sts
                best = np.argmax(ranking, axis=1)
                for row, i in enumerate(chunk):
                    chosen[i] = candidates[row][best[row]]
                    chosen_scores[i] = float(q[row, best[row]])
                    chosen_sts[i] = float(sts[row, best[row]])
        return chosen, chosen_scores, chosen_sts

    def _scores(
        self, verifier: Verifier, candidates: list[list[str]], ids: list[int]
    ) -> np.ndarray:
        """Watermark score of every candidate under its row's key, ``(rows, candidates)``.

        Candidates too short to score (an empty answer) get NaN without a warning each.
        """
        token_ids = verifier.token_ids([c for row in candidates for c in row])
        keys = np.repeat(ids, self.config.num_candidates)
        scorable = [i for i, tokens in enumerate(token_ids) if len(tokens) >= verifier.n_gram]
        q = np.full(len(token_ids), math.nan)
        if scorable:
            q[scorable] = verifier.score_token_ids([token_ids[i] for i in scorable], keys[scorable])
        return q.reshape(len(candidates), self.config.num_candidates)

    def _similarity(
        self, sts_model: Any, originals: list[str], candidates: list[list[str]]
    ) -> np.ndarray:
        """Cosine similarity of each candidate to its original, ``(texts, candidates)``."""
        flat = [c for row in candidates for c in row]
        with torch.no_grad():
            embeddings = sts_model.encode(originals + flat, convert_to_tensor=True)
        embeddings = torch.nn.functional.normalize(embeddings.float(), dim=-1)
        per_text = self.config.num_candidates
        originals_emb = embeddings[: len(originals)].repeat_interleave(per_text, dim=0)
        cosine = (originals_emb * embeddings[len(originals) :]).sum(-1)
        return cosine.reshape(len(originals), per_text).cpu().numpy().astype(np.float64)

    @staticmethod
    def _column(batch: Any, name: str, argument: str) -> Any:
        if name not in batch:
            raise ValueError(
                f"Column {name!r} not found; the dataset has {sorted(batch.keys())}. Pass "
                f"`{argument}=` (or a fixed `watermark_id=` for the key)."
            )
        return batch[name]


register_with_datasets_hasher(WatermarkedDataset)
