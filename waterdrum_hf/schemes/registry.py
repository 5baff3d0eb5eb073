"""Schemes by name, and the one place a scheme's settings are matched to the scheme."""

from __future__ import annotations

from dataclasses import fields

from waterdrum_hf.schemes.base import WatermarkScheme
from waterdrum_hf.schemes.kgw import KGWScheme
from waterdrum_hf.schemes.waterfall import WaterfallScheme

SCHEMES: dict[str, type[WatermarkScheme]] = {"waterfall": WaterfallScheme, "kgw": KGWScheme}
"""Every scheme by the name configs and the command line use."""

READING_SETTINGS: dict[str, tuple[str, ...]] = {
    name: tuple(f.name for f in fields(scheme))  # type: ignore[arg-type]
    for name, scheme in SCHEMES.items()
}
"""Each scheme's reading settings (its dataclass fields): Waterfall's ``k_p``, KGW's ``gamma``."""


def resolve_scheme(
    scheme: str | WatermarkScheme = "waterfall",
    *,
    k_p: int | None = None,
    gamma: float | None = None,
) -> WatermarkScheme:
    """The scheme ``scheme`` names, with the reading settings given (``None``: its default),
    or ``scheme`` itself.

    Every scheme's reading setting is accepted here (``k_p`` Waterfall's, ``gamma`` KGW's) so
    that configs and command lines can hand over all they hold; a setting of another scheme
    than ``scheme`` is refused with an error naming whose it is. A scheme object carries its
    own settings: none may be passed beside it.
    """
    given = {n: v for n, v in (("k_p", k_p), ("gamma", gamma)) if v is not None}
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
        if setting not in READING_SETTINGS[name]:
            owner = next(SCHEMES[s] for s, names in READING_SETTINGS.items() if setting in names)
            raise ValueError(
                f"`{setting}` is a setting of the {owner.__name__.removesuffix('Scheme')} scheme, not of {name!r}: drop it, or "
                f"set {' or '.join(f'`{n}`' for n in READING_SETTINGS[name])} instead."
            )
    return SCHEMES[name](**given)
