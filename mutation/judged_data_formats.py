"""Surviving mutants of ``waterdrum_hf/data/formats.py`` judged equivalent (read by
``judged.py``): each entry is ``(function, before, after, reason)``, as
``judged.Judged`` takes them."""

from __future__ import annotations

_FORMATS = "waterdrum_hf.data.formats."
_ENCODER = _FORMATS + "xǁExampleEncoderǁ"
_ZIP = "for a, b in zip(first, second, strict=False):"
_RENDER_CALL = (
    "return cast(str, text)  # with tokenize=False it is the text; typed as any of its results"
)

JUDGED_ENTRIES: tuple[tuple[str, str | None, str | None, str], ...] = (
    (
        _FORMATS + "x__common_prefix_length",
        _ZIP,
        "for a, b in zip(first, second, strict=None):",
        "zip reads strict by its truth value, and None is falsy like False",
    ),
    (
        _FORMATS + "x__common_prefix_length",
        _ZIP,
        "for a, b in zip(first, second, ):",
        "strict=False is zip's default",
    ),
    (
        _ENCODER + "_render",
        "tokenize=False,",
        "tokenize=None,",
        "apply_chat_template reads tokenize only by its truth value (`if tokenize`, "
        "`not tokenize`), and None is falsy like False: the rendered text either way",
    ),
    (
        _ENCODER + "_render",
        _RENDER_CALL,
        "return cast(None, text)  # with tokenize=False it is the text; typed as any of its "
        "results",
        "typing.cast returns its value unchanged whatever the type it names (a hint for the "
        "type checker only)",
    ),
)
