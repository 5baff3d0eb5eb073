"""How WaterDrum values are read from text: one frozen, typed configuration.

:class:`WaterDrumConfig` holds everything that decides a value besides the texts and the
owners: the watermark scheme with its own settings (Waterfall's ``k_p``, ``n_gram`` and
vocabulary size; KGW's ``gamma``...), how a query pools its samples, the null that says what
"no watermark" reads at, and the bootstrap interval. It is validated once, when built, and
travels whole through the metric, the callback, the audits, ``verify_dataset``, the command
line and the lm-evaluation-harness task; ``report.json`` and run fingerprints record its
:meth:`~WaterDrumConfig.to_dict`. The flat settings (the ``evaluate`` keywords, the scripts'
flags, ``WaterDrumArguments``' fields) are mapped here, once, by :meth:`WaterDrumConfig.from_keywords`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, Optional, TypeVar, get_args, get_type_hints

from waterdrum_hf.bootstrap import DEFAULT_RESAMPLES, check_confidence, check_resamples
from waterdrum_hf.schemes import (
    SCHEMES,
    WaterfallScheme,
    WatermarkScheme,
    resolve_scheme,
    scheme_from_settings,
)
from waterdrum_hf.schemes.registry import READING_SETTINGS, setting_help
from waterdrum_hf.utils.fields import flag
from waterdrum_hf.utils.validation import check_positive_int

Pooling = Literal["tokens", "mean"]
"""How a query pools its samples: token-weighted (the paper's) or the mean of sample scores."""

NullMethod = Literal["analytic", "empirical"]
"""The analytic null (exact moments from the token-pair counts) or random null keys."""

DEFAULT_NULL_KEYS = 100
"""Random keys of the empirical null when ``null="empirical"`` is given without ``null_keys``."""

SCHEME_KEYWORDS: tuple[str, ...] = tuple(
    dict.fromkeys(name for names in READING_SETTINGS.values() for name in names)
)
"""Every scheme's own reading settings (Waterfall's ``k_p``, KGW's ``gamma``, Synth-ID's
``depth``...), from the registry (:data:`waterdrum_hf.schemes.SCHEMES`): flat settings that
default to the scheme's own default, refused for another scheme."""


def _scheme_setting_type(name: str) -> Any:
    """The flag type of a scheme's own setting: the type the scheme declares, or ``None``."""
    owner = next(SCHEMES[s] for s, names in READING_SETTINGS.items() if name in names)
    return Optional[get_type_hints(owner)[name]]  # noqa: UP045


@dataclass(frozen=True)
class ScoringSetting:
    """One flat scoring setting: its type as a flag, its default and its help."""

    type: Any
    default: Any
    help: str


SCORING_SETTINGS: Mapping[str, ScoringSetting] = {
    "scheme": ScoringSetting(
        str,
        "waterfall",
        f"Watermark scheme of the data: {', '.join(SCHEMES)} (waterfall is the paper's).",
    ),
    **{
        name: ScoringSetting(_scheme_setting_type(name), None, setting_help(name))
        for name in SCHEME_KEYWORDS
    },
    "n_gram": ScoringSetting(
        Optional[int],  # noqa: UP045
        None,
        "Watermark n-gram: context length plus one (default: the scheme's, 2; Synth-ID's 5).",
    ),
    "vocab_size": ScoringSetting(
        Optional[int],  # noqa: UP045
        None,
        "Expected watermark vocabulary size (checked against the tokenizer).",
    ),
    "pooling": ScoringSetting(
        Pooling,
        "tokens",
        "How a query pools its samples: token-weighted (tokens, the paper's) or the mean.",
    ),
    "null": ScoringSetting(
        Optional[Literal["analytic", "empirical", "none"]],  # noqa: UP045
        None,
        "What 'no watermark' reads at: analytic (from the pair counts, a few percent of the "
        "scoring; the default), empirical (random keys, exact p; the default when null_keys > "
        "0) or none.",
    ),
    "null_keys": ScoringSetting(
        int,
        0,
        f"Random keys of the empirical null ({DEFAULT_NULL_KEYS} when null is empirical and "
        "this is 0).",
    ),
    "null_seed": ScoringSetting(int, 0, "Seed of the empirical null's keys."),
    "confidence": ScoringSetting(
        Optional[float],  # noqa: UP045
        None,
        "Level of bootstrap intervals over queries (e.g. 0.95); none by default.",
    ),
    "bootstrap_resamples": ScoringSetting(int, DEFAULT_RESAMPLES, "Resamples of the bootstrap."),
    "bootstrap_seed": ScoringSetting(int, 0, "Seed of the bootstrap."),
}
"""The one table of scoring settings, each with its type, default and help: the ``evaluate``
module's keywords, the commands' flags (:class:`~waterdrum_hf.scripts.scoring_arguments.
ScoringArguments`) and :class:`~waterdrum_hf.WaterDrumArguments`' ``waterdrum_*`` fields are
these names (:func:`with_scoring_settings`), read by one function
(:meth:`WaterDrumConfig.from_keywords`); :class:`WaterDrumConfig`'s own defaults are this
table's."""

KEYWORDS = tuple(SCORING_SETTINGS)
"""The names of :data:`SCORING_SETTINGS`."""

FlagsClass = TypeVar("FlagsClass", bound=type)


def with_scoring_settings(prefix: str = "") -> Callable[[FlagsClass], FlagsClass]:
    """A decorator (put it under ``@dataclass``) that gives a flags class one field
    ``prefix + name`` per setting of :data:`SCORING_SETTINGS`, after its own fields, with the
    table's type, default and help (``scheme`` takes the registry's names as its choices), so
    that every parser has the same settings and a scheme added to the registry has its flags
    everywhere at once. :meth:`WaterDrumConfig.from_keywords` reads them by name."""

    def add_fields(cls: FlagsClass) -> FlagsClass:
        annotations = dict(cls.__dict__.get("__annotations__", {}))
        for name, setting in SCORING_SETTINGS.items():
            annotations[prefix + name] = setting.type
            choices = tuple(SCHEMES) if name == "scheme" else None
            help = setting.help.replace("null_keys", f"{prefix}null_keys")
            setattr(cls, prefix + name, flag(setting.default, help, choices=choices))
        cls.__annotations__ = annotations
        return cls

    return add_fields


@dataclass(frozen=True)
class NullConfig:
    """What keys that own nothing read on the same texts: each value's null mean and spread,
    its ``z`` and a one-sided p-value of "no watermark".

    Args:
        method: ``"analytic"``: the exact null mean and spread from the token-pair counts
            (:mod:`waterdrum_hf.scoring.analytic_null`), p from the normal approximation; costs a few
            percent of the scoring. ``"empirical"``: every query scored under ``keys`` random
            keys; p is ``(1 + #{null >= value}) / (1 + keys)``; each key costs about one
            scoring pass.
        keys: the empirical null's random keys (> 0); 0 for the analytic null.
        seed: seed of those keys.
    """

    method: NullMethod = "analytic"
    keys: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.method not in get_args(NullMethod):
            raise ValueError(
                f"`null` must be 'empirical', 'analytic' or None (no null), got {self.method!r}."
            )
        object.__setattr__(self, "keys", check_positive_int(self.keys, "null_keys", minimum=0))
        object.__setattr__(self, "seed", check_positive_int(self.seed, "null_seed", minimum=0))
        if self.method == "empirical" and not self.keys:
            raise ValueError(
                "The empirical null needs `null_keys` > 0 (e.g. NullConfig('empirical', keys=100))."
            )
        if self.method == "analytic" and self.keys:
            raise ValueError(
                "`null_keys` is the empirical null's; with the analytic null leave it at 0 "
                "(NullConfig('analytic'), or NullConfig('empirical', keys=...))."
            )


@dataclass(frozen=True)
class IntervalConfig:
    """Percentile bootstrap intervals over queries, resampled within each owner
    (:mod:`waterdrum_hf.bootstrap` says why), on every set's value, the AUROC and, in the
    details, each owner's value.

    Args:
        confidence: the level, strictly between 0 and 1 (e.g. 0.95).
        resamples: bootstrap resamples (at least 100).
        seed: seed of the resampling: the same call gives the same interval.
    """

    confidence: float = 0.95
    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "confidence", check_confidence(self.confidence))
        object.__setattr__(self, "resamples", check_resamples(self.resamples))
        object.__setattr__(self, "seed", check_positive_int(self.seed, "bootstrap_seed", minimum=0))


