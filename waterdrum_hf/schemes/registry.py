"""Schemes by name, and the one place a scheme's settings are matched to the scheme."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from waterdrum_hf.schemes.base import WatermarkScheme
from waterdrum_hf.schemes.exp_edit.scheme import EXPEditScheme
from waterdrum_hf.schemes.kgw.scheme import KGWScheme
from waterdrum_hf.schemes.synthid.scheme import SynthIDScheme
from waterdrum_hf.schemes.waterfall.scheme import WaterfallScheme

SCHEMES: dict[str, type[WatermarkScheme]] = {
    "waterfall": WaterfallScheme,
    "kgw": KGWScheme,
    "synthid": SynthIDScheme,
    "exp_edit": EXPEditScheme,
}
"""Every scheme by the name configs and the command line use: adding a scheme here (with its
reading settings as its dataclass fields, each with ``help`` metadata) makes it known by name
to configs, the metric, the callback and the commands (their flat settings derive from
:data:`READING_SETTINGS`)."""

COMMON_SETTINGS: tuple[str, ...] = tuple(f.name for f in fields(WatermarkScheme))
"""Settings every scheme has: ``n_gram`` and ``vocab_size``."""

READING_SETTINGS: dict[str, tuple[str, ...]] = {
    name: tuple(f.name for f in fields(scheme) if f.name not in COMMON_SETTINGS)
    for name, scheme in SCHEMES.items()
}
"""Each scheme's own reading settings: Waterfall's ``k_p``, KGW's ``gamma``, Synth-ID's
``depth``, ``sampling_table_size`` and ``sampling_table_seed``, EXP-edit's ``key_length``,
``gamma_edit`` and ``block_size``."""


def setting_help(setting: str) -> str:
    """The help of a scheme's own reading setting (its field's ``help`` metadata)."""
    for scheme in SCHEMES.values():
        for spec in fields(scheme):
            if spec.name == setting and "help" in spec.metadata:
                return str(spec.metadata["help"])
    raise KeyError(setting)


def scheme_label(name: str) -> str:
    """A scheme's display name (``SynthID`` for ``"synthid"``): its class name."""
    return SCHEMES[name].__name__.removesuffix("Scheme")


def resolve_scheme(scheme: str | WatermarkScheme = "waterfall", **settings: Any) -> WatermarkScheme:
    """The scheme ``scheme`` names, with the settings given (``None``: its default), or
    ``scheme`` itself.

    Every scheme's own setting is accepted here (``k_p`` Waterfall's, ``gamma`` KGW's,
    ``depth`` Synth-ID's...) so that configs and command lines can hand over all they hold; a
    setting of another scheme than ``scheme`` is refused with an error naming whose it is. A
    scheme object carries its own settings: none may be passed beside it.
    """
    known = {s for names in READING_SETTINGS.values() for s in names} | set(COMMON_SETTINGS)
    unknown = sorted(set(settings) - known)
    if unknown:
        raise TypeError(f"{unknown} are not settings of any scheme (known: {sorted(known)}).")
    given = {n: v for n, v in settings.items() if v is not None}  # each constructor checks
    if isinstance(scheme, WatermarkScheme):
        if given:
            setting = next(iter(given))
            raise TypeError(
                f"pass `{setting}` inside the scheme (e.g. {type(scheme).__name__}"
                f"({setting}=...)), not beside it."
            )
        return scheme
    if not isinstance(scheme, str) or scheme.lower() not in SCHEMES:
        raise ValueError(
            f"`scheme` must be one of {sorted(SCHEMES)} or a WatermarkScheme, got {scheme!r}."
        )
    name = scheme.lower()
    for setting in given:
        if setting not in READING_SETTINGS[name] + COMMON_SETTINGS:
            owner = next(s for s, names in READING_SETTINGS.items() if setting in names)
            own = " or ".join(f"`{n}`" for n in READING_SETTINGS[name])  # every scheme has one
            raise ValueError(
                f"`{setting}` is a setting of the {scheme_label(owner)} scheme, not of "
                f"{name!r}: drop it, or set {own} instead."
            )
    return SCHEMES[name](**given)


def scheme_from_settings(settings: Mapping[str, Any]) -> WatermarkScheme:
    """The scheme back from its :meth:`~WatermarkScheme.settings` (e.g. read from JSON)."""
    if not isinstance(settings, Mapping) or "scheme" not in settings:
        raise ValueError(
            "A scheme's settings must be a dict with its name under 'scheme', e.g. "
            "{'scheme': 'waterfall', 'k_p': 1}."
        )
    rest = {k: v for k, v in settings.items() if k != "scheme"}
    name = resolve_scheme(settings["scheme"]).name  # an unknown name is refused here
    known = READING_SETTINGS[name] + COMMON_SETTINGS
    unknown = sorted(set(rest) - set(known))
    if unknown:
        raise ValueError(f"{unknown} are not settings of the {name!r} scheme (known: {known}).")
    return resolve_scheme(name, **rest)
