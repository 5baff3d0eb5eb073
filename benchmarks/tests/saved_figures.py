"""The figure a plotting function saves, caught as it is closed, with the saved PNG's size:
tests read a plot's data from the figure itself, not from the code that drew it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def drawn(monkeypatch: Any, draw: Callable[[Path], Any], path: Path) -> tuple[Any, tuple[int, int]]:
    """The figure ``draw(path)`` saves (pyplot's close intercepted) and the saved PNG's size."""
    import matplotlib.pyplot as plt
    from PIL import Image

    figures: list[Any] = []
    monkeypatch.setattr(plt, "close", figures.append)
    draw(path)
    (figure,) = figures
    with Image.open(path) as image:
        return figure, image.size
