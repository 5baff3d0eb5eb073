"""Token views (:mod:`~waterdrum_hf.report.token_view`) drawn as a self-contained HTML page and
as a PNG (matplotlib, no pyplot): each token on a background of its term's colour
(:func:`~waterdrum_hf.report.token_view.token_colour`), with the text's score, null level and
p-value above it. Both show the owner's display name only, and by default each token's level
(for, neutral, against), not its exact term: ``exact_terms=True`` draws the exact terms, for
files that stay with the key's holder (see SECURITY.md, "The watermark view")."""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from waterdrum_hf.report.token_view import (
    LEVEL_COLOURS,
    LEVEL_THRESHOLD,
    TokenView,
    level_colour,
    token_colour,
    token_level,
)
from waterdrum_hf.utils.validation import check_positive_int

EXPLANATION = (
    "Each token is coloured by its term of the watermark function under the owner's key: "
    "blue reads for the owner's watermark, red against it, the stronger the colour the larger "
    "the term (full colour: the largest term the scheme gives); grey tokens are not counted "
    "(the first n-gram context, or outside the watermarking vocabulary). The score is the "
    "mean of the counted terms. The null level is what the score reads, mean ± sd, under a key "
    "that owns nothing (exact, from the text's token pairs); p is the one-sided p-value of "
    '"no watermark" (normal approximation: approximate when the score rests on fewer than a '
    "few hundred token pairs)."
)
"""What a view with its exact terms shows, in the words both the HTML page and the PNG use."""

SHARED_EXPLANATION = (
    "Each token is coloured by the level of its term of the watermark function under the "
    f"owner's key: blue reads for the owner's watermark (a term of at least {LEVEL_THRESHOLD:g} "
    f"of the largest the scheme gives), red against (at most -{LEVEL_THRESHOLD:g} of it), light "
    "grey near zero; grey tokens are not counted (the first n-gram context, or outside the "
    "watermarking vocabulary). The exact terms are left out: each would tell where its token "
    "sits in the owner's keyed permutation. The score is the mean of the counted terms. The "
    "null level is what the score reads, mean ± sd, under a key that owns nothing (exact, from "
    'the text\'s token pairs); p is the one-sided p-value of "no watermark" (normal '
    "approximation: approximate when the score rests on fewer than a few hundred token pairs)."
)
"""What a view shows by default (three levels, no exact term): the words of both files."""