@dataclass(frozen=True)
class WaterDrumConfig:
    """How WaterDrum values are read from generated text (the owners and texts aside).

    Args:
        scheme: the watermark the data carries, with its settings: a
            :class:`~waterdrum_hf.schemes.WaterfallScheme` (the default, the paper's ``k_p=1``,
            ``n_gram=2``), :class:`~waterdrum_hf.schemes.KGWScheme` or
            :class:`~waterdrum_hf.schemes.SynthIDScheme` (any of :data:`~waterdrum_hf.schemes.SCHEMES`).
        pooling: how a query pools its samples: ``"tokens"`` (token-weighted, the authors'
            choice: the mean term over all counted tokens of its samples) or ``"mean"`` (the
            mean of the sample scores).
        null: a :class:`NullConfig` for null levels, z-scores and p-values (the analytic
            null by default); ``None``: none.
        interval: an :class:`IntervalConfig` for bootstrap confidence intervals; ``None``:
            none (they cost ``resamples`` passes over the query values).

    The defaults are the flat settings' (``WaterDrumConfig() ==
    WaterDrumConfig.from_keywords({})``), so every entry point reads values alike unless told
    otherwise. ``WaterDrumConfig.from_dict(config.to_dict()) == config``; ``to_json``/
    ``from_json`` do the same through a JSON file or string.
    """

    scheme: WatermarkScheme = field(default_factory=WaterfallScheme)
    pooling: Pooling = "tokens"
    null: NullConfig | None = field(default_factory=NullConfig)
    interval: IntervalConfig | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.scheme, WatermarkScheme):
            raise TypeError(
                "`scheme` must be a WatermarkScheme, e.g. WaterfallScheme(k_p=1) or "
                f"KGWScheme(gamma=0.5), got {type(self.scheme).__name__}."
            )
        if self.pooling not in get_args(Pooling):
            raise ValueError(f"`pooling` must be 'tokens' or 'mean', got {self.pooling!r}.")
        for name, kind in (("null", NullConfig), ("interval", IntervalConfig)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                raise TypeError(
                    f"`{name}` must be a {kind.__name__} or None, got {type(value).__name__}."
                )

    def to_dict(self) -> dict[str, Any]:
        """JSON scalars and dicts: the scheme's settings, pooling, null and interval."""
        return {
            "scheme": self.scheme.settings(),
            "pooling": self.pooling,
            "null": None if self.null is None else _fields(self.null),
            "interval": None if self.interval is None else _fields(self.interval),
        }

    @classmethod
    def from_dict(cls, settings: Mapping[str, Any]) -> WaterDrumConfig:
        """The configuration back from :meth:`to_dict` (missing parts take their defaults)."""
        if not isinstance(settings, Mapping):
            raise TypeError(
                f"A WaterDrumConfig dict must be a dict, got {type(settings).__name__}."
            )
        unknown = sorted(set(settings) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"{unknown} are not parts of a WaterDrumConfig.")
        parts: dict[str, Any] = {"pooling": settings.get("pooling", "tokens")}
        if settings.get("scheme") is not None:
            parts["scheme"] = scheme_from_settings(settings["scheme"])
        for name, kind in (("null", NullConfig), ("interval", IntervalConfig)):
            if name in settings:
                value = settings[name]
                parts[name] = None if value is None else kind(**_checked_part(value, kind, name))
        return cls(**parts)

    def to_json(self, path: str | Path | None = None) -> str:
        """The configuration as JSON text; also written to ``path`` if given."""
        text = json.dumps(self.to_dict(), indent=2, sort_keys=True)
        if path is not None:
            Path(path).write_text(text + "\n", encoding="utf-8")
        return text

    @classmethod
    def from_json(cls, source: str | Path) -> WaterDrumConfig:
        """The configuration from a JSON file, or from JSON text (a string starting with ``{``)."""
        text = str(source)
        if not text.lstrip().startswith("{"):
            text = Path(source).read_text(encoding="utf-8")
        return cls.from_dict(json.loads(text))

    @classmethod
    def from_keywords(cls, keywords: Mapping[str, Any]) -> WaterDrumConfig:
        """The configuration of the flat settings (:data:`SCORING_SETTINGS`' names, absent ones at
        their defaults): the one place they are mapped, for the ``evaluate`` module, the command
        line and :class:`~waterdrum_hf.WaterDrumArguments` alike.

        The null: ``null`` unset is the analytic null, or the empirical one where ``null_keys``
        > 0; ``"empirical"`` without keys takes :data:`DEFAULT_NULL_KEYS`; ``"none"``: no null.
        ``null_seed`` and ``bootstrap_*`` are refused where nothing would use them.
        """
        unknown = sorted(set(keywords) - set(KEYWORDS))
        if unknown:
            raise TypeError(f"{unknown} are not WaterDrum settings (known: {list(KEYWORDS)}).")
        given = {name: keywords.get(name, s.default) for name, s in SCORING_SETTINGS.items()}
        settings = (*SCHEME_KEYWORDS, "n_gram", "vocab_size")  # None: the scheme's default
        scheme = resolve_scheme(given["scheme"], **{k: given[k] for k in settings})
        return cls(
            scheme=scheme,
            pooling=given["pooling"],
            null=_null_of_keywords(given),
            interval=_interval_of_keywords(given),
        )


def _fields(value: Any) -> dict[str, Any]:
    return {f.name: getattr(value, f.name) for f in fields(value)}


def _checked_part(value: Any, kind: type, name: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"`{name}` must be a dict of {kind.__name__} fields or null.")
    unknown = sorted(set(value) - {f.name for f in fields(kind)})
    if unknown:
        raise ValueError(f"{unknown} are not {kind.__name__} fields.")
    return dict(value)


def _null_of_keywords(given: Mapping[str, Any]) -> NullConfig | None:
    method: Any = given["null"]  # checked by NullConfig
    keys, seed = given["null_keys"], given["null_seed"]
    if method is None:
        method = "empirical" if keys else "analytic"
    if method == "empirical":
        return NullConfig(method, keys=keys or DEFAULT_NULL_KEYS, seed=seed)
    if keys or seed:
        raise ValueError(
            f"`null_keys` and `null_seed` are the empirical null's; not settings of null={method!r}."
        )
    return None if method == "none" else NullConfig(method)


def _interval_of_keywords(given: Mapping[str, Any]) -> IntervalConfig | None:
    confidence = given["confidence"]
    resamples, seed = given["bootstrap_resamples"], given["bootstrap_seed"]
    if confidence is None:
        if resamples != DEFAULT_RESAMPLES or seed:
            raise ValueError(
                "`bootstrap_resamples` and `bootstrap_seed` set the intervals: pass "
                "`confidence` (e.g. 0.95) with them."
            )
        return None
    return IntervalConfig(confidence, resamples=resamples, seed=seed)
