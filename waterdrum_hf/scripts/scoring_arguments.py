"""The scoring settings every scoring script takes (:class:`ScoringArguments`), and the checks
of what they cost on the texts at hand."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from waterdrum_hf.config import KEYWORDS, WaterDrumConfig, with_scoring_settings
from waterdrum_hf.scripts.parser import CliError
from waterdrum_hf.utils.error_text import first_line

NULL_REFERENCE_MEMORY_LIMIT = 2 * 1024**3
"""Bytes the null reference may take at most (see :func:`check_null_keys`)."""
MANY_NULL_KEYS = 10_000
"""Above this many null keys, a run warns that each key costs a pass over the texts."""


@dataclass
@with_scoring_settings()
class ScoringArguments:
    """The flat scoring settings as flags (``--scheme kgw --null-keys 100``), one per setting of
    :data:`~waterdrum_hf.config.SCORING_SETTINGS` (:func:`~waterdrum_hf.config.
    with_scoring_settings`), read by :meth:`WaterDrumConfig.from_keywords` like the
    ``evaluate`` module's keywords."""

    _argument_group_name: ClassVar[str] = "scoring (WaterDrumConfig.from_keywords)"

    def scoring_config(self, num_texts: int | None = None) -> WaterDrumConfig:
        """The :class:`~waterdrum_hf.WaterDrumConfig` of these flags (an empirical null's memory
        checked for ``num_texts`` texts: :func:`check_null_keys`); errors name the flags."""
        settings = {name: getattr(self, name) for name in KEYWORDS}
        try:
            config = WaterDrumConfig.from_keywords(settings)
        except (TypeError, ValueError) as error:
            message = first_line(error)
            for name in KEYWORDS:  # the user typed flags: name them as flags
                message = message.replace(f"`{name}`", "--" + name.replace("_", "-"))
            raise CliError(message) from None
        if num_texts is not None and config.null is not None and config.null.keys:
            check_null_keys(config.null.keys, num_texts)
        return config


def check_null_keys(null_keys: int, num_texts: int, option: str = "--null-keys") -> None:
    """Refuse a null reference that would not fit in memory, with the largest that would.

    Each key costs about 100 bytes (drawing distinct keys) and 24 bytes per text (its key,
    its token sums and their pooled values), so memory grows as texts x keys; the smallest
    p-value is ``1 / (1 + keys)``, so a thousand keys already resolve 0.001.
    """
    per_key = 100 + 24 * num_texts
    need = null_keys * per_key
    if need > NULL_REFERENCE_MEMORY_LIMIT:
        largest = NULL_REFERENCE_MEMORY_LIMIT // per_key
        raise CliError(
            f"{option} {null_keys} needs about {need / 1e9:.1f} GB of memory for {num_texts} "
            f"texts; give at most {largest} (1000 keys already resolve p-values down to 0.001)"
        )
    if null_keys > MANY_NULL_KEYS:
        print(
            f"warning: {option} {null_keys}: every key is a pass over the {num_texts} texts, "
            "so this is slow; 1000 keys already resolve p-values down to 0.001",
            file=sys.stderr,
        )


def check_n_gram(n_gram: int, texts: Sequence[Any], tokenizer: Any) -> None:
    """Refuse an n-gram longer than every text (in ``tokenizer``'s tokens): no text could be
    scored, and the skipped-text warning could only guess why."""
    texts = [text for text in texts if isinstance(text, str)]
    lengths = tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []
    longest = max((len(ids) for ids in lengths), default=0)
    if n_gram > longest:
        raise CliError(
            f"--n-gram {n_gram} is longer than every text (the longest has {longest} tokens of "
            "the watermark tokenizer), so no text could be scored; give the n-gram the texts "
            "are watermarked with (2 unless it was changed)"
        )


def empirical_null_keys(config: WaterDrumConfig) -> int | None:
    """The keys of an empirical null (which bound its p-values), else ``None``."""
    null = config.null
    return null.keys if null is not None and null.method == "empirical" else None
