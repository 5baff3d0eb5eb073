"""Probes of the token view's uncounted mutants (``report/token_view.py``,
``report/token_view_render.py``): see ``probes.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from probe_kit import each, use_test_helpers

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
    """A slow tokenizer, one that does not say whether it is fast, and ids the tokenizer does
    not give: all refused."""
    use_test_helpers()
    from tokenizer_builders import word_tokenizer

    from waterdrum_hf.report.token_view import _token_pieces

    tokenizer = word_tokenizer(11)
    slow = type("Slow", (), {"is_fast": False})()
    return each(
        lambda: _token_pieces("w1 w2", np.array([1, 2]), slow),
        lambda: _token_pieces("w1 w2", np.array([1, 2]), object()),
        lambda: _token_pieces("w1 w2", np.array([2, 1]), tokenizer),
        lambda: _token_pieces("w1 w2", np.array([1, 2]), tokenizer),
    )


def token_terms(tmp: Path) -> Any:
    """Each token's term under every scheme with token terms (both readers of the keys), for
    a small and a large id, as the arrays the view is built from."""
    use_test_helpers()
    from tokenizer_builders import word_texts, word_tokenizer

    from waterdrum_hf import Verifier
    from waterdrum_hf.report.token_view import token_view

    tokenizer = word_tokenizer(97)
    text = word_texts(97, 1, 30, seed=5)[0]
    return [
        np.array(token_view(text, key, Verifier(tokenizer, scheme=scheme)).terms)
        for scheme in ("waterfall", "kgw", "synthid")
        for key in (7, 2**32 - 1)
    ]


def token_view(tmp: Path) -> Any:
    """A view with its defaults, and every refusal of token_view."""
    use_test_helpers()
    from tokenizer_builders import word_tokenizer

    from waterdrum_hf import Verifier
    from waterdrum_hf.report.token_view import token_view

    verifier = Verifier(word_tokenizer(97))
    return each(
        lambda: token_view("w1 w2 w3", 5, verifier),
        lambda: token_view(5, 5, verifier),
        lambda: token_view("", 5, verifier),
        lambda: token_view("w1 \ud800", 5, verifier),
        lambda: token_view("w1 w2", -1, verifier),
        lambda: token_view("w1 w2", "5", verifier),
        lambda: token_view("w1 w2", 5, "verifier"),
        lambda: token_view("w1 w2", 5, verifier, owner=""),
        lambda: token_view("w1 w2", 5, verifier, owner=5),
        lambda: token_view("w1 w2", 5, Verifier(word_tokenizer(97), scheme="exp_edit")),
    )


def html_pages(tmp: Path) -> Any:
    """The page of real views (Waterfall and Synth-ID, centred) and of a hand-made one with a
    token of every level, shared and with exact terms."""
    from waterdrum_hf.report.token_view import TokenView
    from waterdrum_hf.report.token_view_render import token_views_html

    nan = float("nan")
    hand = TokenView(
        tokens=("a", " b", " c", " d", " e"), terms=(nan, 0.9, -0.3, 0.1, -0.6), score=0.025,
        scale=0.8, owner="o", centre=0.05,
    )  # fmt: skip
    views = [_view(), hand]
    return [token_views_html(views, columns=2, exact_terms=exact) for exact in (False, True)]


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
    _VIEW + "x__token_terms": token_terms,
    _VIEW + "x_token_view": token_view,
    _RENDER + "x__checked": checked,
    _RENDER + "x__html_section": html_pages,
    _RENDER + "x_token_views_html": html_pages,
    _RENDER + "x__wrap": plot,
    _RENDER + "x_plot_token_views": plot,
    _RENDER + "x_token_views_figure": plot,
    _RENDER + "x_write_token_views": write,
}
