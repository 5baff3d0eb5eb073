"""How a report writes an interval and a count."""

from __future__ import annotations


def format_interval(low: float | None, high: float | None, spec: str) -> str:
    """``[low, high]`` in ``spec``, or ``–`` without an interval."""
    return "–" if low is None or high is None else f"[{low:{spec}}, {high:{spec}}]"


def count_phrase(n: int, noun: str) -> str:
    """``1 text``, ``2 texts``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
