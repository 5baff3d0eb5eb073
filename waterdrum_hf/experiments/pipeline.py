"""Cached experiment stages on one base model: watermark, fine-tune, unlearn, sample (the
training runs themselves are :mod:`~waterdrum_hf.experiments.training`'s).

The demo and the paper reproduction are sequences of these stages. Each stage's artefact (a
watermarked text list, a saved model, a set of generations) lives in a folder of a
:class:`~waterdrum_hf.experiments.stage_cache.StageCache` named by everything that produced it, so re-runs and
interrupted runs resume, and changed settings never reuse a stale artefact. Keys enter the
digests only through their slow one-way hash (:func:`waterdrum_hf.utils.fingerprint.key_digest`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from waterdrum_hf.experiments.stage_cache import Stage, StageCache
from waterdrum_hf.experiments.training import TrainingSettings, finetune, unlearn
from waterdrum_hf.utils.fingerprint import key_digest, module_identity
from waterdrum_hf.utils.progress import library_progress

COMPLETION_BATCH_SIZE = 64
"""Queries per batch of :meth:`CachedPipeline.completions` (sampled text depends on it)."""


class CachedPipeline:
    """Stages on ``model`` (the base every fine-tune starts from), cached under ``cache_dir``.

    Every saved model is saved with ``tokenizer``, so that its folder loads on its own (e.g.
    ``waterdrum score --model-name-or-path <folder>``).

    Args:
        model: the base causal LM; it also paraphrases when watermarking.
        tokenizer: its tokenizer (also the watermarking tokenizer).
        cache_dir: folder of the stages.
        show_progress: progress bars, those of loading and saving models included (``None``:
            on a terminal).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        cache_dir: str | Path,
        *,
        show_progress: bool | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.cache = StageCache(cache_dir)
        self.show_progress = show_progress
        self.base = self.cache.stage("base", module_identity(model))

    def watermark(
        self, name: str, texts: Sequence[str], keys: Sequence[int], **overrides: Any
    ) -> tuple[list[str], list[float]]:
        """``texts`` paraphrased under ``keys`` (one per text); returns texts and self-check q."""
        from datasets import Dataset

        from waterdrum_hf.scoring.verification import SCORE_COLUMN
        from waterdrum_hf.watermarking.dataset import WatermarkedDataset

        watermarker = WatermarkedDataset(
            self.model,
            self.tokenizer,
            id_column="key",
            show_progress=self.show_progress,
            **overrides,
        )
        stage = self.cache.stage(
            f"watermarked-{name}",
            {
                "texts": list(texts),
                "keys": [key_digest(int(k)) for k in keys],
                "watermarker": watermarker.fingerprint,
            },
        )

        def compute() -> dict[str, list[Any]]:
            rows = Dataset.from_dict({"text": list(texts), "key": [int(k) for k in keys]})
            with library_progress(self.show_progress):
                out = rows.map(watermarker, batched=True, batch_size=64, load_from_cache_file=False)
            return {"text": list(out["text"]), "score": list(out[SCORE_COLUMN])}

        data = self.cache.cached_json(stage, compute)
        return data["text"], data["score"]

    def save(self, model: Any, folder: Path) -> None:
        """``model`` and the tokenizer saved into ``folder`` (``save_pretrained``)."""
        with library_progress(self.show_progress):
            model.save_pretrained(folder)
        self.tokenizer.save_pretrained(folder)

    def finetune(
        self, name: str, texts: Sequence[str], *, epochs: int, training: TrainingSettings
    ) -> Stage:
        """The base model fine-tuned on ``texts`` (cached, saved with its tokenizer)."""
        stage = self.cache.stage(
            f"model-{name}",
            {
                "texts": list(texts),
                "epochs": epochs,
                "batch_size": training.batch_size,
                "learning_rate": training.learning_rate,
                "seed": training.seed,
            },
            self.base,
        )
        self.cache.build(
            stage,
            lambda folder: self.save(
                finetune(
                    self.model,
                    self.tokenizer,
                    list(texts),
                    folder,
                    epochs=epochs,
                    training=training,
                    show_progress=self.show_progress,
                ),
                folder,
            ),
        )
        return stage

    def unlearn(
        self,
        method: str,
        original: Stage,
        forget: Sequence[str],
        retain: Sequence[str],
        *,
        steps: int,
        training: TrainingSettings,
        callback: Any | None = None,
    ) -> tuple[Stage, list[dict[str, float]]]:
        """``original`` unlearnt with a registered method; returns it and the callback's curve
        (the callback's ``settings()`` describe it in the stage's digest)."""
        stage = self.cache.stage(
            f"model-{method.lower()}",
            {
                "method": method,
                "forget": list(forget),
                "retain": list(retain),
                "steps": steps,
                "learning_rate": training.learning_rate,
                "batch_size": training.batch_size,
                "seed": training.seed,
                "callback": callback.settings() if callback is not None else {},
            },
            original,
        )

        def build(folder: Path) -> None:
            model = unlearn(
                method,
                self.load(original),
                self.tokenizer,
                forget,
                retain,
                folder,
                steps=steps,
                training=training,
                callbacks=[callback] if callback is not None else [],
                show_progress=self.show_progress,
            )
            self.save(model, folder)
            history = callback.history if callback is not None else []
            curve = [
                {k: v for k, v in h.items() if k in ("step", "forget", "retain")} for h in history
            ]
            (folder / "curve.json").write_text(json.dumps(curve))

        return stage, self.cache.load_or_build(
            stage, build, lambda folder: json.loads((folder / "curve.json").read_text())
        )

    def relearned(self, model: Stage, texts: Sequence[str], config: Any) -> Stage:
        """``model`` fine-tuned on ``texts`` as the relearning audit does it
        (:func:`~waterdrum_hf.audits.relearn` with ``config``, an
        :class:`~waterdrum_hf.audits.AuditConfig`), cached."""
        from waterdrum_hf.audits.relearning import relearn

        stage = self.cache.stage(
            "model-relearned",
            {
                "texts": list(texts),
                "steps": config.relearn_steps,
                "learning_rate": config.relearn_learning_rate,
                "batch_size": config.relearn_batch_size,
                "seed": config.seed,
            },
            model,
        )
        self.cache.build(
            stage,
            lambda folder: self.save(
                relearn(
                    self.load(model),
                    self.tokenizer,
                    list(texts),
                    config,
                    show_progress=self.show_progress,
                ),
                folder,
            ),  # fmt: skip
        )
        return stage

    def quantized(self, model: Stage, bits: int) -> Stage:
        """``model`` with its Linear weights quantized to ``bits`` bits as the quantization
        audit does it (:func:`~waterdrum_hf.audits.quantize`), saved as the floats those
        weights stand for (a weight-only quantized model computes with them), so the stage
        loads and samples as any other; cached."""
        stage = self.cache.stage("model-quantized", {"bits": bits}, model)
        self.cache.build(stage, lambda folder: self.save(self._dequantized(model, bits), folder))
        return stage

    def _dequantized(self, model: Stage, bits: int) -> Any:
        """The float model whose Linear weights are ``model``'s quantized to ``bits`` bits."""
        import torch
        from torchao.utils import TorchAOBaseTensor

        from waterdrum_hf.audits.quantization import quantize

        quantized, _ = quantize(model.path, bits, show_progress=self.show_progress)
        result = self.load(model)
        with torch.no_grad():
            for name, module in quantized.named_modules():
                weight = getattr(module, "weight", None)
                if isinstance(weight, TorchAOBaseTensor):
                    target = result.get_submodule(name).weight
                    target.copy_(weight.dequantize().to(target.dtype))
        return result

    def completions(
        self,
        name: str,
        model_stage: Stage,
        queries: Sequence[str],
        *,
        num_samples: int,
        max_new_tokens: int,
        seed: int,
        greedy: bool = False,
        logits_processor: Any | None = None,
        processor_settings: Mapping[str, Any] | None = None,
    ) -> list[list[str]]:
        """Completions of ``queries`` by the model of ``model_stage`` (cached as JSON)."""
        from waterdrum_hf.generation.engine import generate

        stage = self.cache.stage(
            f"generations-{name}",
            {
                "queries": list(queries),
                "num_samples": num_samples,
                "max_new_tokens": max_new_tokens,
                "seed": seed,
                "greedy": greedy,
                "processor": dict(processor_settings or {}),
            },
            model_stage,
        )

        return self.cache.cached_json(
            stage,
            lambda: generate(
                self.load(model_stage),
                self.tokenizer,
                list(queries),
                num_samples=num_samples,
                max_new_tokens=max_new_tokens,
                seed=seed,
                batch_size=COMPLETION_BATCH_SIZE,
                greedy=greedy,
                logits_processor=logits_processor,
                show_progress=self.show_progress,
            ),
        )

    def audit_cache(self, stages: Mapping[str, Stage]) -> Callable[..., Any]:
        """The ``cache`` of :func:`waterdrum_hf.audits.run_audits` for the models of ``stages``
        (by name): each perturbed model's completions are a stage of its model."""

        def cache(model: str, audit: str, settings: Mapping[str, Any], compute: Callable[[], Any]):
            stage = self.cache.stage(f"audit-{model}-{audit}", dict(settings), stages[model])
            return self.cache.cached_json(stage, compute)

        return cache

    def base_stage(self) -> Stage:
        """The base model itself as a model stage (saved once), e.g. to sample from it."""
        self.cache.build(self.base, lambda folder: self.save(self.model, folder))
        return self.base

    def load(self, stage: Stage) -> Any:
        """The model saved by a model stage, in eval mode (on the GPU when there is one)."""
        from waterdrum_hf.utils.torch_plumbing import load_causal_lm

        with library_progress(self.show_progress):
            return load_causal_lm(stage.path)
