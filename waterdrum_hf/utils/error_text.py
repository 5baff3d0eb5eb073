"""How an error reads on one line (a command's refusal, a server's failure)."""

from __future__ import annotations


def first_line(error: BaseException) -> str:
    """The first line of an error's message (its type's name if it has none)."""
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
