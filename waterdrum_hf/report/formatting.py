"""How a report writes an interval, a count and a list of names."""

from __future__ import annotations

from collections.abc import Sequence


def format_interval(low: float | None, high: float | None, spec: str) -> str:
    """``[low, high]`` in ``spec``, or ``–`` without an interval."""
    return "–" if low is None or high is None else f"[{low:{spec}}, {high:{spec}}]"


def count_phrase(n: int, noun: str) -> str:
    """``1 text``, ``2 texts``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def join_names(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
