"""Probes of the token view's uncounted mutants (``report/token_view.py``,
``report/token_view_render.py``): see ``mutation_probes.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from mutation_probe_kit import each, use_test_helpers

_VIEW = "waterdrum_hf.report.token_view."
_RENDER = "waterdrum_hf.report.token_view_render."


def _view() -> Any:
    """A real view of a word-tokenizer text under Waterfall (every field filled)."""
    use_test_helpers()
    from tokenizer_builders import word_texts, word_tokenizer

    from waterdrum_hf import Verifier
    from waterdrum_hf.report.token_view import token_view

    tokenizer = word_tokenizer(97)
    text = word_texts(97, 1, 40, seed=3)[0]
    return token_view(text, 3_000_000_017, Verifier(tokenizer), owner="Ann", label="forget")


def null_statistics(tmp: Path) -> Any:
    """The view's null fields for a text (mean, spread, z, p-value, effective pairs)."""
    view = _view()
    return [view.null_mean, view.null_std, view.z, view.p_value, view.effective_pairs]


def token_pieces(tmp: Path) -> Any:
    """A slow tokenizer and ids the tokenizer does not give: both refused."""
    use_test_helpers()
    from tokenizer_builders import word_tokenizer

    from waterdrum_hf.report.token_view import _token_pieces

    tokenizer = word_tokenizer(11)
    slow = type("Slow", (), {"is_fast": False})()
    return each(
        lambda: _token_pieces("w1 w2", np.array([1, 2]), slow),
        lambda: _token_pieces("w1 w2", np.array([2, 1]), tokenizer),
        lambda: _token_pieces("w1 w2", np.array([1, 2]), tokenizer),
    )


def checked(tmp: Path) -> Any:
    """Views that are not a non-empty list of TokenView: refused by every renderer."""
    from waterdrum_hf.report.token_view_render import token_views_html

    return each(lambda: token_views_html([]), lambda: token_views_html(["view"]))


def plot(tmp: Path) -> Any:
    """The PNG (its bytes are the files the runner compares), whose figure wraps the
    explanation and the stats line."""
    from waterdrum_hf.report.token_view_render import plot_token_views

    return plot_token_views([_view()], tmp / "view.png").name


def write(tmp: Path) -> Any:
    """The HTML and PNG files, read back as bytes by the runner."""
    from waterdrum_hf.report.token_view_render import write_token_views

    return [p.name for p in write_token_views([_view()], tmp / "out")]


PROBES = {
    _VIEW + "x__null_statistics": null_statistics,
    _VIEW + "x__token_pieces": token_pieces,
    _RENDER + "x__checked": checked,
    _RENDER + "x__wrap": plot,
    _RENDER + "x_plot_token_views": plot,
    _RENDER + "x_write_token_views": write,
}
