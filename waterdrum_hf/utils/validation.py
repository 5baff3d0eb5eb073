"""Input checks shared by every public entry point.

Each check raises a ``TypeError`` / ``ValueError`` that names the argument and says how to fix
it, so that bad input never turns into a silently wrong score.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any


def check_texts(texts: str | Sequence[str], name: str = "texts") -> list[str]:
    """Return ``texts`` as a non-empty list of strings (a single string becomes a 1-list)."""
    if isinstance(texts, str):
        return [texts]
    if not isinstance(texts, Sequence) and not hasattr(texts, "__iter__"):
        raise TypeError(
            f"`{name}` must be a string or a sequence of strings, got {type(texts).__name__}."
        )
    texts = list(texts)
    if not texts:
        raise ValueError(f"`{name}` is empty: pass at least one text.")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(
                f"`{name}[{i}]` is a {type(text).__name__}, not a string: pass decoded text "
                "(e.g. tokenizer.batch_decode(ids, skip_special_tokens=True))."
            )
        check_encodable(text, f"{name}[{i}]")
    return texts


def check_encodable(text: str, name: str) -> str:
    """Return ``text``; one that UTF-8 cannot encode (a lone surrogate, e.g. from a JSON
    ``"\\ud800"`` escape) raises a ValueError here rather than a tokenizer's TypeError."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ValueError(
                f"`{name}` holds a lone surrogate at character {error.start}, which UTF-8 (and so "
                "every tokenizer) cannot encode: clean it first, e.g. "
                "text.encode('utf-8', 'replace').decode('utf-8')."
            ) from None
    return text


def check_string_list(values: Iterable[str], name: str) -> list[str]:
    """Return ``values`` as a list of strings (possibly empty); a bare string is refused."""
    if isinstance(values, str):
        raise TypeError(f"{name} must be a list of strings, not a single string; wrap it: [{name}]")
    try:
        values = list(values)
    except TypeError:
        raise TypeError(f"{name} must be a list of strings, got {type(values).__name__}") from None
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise TypeError(f"{name}[{i}] must be a str, got {type(value).__name__}")
        check_encodable(value, f"{name}[{i}]")
    return values


def check_positive_int(value: object, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer, got {type(value).__name__}.")
    if value < minimum:
        raise ValueError(f"`{name}` must be >= {minimum}, got {value}.")
    return int(value)


def check_positive_fields(config: object, *names: str) -> None:
    """Each of ``config``'s fields ``names`` is an int >= 1 (:func:`check_positive_int`)."""
    for name in names:
        check_positive_int(getattr(config, name), name)


def check_instance_or_none(value: Any, kind: type, name: str) -> Any:
    """``value`` if it is a ``kind`` (or None), else a TypeError naming the argument."""
    if value is not None and not isinstance(value, kind):
        raise TypeError(f"`{name}` must be a {kind.__name__}, got {type(value).__name__}.")
    return value


def check_finite_at_least(value: Any, name: str, low: float) -> None:
    """Refuse a setting that is not a finite real number at least ``low`` (``-inf``: any)."""
    if not isinstance(value, numbers.Real) or not math.isfinite(value) or value < low:
        bound = "" if low == -math.inf else f" >= {low:g}"
        raise ValueError(f"`{name}` must be a finite number{bound}, got {value!r}.")
