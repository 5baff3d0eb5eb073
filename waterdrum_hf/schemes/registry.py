"""Schemes by name, and the one place a scheme's settings are matched to the scheme."""

from __future__ import annotations

from waterdrum_hf.schemes.base import WatermarkScheme
from waterdrum_hf.schemes.kgw import KGWScheme
from waterdrum_hf.schemes.waterfall import WaterfallScheme

SCHEMES: dict[str, type[WatermarkScheme]] = {"waterfall": WaterfallScheme, "kgw": KGWScheme}
"""Every scheme by the name configs and the command line use."""


def resolve_scheme(
    scheme: str | WatermarkScheme = "waterfall", *, k_p: int | None = None
) -> WatermarkScheme:
    """The scheme ``scheme`` names (with its default settings), or ``scheme`` itself.

    ``k_p`` is Waterfall's setting, accepted beside a scheme's name for the functions that have
    always taken it; a scheme object carries its own settings, and another scheme refuses it.
    """
    if isinstance(scheme, WatermarkScheme):
        if k_p is not None:
            raise TypeError(
                "pass `k_p` inside the scheme (e.g. WaterfallScheme(k_p=2)), not beside it."
            )
        return scheme
    if not isinstance(scheme, str) or scheme.lower() not in SCHEMES:
        raise ValueError(
            f"`scheme` must be one of {sorted(SCHEMES)} or a WatermarkScheme, got {scheme!r}."
        )
    name = scheme.lower()
    if name == "waterfall":
        return WaterfallScheme(k_p=1 if k_p is None else k_p)
    if k_p is not None:
        raise ValueError(
            f"`k_p` is a setting of the Waterfall scheme, not of {name!r}: drop it, or pass "
            f"{SCHEMES[name].__name__}(...) with that scheme's own settings."
        )
    return SCHEMES[name]()
