"""How a report writes an interval, a count, a list of names and a table's head."""

from __future__ import annotations

from collections.abc import Sequence


def format_interval(low: float | None, high: float | None, spec: str) -> str:
    """``[low, high]`` in ``spec``, or ``–`` without an interval."""
    return "–" if low is None or high is None else f"[{low:{spec}}, {high:{spec}}]"


def table_head(header: Sequence[str]) -> list[str]:
    """A Markdown table's header row and the rule under it."""
    return ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]


def count_phrase(n: int, noun: str) -> str:
    """``1 text``, ``2 texts``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def join_names(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def p_value_text(p_value: float, null_keys: int | None) -> str:
    """A p-value at the precision it has: where an empirical null of ``null_keys`` keys bounds
    it (``1 / (1 + K)``, the smallest such a null gives), ``<= 0.005 (the smallest 200 null
    keys can give)``; else two significant digits (``3e-08``, ``0.21``), never a rounded 0."""
    if null_keys and on_null_floor(p_value, null_keys):
        return f"<= {1 / (1 + null_keys):.2g} (the smallest {null_keys} null keys can give)"
    return f"{p_value:.2g}"


def on_null_floor(p_value: float, null_keys: int | None) -> bool:
    """Whether ``p_value`` is the smallest an empirical null of ``null_keys`` keys gives,
    ``1 / (1 + K)`` (never, for the analytic null: ``null_keys`` 0 or None)."""
    if not null_keys:
        return False
    return p_value * (1 + null_keys) <= 1 + 1e-9  # within rounding of the floor