LEVEL_WORDS = {"for": "for the watermark", "neutral": "near zero", "against": "against"}
"""Each level's words in the legend and in a token's tooltip."""

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
.about { max-width: 60em; color: #444; }
.grid { display: grid; gap: 1em; grid-template-columns: repeat(COLUMNS, minmax(0, 1fr)); }
.view { border: 1px solid #ccc; border-radius: 6px; padding: 0.2em 0.9em 0.9em; }
.view h2 { font-size: 1.05em; }
.stats { font-size: 0.9em; color: #333; }
.text { font-family: ui-monospace, monospace; white-space: pre-wrap; line-height: 1.8;
        overflow-wrap: anywhere; }
.t { border-radius: 2px; }
.u { color: #999; }
.key { padding: 0 0.4em; border-radius: 2px; }
"""

FONT = "DejaVu Sans Mono"
"""The PNG's font (ships with matplotlib): monospace, so a token's width is its length."""
_FONT_SIZE = 9.0
_CHAR_WIDTH = 0.6021 * _FONT_SIZE / 72  # inches: DejaVu Sans Mono's advance is 1233/2048 em
_LINE_HEIGHT = 1.75 * _FONT_SIZE / 72
_LINE_CHARS = 76  # characters per line of a view
_GAP_CHARS = 4  # between two columns


def stats_line(view: TokenView) -> str:
    """The view's numbers in one line: owner, scheme, score, null level, z, p, counts."""
    settings = ", ".join(f"{k}={v}" for k, v in view.scheme.items() if k != "scheme")
    parts = [f"key of {view.owner}", f"{view.scheme.get('scheme', 'scheme')} ({settings})"]
    if math.isnan(view.score):
        parts.append("nothing to count: no score")
    else:
        parts.append(f"score {_signed(view.score)}")
    if view.null_mean is not None and view.null_std is not None:
        parts.append(f"null level {_signed(view.null_mean)} ± {view.null_std:.3f}")
    if view.z is not None and view.p_value is not None:
        parts.append(f"z {view.z:+.2f}, p {view.p_value:.2g}")
    counted = f"{view.num_counted} of {len(view.tokens)} tokens counted"
    if view.effective_pairs is not None:
        counted += f" (~{view.effective_pairs:.0f} effective pairs)"
    return " · ".join([*parts, counted])


def _signed(value: float) -> str:
    """``value`` to 3 decimals with its sign; a rounding-size negative reads ``+0.000``."""
    return f"{round(value, 3) + 0.0:+.3f}"


def token_views_html(
    views: Sequence[TokenView],
    *,
    title: str = "Watermark view",
    columns: int = 1,
    exact_terms: bool = False,
) -> str:
    """One HTML page of ``views`` (``columns`` side by side): inline CSS only, no script, no
    fetched font or image, so it opens anywhere and can be attached as it is. Each token
    shows its level (:func:`~waterdrum_hf.report.token_view.token_level`); with
    ``exact_terms=True`` its exact term, as colour and as tooltip (``term +0.9291``)."""
    columns = check_positive_int(columns, "columns")
    sections = "\n".join(_html_section(view, exact_terms) for view in _checked(views))
    keys = (
        [
            ("for the watermark", token_colour(1.0, 1.0)),
            ("weakly for", token_colour(0.3, 1.0)),
            ("against", token_colour(-1.0, 1.0)),
        ]
        if exact_terms
        else [(LEVEL_WORDS[level], LEVEL_COLOURS[level]) for level in LEVEL_WORDS]
    )
    legend = " ".join(
        f'<span class="key" style="background-color:{_css(c)}">{html.escape(word)}</span>'
        for word, c in keys
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{_STYLE.replace('COLUMNS', str(columns))}</style>\n</head>\n<body>\n"
        f'<h1>{html.escape(title)}</h1>\n<p class="about">'
        f"{html.escape(EXPLANATION if exact_terms else SHARED_EXPLANATION)}</p>\n"
        f'<p class="about">{legend} <span class="key" style="color:#999">not counted</span></p>\n'
        f'<div class="grid">\n{sections}\n</div>\n</body>\n</html>\n'
    )


def plot_token_views(
    views: Sequence[TokenView],
    path: str | Path,
    *,
    title: str = "Watermark view",
    columns: int = 1,
    exact_terms: bool = False,
) -> Path:
    """Draw ``views`` (``columns`` side by side) into a PNG at ``path``; return the path.
    Tokens show their levels, or with ``exact_terms=True`` their exact terms."""
    fig = token_views_figure(views, title=title, columns=columns, exact_terms=exact_terms)
    fig.savefig(path, dpi=120, facecolor="white")
    return Path(path)


def token_views_figure(
    views: Sequence[TokenView],
    *,
    title: str = "Watermark view",
    columns: int = 1,
    exact_terms: bool = False,
) -> Any:
    """The matplotlib ``Figure`` of :func:`plot_token_views`: text laid out on a grid of
    monospace characters, a coloured box behind each counted token (its level's colour, or
    with ``exact_terms=True`` its exact term's)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    columns = check_positive_int(columns, "columns")
    views = _checked(views)
    width = columns * (_LINE_CHARS + _GAP_CHARS)
    header = [(0, 0, title, None, "bold")] + [
        (row + 1, 0, line, None, "normal")
        for row, line in enumerate(
            _wrap(EXPLANATION if exact_terms else SHARED_EXPLANATION, width - 4)
        )
    ]
    top = len(header) + 1
    cells: list[tuple[int, int, str, Any, str]] = list(header)
    for first in range(0, len(views), columns):
        blocks = [_view_cells(v, exact_terms) for v in views[first : first + columns]]
        for column, block in enumerate(blocks):
            left = column * (_LINE_CHARS + _GAP_CHARS)
            cells += [(top + row, left + col, s, c, w) for row, col, s, c, w in block]
        top += max(row for block in blocks for row, *_ in block) + 2
    fig = Figure(figsize=((width + 2) * _CHAR_WIDTH, (top + 1) * _LINE_HEIGHT))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-1, width + 1)
    ax.set_ylim(top + 0.5, -0.5)
    ax.set_axis_off()
    for row, col, string, colour, weight in cells:
        if isinstance(colour, tuple):
            corner = (col + 0.05, row - 0.45)  # a hairline between neighbouring tokens
            ax.add_patch(Rectangle(corner, len(string) - 0.1, 0.9, color=_rgba(colour), lw=0))
        ax.text(
            col, row, string, family=FONT, size=_FONT_SIZE, weight=weight, va="center",
            ha="left", parse_math=False, color="#999999" if colour is False else "#222222",
        )  # fmt: skip
    return fig


def _checked(views: Sequence[TokenView]) -> list[TokenView]:
    views = list(views)
    if not views or not all(isinstance(v, TokenView) for v in views):
        raise TypeError("`views` must be a non-empty list of TokenView (see token_view).")
    return views


def _html_section(view: TokenView, exact_terms: bool) -> str:
    spans = []
    for piece, term in zip(view.tokens, view.terms, strict=True):
        colour = _colour(term - view.centre, view.scale, exact_terms)
        if colour is None:
            spans.append(f'<span class="u" title="not counted">{html.escape(piece)}</span>')
        else:
            level = token_level(term - view.centre, view.scale) or "neutral"  # counted
            tip = f"term {term:+.4f}" if exact_terms else LEVEL_WORDS[level]
            spans.append(
                f'<span class="t" style="background-color:{_css(colour)}" '
                f'title="{tip}">{html.escape(piece)}</span>'
            )
    heading = f"<h2>{html.escape(view.label)}</h2>" if view.label else ""
    return (
        f'<section class="view">{heading}<p class="stats">{html.escape(stats_line(view))}</p>'
        f'<div class="text">{"".join(spans)}</div></section>'
    )


def _colour(term: float, scale: float, exact_terms: bool) -> tuple[int, int, int, float] | None:
    """A token's colour: its exact term's, or its level's."""
    return token_colour(term, scale) if exact_terms else level_colour(term, scale)


def _css(colour: tuple[int, int, int, float] | None) -> str:
    red, green, blue, alpha = colour  # type: ignore[misc]
    return f"rgba({red},{green},{blue},{alpha:.3f})"


def _rgba(colour: tuple[int, int, int, float]) -> tuple[float, float, float, float]:
    return (colour[0] / 255, colour[1] / 255, colour[2] / 255, colour[3])


def _view_cells(view: TokenView, exact_terms: bool) -> list[tuple[int, int, str, Any, str]]:
    """``(row, column, string, colour, weight)`` of a view's label, numbers and tokens; the
    colour is a :func:`token_colour`, ``False`` for a token that is not counted, ``None``
    for plain text."""
    cells: list[tuple[int, int, str, Any, str]] = []
    if view.label:
        cells.append((0, 0, view.label, None, "bold"))
    for line in _wrap(stats_line(view), _LINE_CHARS):
        cells.append((len(cells), 0, line, None, "normal"))
    row, col = len(cells) + 1, 0
    for piece, term in zip(view.tokens, view.terms, strict=True):
        colour = _colour(term - view.centre, view.scale, exact_terms)
        for k, part in enumerate(_printable(piece).split("\n")):
            if k or col + len(part) > _LINE_CHARS >= len(part):  # a token that fits: unbroken
                row, col = row + 1, 0
            while part:
                if col >= _LINE_CHARS:
                    row, col = row + 1, 0
                chunk, part = part[: _LINE_CHARS - col], part[_LINE_CHARS - col :]
                cells.append((row, col, chunk, False if colour is None else colour, "normal"))
                col += len(chunk)
    return cells


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width) or [""]


def _printable(piece: str) -> str:
    """``piece`` drawable in :data:`FONT`: tabs as 4 spaces, other control characters as
    spaces, characters the font lacks as ``?`` (matplotlib would warn and draw boxes)."""
    glyphs = _font_characters()
    out = []
    for char in piece.replace("\t", "    ").replace("\r\n", "\n"):
        if char == "\n":
            out.append(char)
        elif not char.isprintable():
            out.append(" ")
        else:
            out.append(char if ord(char) in glyphs else "?")
    return "".join(out)


@functools.cache
def _font_characters() -> frozenset[int]:
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    return frozenset(FT2Font(font_manager.findfont(FONT)).get_charmap())


def write_token_views(
    views: Sequence[TokenView],
    out_dir: str | Path,
    *,
    stem: str = "watermark_view",
    title: str = "Watermark view",
    columns: int = 1,
    exact_terms: bool = False,
) -> tuple[Path, Path]:
    """Write ``views`` as ``<stem>.html`` (self-contained: inline CSS, no script, nothing
    fetched) and ``<stem>.png`` into ``out_dir``, ``columns`` views side by side; return both
    paths.

    Both files show each token's level (for, neutral, against), not its exact term: an exact
    term tells where the token sits in the owner's keyed permutation after its context, so a
    reader could raise or lower the watermark on the token pairs shown. ``exact_terms=True``
    writes the exact terms (colour strength and ``title="term +0.9291"``): keep such files
    with whoever holds the key."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    html = out / f"{stem}.html"
    page = token_views_html(views, title=title, columns=columns, exact_terms=exact_terms)
    html.write_text(page, encoding="utf-8")
    png = plot_token_views(
        views, out / f"{stem}.png", title=title, columns=columns, exact_terms=exact_terms
    )
    return html, png
