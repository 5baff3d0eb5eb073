"""The demo's data: its owners (secret keys, display names, who is forgotten), their passages
watermarked, and the models trained on them (cached pipeline stages). The demo's stages and
the robustness benchmark build on these."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from waterdrum_hf.experiments.demo_config import DemoConfig
from waterdrum_hf.schemes import SCHEMES


@dataclass(frozen=True)
class DemoData:
    """The demo's owners and their passages, watermarked (:func:`watermark_corpus`).

    Owner ``i`` (0-based) is shown as ``owner-{i + 1}``; the last ``config.forget`` owners ask
    to be forgotten. ``keys`` are the owners' secret watermark ids: never shown.
    """

    keys: list[int] = field(repr=False)
    owners: list[int]
    """Each passage's owner (an index into ``keys``)."""
    originals: list[str] = field(repr=False)
    """The passages before watermarking (unwatermarked text of the same domain)."""
    texts: list[str] = field(repr=False)
    scores: list[float] = field(repr=False)
    """Each watermarked passage's score under its owner's key (the self-check)."""
    forget_owners: frozenset[int]

    @property
    def names(self) -> dict[int, str]:
        """Each owner's display name by key: ``owner-1``, ``owner-2``, ..."""
        return {key: f"owner-{i + 1}" for i, key in enumerate(self.keys)}

    @property
    def references(self) -> list[int]:
        """Each passage's owner key (what the metric takes as references)."""
        return [self.keys[o] for o in self.owners]

    @property
    def forget_ids(self) -> list[int]:
        """The forget owners' keys."""
        return [self.keys[o] for o in sorted(self.forget_owners)]

    @property
    def forget(self) -> list[str]:
        """The forget owners' watermarked passages."""
        return self._partition()[0]

    @property
    def retain(self) -> list[str]:
        """The retain owners' watermarked passages."""
        return self._partition()[1]

    def _partition(self) -> tuple[list[str], list[str]]:
        from waterdrum_hf.data import partition_by_owner

        return partition_by_owner(self.texts, self.owners, self.forget_owners)

    def queries(self, config: DemoConfig, tokenizer: Any) -> list[str]:
        """The demo's query of every passage: its first ``config.prefix_tokens`` tokens, at
        most half of it."""
        from waterdrum_hf.generation.prompting import completion_queries

        return completion_queries(
            self.texts, tokenizer, prefix_tokens=config.prefix_tokens, max_fraction=0.5
        )


def demo_corpus(config: DemoConfig) -> Any:
    """The toy corpus passages the demo's owners hold (a ``datasets.Dataset``)."""
    from waterdrum_hf.data import toy_corpus

    return toy_corpus(config.owners, max_passages_per_owner=config.passages_per_owner)


def watermark_corpus(config: DemoConfig, pipeline: Any, corpus: Any = None) -> DemoData:
    """The demo's owners (keys from ``config.seed``) and their passages of ``corpus``
    (default :func:`demo_corpus`) watermarked through ``pipeline`` (a cached stage)."""
    from waterdrum_hf.keys import random_keys

    corpus = demo_corpus(config) if corpus is None else corpus
    keys = random_keys(config.owners, seed=config.seed).tolist()  # secret: never shown
    owners = list(corpus["owner_id"])
    # No n-gram repeats: the tiny paraphraser falls into loops without that.
    texts, scores = pipeline.watermark(
        "corpus",
        list(corpus["text"]),
        [keys[o] for o in owners],
        seed=config.seed,
        no_repeat_ngram_size=3,
        scheme=config.scheme,
        do_sample=SCHEMES[config.scheme].requires_sampling,  # Synth-ID samples
    )
    return DemoData(
        keys=keys,
        owners=owners,
        originals=list(corpus["text"]),
        texts=texts,
        scores=scores,
        forget_owners=frozenset(range(config.owners - config.forget, config.owners)),
    )


def train_models(
    config: DemoConfig, pipeline: Any, data: DemoData, seed: int | None = None
) -> dict[str, Any]:
    """The original model (fine-tuned on every owner's passages) and the retrained one (on
    the retain owners' only) of the training run of ``seed`` (default: the first run's), as
    cached pipeline stages by name."""
    training = config.finetuning(seed)
    return {
        name: pipeline.finetune(name, texts, epochs=config.epochs, training=training)
        for name, texts in (("original", data.texts), ("retrained", data.retain))
    }
