"""The paper's similarity settings as data: forget set, retain side, holdout, owners' keys.

* ``no_duplicate``: the retain side is the retain owners' data.
* ``exact_duplicate``: plus a copy of the forget set's original texts re-watermarked with the
  *next* owner's key (owner ``(f + 1) mod n`` owns it, as in WaterDrum-Ax).
* ``semantic_duplicate``: plus a paraphrase of the forget set's original texts, watermarked with
  the next owner's key.

The built-in corpus is watermarked here (through the cached pipeline); WaterDrum-Ax comes
watermarked, with its duplicate splits and its held-out ``test`` abstracts.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from .config import ReproductionConfig


@dataclass(frozen=True)
class SettingData:
    """One similarity setting: what is trained on and who owns it."""

    name: str
    forget: list[str]
    """Forget texts, in order: the first k% of them is "the first k% of the forget set"."""
    forget_keys: list[int]
    retain: list[str]
    """Retain side: the retain owners' texts, then the duplicates (if any)."""
    retain_keys: list[int]
    holdout: list[str]
    """Texts like the forget set's that no model trains on (Min-k% Prob MIA)."""

    def __repr__(self) -> str:  # keys are secrets, even in a debugger
        return (
            f"SettingData({self.name!r}, forget={len(self.forget)}, retain={len(self.retain)}, "
            f"holdout={len(self.holdout)})"
        )


def toy_settings(config: ReproductionConfig, pipeline: Any, keys: list[int]) -> list[SettingData]:
    """The built-in corpus watermarked by the pipeline's model, in every configured setting."""
    from ..data import toy_corpus

    corpus = toy_corpus(
        config.owners, max_passages_per_owner=config.passages_per_owner + config.holdout_per_owner
    )
    originals: dict[int, list[str]] = {}
    for text, owner in zip(corpus["text"], corpus["owner_id"], strict=True):
        originals.setdefault(owner, []).append(text)
    forget_owners = range(config.owners - config.forget, config.owners)
    retain_owners = range(config.owners - config.forget)
    training = [(t, o) for o in range(config.owners) for t in originals[o][: config.passages_per_owner]]
    held = [(t, o) for o in forget_owners for t in originals[o][config.passages_per_owner:][: config.holdout_per_owner]]
    watermark = functools.partial(_watermark, config, pipeline)
    texts = watermark("corpus", [t for t, _ in training], [keys[o] for _, o in training])
    holdout = watermark("holdout", [t for t, _ in held], [keys[o] for _, o in held])
    owned = list(zip(texts, [o for _, o in training], strict=True))
    forget = [(t, keys[o]) for t, o in owned if o in forget_owners]
    retain = [(t, keys[o]) for t, o in owned if o in retain_owners]
    forget_originals = [t for t, o in training if o in forget_owners]
    next_keys = [keys[(o + 1) % config.owners] for _, o in training if o in forget_owners]
    duplicates = {}
    if "exact_duplicate" in config.settings:
        duplicates["exact_duplicate"] = watermark("exact-duplicate", forget_originals, next_keys)
    if "semantic_duplicate" in config.settings:
        paraphrased, _ = pipeline.watermark(  # the small model's rewrite, unwatermarked (kappa 0)
            "paraphrase", forget_originals, next_keys, kappa=0.0, seed=0, no_repeat_ngram_size=3
        )
        duplicates["semantic_duplicate"] = watermark("semantic-duplicate", paraphrased, next_keys)
    return [
        SettingData(
            name,
            [t for t, _ in forget],
            [k for _, k in forget],
            [t for t, _ in retain] + duplicates.get(name, []),
            [k for _, k in retain] + (next_keys if name in duplicates else []),
            holdout,
        )
        for name in config.settings
    ]


def ax_settings(config: ReproductionConfig) -> list[SettingData]:
    """WaterDrum-Ax (``config.dataset_config``) in every configured setting."""
    from ..data import load_waterdrum_ax

    kwargs = {"path": config.dataset_path} if config.dataset_path else {}

    def rows(name: str, split: str) -> list[tuple[str, int]]:
        data = load_waterdrum_ax(name, split=split, **kwargs)
        pairs = list(zip(data["text"], data["owner_id"], strict=True))
        if config.max_rows_per_owner is None:
            return pairs
        kept, counts = [], {}
        for text, owner in pairs:  # the first rows of each owner
            if counts.get(owner, 0) < config.max_rows_per_owner:
                kept.append((text, owner))
                counts[owner] = counts.get(owner, 0) + 1
        return kept

    forget = rows(config.dataset_config, "forget")
    retain = rows(config.dataset_config, "retain")
    forget_owners = {o for _, o in forget}
    holdout = [t for t, o in rows("test", "full") if o in forget_owners]
    duplicates = {name: rows(config.dataset_config, name) for name in config.settings if name != "no_duplicate"}
    return [
        SettingData(
            name,
            [t for t, _ in forget],
            [o for _, o in forget],
            [t for t, _ in retain] + [t for t, _ in duplicates.get(name, [])],
            [o for _, o in retain] + [o for _, o in duplicates.get(name, [])],
            holdout,
        )
        for name in config.settings
    ]


def _watermark(config: ReproductionConfig, pipeline: Any, name: str, texts: list[str], keys: list[int]) -> list[str]:
    """Toy texts watermarked as ``config.watermarking`` says (cached)."""
    from .._fingerprint import key_digest
    from .substitution import substitution_watermark

    if config.watermarking == "paraphrase":
        watermarked, _ = pipeline.watermark(
            name, texts, keys, kappa=config.kappa, seed=0, no_repeat_ngram_size=3
        )  # the tiny paraphraser loops without the n-gram rule
        return watermarked
    stage = pipeline.cache.stage(
        f"substituted-{name}",
        {"texts": texts, "keys": [key_digest(k) for k in keys], "kappa": config.kappa,
         "copy_bias": config.copy_bias},
        pipeline.base,
    )
    return pipeline.cached(stage, lambda: substitution_watermark(
        pipeline.model, pipeline.tokenizer, texts, keys, kappa=config.kappa, copy_bias=config.copy_bias
    ))
