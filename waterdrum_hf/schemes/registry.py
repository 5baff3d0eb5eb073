"""Schemes by name, and the one place a scheme's settings are matched to the scheme."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from waterdrum_hf.schemes.base import WatermarkScheme
from waterdrum_hf.schemes.kgw import KGWScheme
from waterdrum_hf.schemes.waterfall import WaterfallScheme

SCHEMES: dict[str, type[WatermarkScheme]] = {"waterfall": WaterfallScheme, "kgw": KGWScheme}
"""Every scheme by the name configs and the command line use."""

COMMON_SETTINGS: tuple[str, ...] = tuple(f.name for f in fields(WatermarkScheme))
"""Settings every scheme has: ``n_gram`` and ``vocab_size``."""

READING_SETTINGS: dict[str, tuple[str, ...]] = {
    name: tuple(f.name for f in fields(scheme) if f.name not in COMMON_SETTINGS)
    for name, scheme in SCHEMES.items()
}
"""Each scheme's own reading settings: Waterfall's ``k_p``, KGW's ``gamma``."""


def resolve_scheme(
    scheme: str | WatermarkScheme = "waterfall",
    *,
    k_p: int | None = None,
    gamma: float | None = None,
    n_gram: int | None = None,
    vocab_size: int | None = None,
) -> WatermarkScheme:
    """The scheme ``scheme`` names, with the settings given (``None``: its default), or
    ``scheme`` itself.

    Every scheme's own setting is accepted here (``k_p`` Waterfall's, ``gamma`` KGW's) so
    that configs and command lines can hand over all they hold; a setting of another scheme
    than ``scheme`` is refused with an error naming whose it is. A scheme object carries its
    own settings: none may be passed beside it.
    """
    given: dict[str, Any] = {  # each scheme's constructor checks its settings
        n: v
        for n, v in (("k_p", k_p), ("gamma", gamma), ("n_gram", n_gram), ("vocab_size", vocab_size))
        if v is not None
    }
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
            owner = next(SCHEMES[s] for s, names in READING_SETTINGS.items() if setting in names)
            raise ValueError(
                f"`{setting}` is a setting of the {owner.__name__.removesuffix('Scheme')} scheme, not of {name!r}: drop it, or "
                f"set {' or '.join(f'`{n}`' for n in READING_SETTINGS[name])} instead."
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
