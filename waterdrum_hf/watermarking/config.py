"""How :class:`~waterdrum_hf.WatermarkedDataset` paraphrases: one dataclass, validated.

:class:`WatermarkingConfig` is a :class:`~waterdrum_hf.generation.paraphrase_config.ParaphraseConfig`
(how the model paraphrases) with the watermark scheme, its settings and the dataset's columns.
Every field carries ``help`` metadata, so ``transformers.HfArgumentParser(WatermarkingConfig)``
makes a command line of it, and every field except the runtime-only ones
(:attr:`WatermarkingConfig.RUNTIME_FIELDS`) goes into the ``datasets`` cache fingerprint through ``asdict``, so a
new field can never be forgotten there. The watermark key is not part of the configuration:
it is a secret, and configurations get printed, logged and saved.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar

from waterdrum_hf.generation.paraphrase_config import ParaphraseConfig
from waterdrum_hf.utils.fields import flag
from waterdrum_hf.utils.validation import (
    check_finite_at_least,
    check_positive_fields,
    check_positive_int,
)

if TYPE_CHECKING:
    from waterdrum_hf.schemes import WatermarkScheme


SCHEME_SETTINGS = {
    "waterfall": ("kappa", "k_p"),
    "kgw": ("gamma", "delta"),
    "synthid": ("depth", "sampling_table_size", "sampling_table_seed", "context_history_size"),
    "exp_edit": ("key_length", "gamma_edit", "block_size"),
}
"""Each scheme's own fields of :class:`WatermarkingConfig`: its reading settings (the scheme's
fields, :data:`~waterdrum_hf.schemes.registry.READING_SETTINGS`, with the same defaults) and
its writing ones (keywords of its ``logits_processor``)."""


@dataclass(frozen=True)
class WatermarkingConfig(ParaphraseConfig):
    """Settings of watermarking by paraphrase (defaults: the paper's, with Waterfall).

    ``scheme`` picks the watermark; ``kappa`` and ``k_p`` are Waterfall's settings, ``gamma``
    and ``delta`` adapted KGW's, ``depth``, ``sampling_table_size``, ``sampling_table_seed``
    and ``context_history_size`` adapted Synth-ID's, ``key_length``, ``gamma_edit`` and
    ``block_size`` adapted EXP-edit's (:data:`SCHEME_SETTINGS`). Changing a setting of a scheme
    not chosen is refused. Synth-ID and EXP-edit sample (``do_sample=True``): Synth-ID's
    tournament is a sampling procedure, and EXP-edit's exponential minimum sampling leaves one
    token per row; beam search with either is refused.
    """

    text_column: str = flag("text", "Column with the texts to watermark.")
    id_column: str = flag(
        "owner_id",
        "Column with each row's watermark id (0..2**32-1); unused with a fixed `watermark_id`.",
    )
    scheme: str = flag(
        "waterfall",
        "Watermark scheme: waterfall (the paper's), kgw (adapted KGW), synthid (adapted "
        "Synth-ID) or exp_edit (adapted EXP-edit); the last two with do_sample.",
        choices=tuple(SCHEME_SETTINGS),
    )
    kappa: float = flag(2.0, "Waterfall's perturbation strength (the paper uses 2).")
    k_p: int = flag(1, "Waterfall's watermarking function number (the paper uses 1).")
    gamma: float = flag(0.5, "KGW's green share of the vocabulary in each context.")
    delta: float = flag(2.0, "KGW's logit bias on green tokens.")
    depth: int = flag(30, "Synth-ID's tournament layers (keys per owner).")
    sampling_table_size: int = flag(2**16, "Synth-ID's g-value table size.")
    sampling_table_seed: int = flag(0, "Synth-ID's g-value table seed.")
    context_history_size: int = flag(
        1024, "Synth-ID's remembered contexts per row (a repeated one is not watermarked)."
    )
    key_length: int = flag(256, "EXP-edit's key sequence length per owner.")
    gamma_edit: float = flag(0.0, "EXP-edit's alignment cost per inserted or deleted token.")
    block_size: int | None = flag(
        None, "EXP-edit's window of tokens the statistic is minimised over (None: whole text)."
    )
    n_gram: int | None = flag(
        None, "Watermark context length plus one; None: the scheme's (2, the paper's; Synth-ID 5)."
    )
    sts_weight: float = flag(
        2.0, "Weight of semantic similarity when ranking candidates (with an STS model)."
    )
    show_progress: bool | None = flag(
        None, "Progress bar over batches; None shows it on a terminal."
    )

    _argument_group_name: ClassVar[str] = (
        "WatermarkingConfig options"  # HfArgumentParser's --help section
    )

    RUNTIME_FIELDS: ClassVar[frozenset[str]] = frozenset({"show_progress"})
    """Fields that do not change the output, left out of the fingerprint. A field missing here
    errs on the safe side: it changes the fingerprint (a cache miss, never a stale hit)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("text_column", "id_column"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise TypeError(f"`{name}` must be a non-empty string.")
        check_positive_fields(self, "context_history_size")
        if self.n_gram is not None:
            check_positive_int(self.n_gram, "n_gram", minimum=2)
        check_positive_int(self.k_p, "k_p")  # its upper bound depends on the vocabulary
        self._check_scheme_settings()
        for name, low in (("kappa", 0.0), ("delta", 0.0), ("sts_weight", -math.inf)):
            check_finite_at_least(getattr(self, name), name, low)

    def _check_scheme_settings(self) -> None:
        """The chosen scheme's settings are valid; the other scheme's are left at their defaults."""
        if self.scheme not in SCHEME_SETTINGS:
            raise ValueError(
                f"`scheme` must be one of {sorted(SCHEME_SETTINGS)}, got {self.scheme!r}."
            )
        defaults = {f.name: f.default for f in fields(self)}
        for scheme, names in SCHEME_SETTINGS.items():
            changed = [
                n for n in names if scheme != self.scheme and getattr(self, n) != defaults[n]
            ]
            if changed:
                raise ValueError(
                    f"`{changed[0]}` is a setting of the {scheme} scheme, but scheme={self.scheme!r}: "
                    f"set {' and '.join(SCHEME_SETTINGS[self.scheme])} instead."
                )
        if self.watermark_scheme().requires_sampling and not self.do_sample:  # checks gamma...
            raise ValueError(
                f"scheme={self.scheme!r} watermarks by sampling (its writer draws the token; beam "
                "search would not write the watermark): pass do_sample=True."
            )

    def watermark_scheme(self) -> WatermarkScheme:
        """The scheme with its reading settings and ``n_gram`` (what verification needs)."""
        from waterdrum_hf.schemes.registry import READING_SETTINGS, resolve_scheme

        reading = {name: getattr(self, name) for name in READING_SETTINGS[self.scheme]}
        return resolve_scheme(self.scheme, **reading, n_gram=self.n_gram)

    def writer_settings(self) -> dict[str, Any]:
        """The chosen scheme's writing settings (its strength...), for its logits processor."""
        from waterdrum_hf.schemes.registry import READING_SETTINGS

        own = SCHEME_SETTINGS[self.scheme]
        return {n: getattr(self, n) for n in own if n not in READING_SETTINGS[self.scheme]}

    def fingerprint_fields(self) -> dict[str, object]:
        """The fields that decide the output, by name (everything but runtime settings;
        ``n_gram`` as the scheme resolves it)."""
        fields_ = {k: v for k, v in asdict(self).items() if k not in self.RUNTIME_FIELDS}
        return {**fields_, "n_gram": self.watermark_scheme().n_gram}
