"""The per-token watermark view (``waterdrum_hf.report.token_view``) and ``waterdrum show``:
terms equal to the verifier's, colours that follow them, HTML that parses and holds no key,
a valid PNG, both schemes."""

from __future__ import annotations

import html
import io
import json
import math
import re
import textwrap
from html.parser import HTMLParser

import numpy as np
import pytest
from ascii_locale import run_in_ascii_locale
from tokenizer_builders import pydoc_bpe_tokenizer, word_texts, word_tokenizer

from waterdrum_hf import Verifier, WaterDrumConfig, waterdrum_metrics
from waterdrum_hf.report.token_view import (
    NEGATIVE_RGB,
    NEUTRAL_RGB,
    POSITIVE_RGB,
    TokenView,
    token_colour,
    token_level,
    token_view,
    unlearning_token_views,
)
from waterdrum_hf.report.token_view_render import (
    EXPLANATION,
    SHARED_EXPLANATION,
    plot_token_views,
    stats_line,
    token_views_figure,
    token_views_html,
    write_token_views,
)
from waterdrum_hf.scripts import main

KEY = 3_000_000_017  # distinctive, so that a leak would show
NUMBER_IN = re.compile(r"\d")
OTHER_KEY = 3_999_999_929
SCHEMES = ["waterfall", "kgw"]
CENTRED_SCHEMES = [*SCHEMES, "synthid"]  # Synth-ID: terms in [0, 1] about their null level


def key_forms(key: int) -> list[str]:
    """Every way a key could be written out: decimal, hex (either case, with or without 0x)."""
    return [str(key), f"{key:x}", f"{key:X}", f"{key:#x}", f"{key:,}", f"{key:_}"]


class Spans(HTMLParser):
    """The token spans of a view page: ``(class, style, title, text)``, plus every tag seen."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[list[str]] = []
        self.tags: list[str] = []
        self._open: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if tag == "span" and attrs.get("class") in ("t", "u") and self._open is None:
            self._open = [attrs["class"], attrs.get("style", ""), attrs.get("title", ""), ""]

    def handle_data(self, data):
        if self._open is not None:
            self._open[3] += data

    def handle_endtag(self, tag):
        if tag == "span" and self._open is not None:
            self.spans.append(self._open)
            self._open = None


def parsed(page: str) -> Spans:
    parser = Spans()
    parser.feed(page)
    parser.close()
    return parser


def drawn_text(fig, separator: str = " ") -> str:
    """Every string drawn in a figure."""
    from matplotlib.text import Text

    return separator.join(t.get_text() for t in fig.findobj(Text))


def rgba(style: str) -> tuple[int, int, int, float]:
    inside = style.split("rgba(")[1].split(")")[0].split(",")
    return int(inside[0]), int(inside[1]), int(inside[2]), float(inside[3])


@pytest.fixture(scope="module")
def words():
    tok = word_tokenizer(4096)
    return tok, word_texts(4096, 4, 60, seed=3)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_each_term_is_the_verifier_score_of_its_token_pair(words, scheme):
    tok, texts = words
    verifier = Verifier(tok, scheme=scheme)
    view = token_view(texts[0], KEY, verifier, owner="owner-1")
    assert "".join(view.tokens) == texts[0]
    assert math.isnan(view.terms[0]) and view.num_counted == len(view.tokens) - 1
    for j in range(1, len(view.tokens)):  # the two-token text scores exactly its one term
        pair = (view.tokens[j - 1] + view.tokens[j]).strip()
        assert view.terms[j] == pytest.approx(verifier.verify(pair, KEY)[0], abs=1e-12)
    assert view.score == verifier.verify(texts[0], KEY)[0]
    assert view.score == pytest.approx(np.nanmean(view.terms), abs=1e-12)


@pytest.mark.parametrize("scheme", CENTRED_SCHEMES)
def test_null_level_and_p_value_are_the_metrics_analytic_null_of_the_text(words, scheme):
    tok, texts = words
    view = token_view(texts[1], KEY, Verifier(tok, scheme=scheme))
    config = WaterDrumConfig.from_keywords({"null": "analytic", "scheme": scheme})
    metric = waterdrum_metrics([texts[1]], [KEY], tok, config=config)
    assert view.score == pytest.approx(metric["overall"], abs=1e-12)
    assert view.null_mean == pytest.approx(metric["overall_null_mean"], abs=1e-12)
    assert view.null_std == pytest.approx(metric["overall_null_std"], rel=1e-9)
    assert view.z == pytest.approx(metric["overall_z"], rel=1e-9)
    assert view.p_value == pytest.approx(metric["overall_p_value"], rel=1e-9)
    assert view.effective_pairs == pytest.approx(view.num_counted, rel=0.2)


def expected_colour(term: float, scale: float, exact: bool) -> tuple[int, int, int, float] | None:
    """What a token must look like, from its own term alone: with exact terms the hue of the
    term's sign at strength |term| / scale; shared, one of three levels cut at +-1/4 of the
    scale (for: blue, against: red, between: grey). None: not counted."""
    if math.isnan(term):
        return None
    if exact:
        return (*(POSITIVE_RGB if term >= 0 else NEGATIVE_RGB), min(abs(term) / scale, 1.0))
    if term >= 0.25 * scale:
        return (*POSITIVE_RGB, 0.8)
    if term <= -0.25 * scale:
        return (*NEGATIVE_RGB, 0.8)
    return (*NEUTRAL_RGB, 0.3)


def on_white(colour: tuple[int, int, int, float] | None) -> tuple[int, int, int]:
    """A colour as the PNG shows it, drawn over the white background."""
    if colour is None:
        return (255, 255, 255)
    *rgb, alpha = colour
    return tuple(round(255 * (1 - alpha) + c * alpha) for c in rgb)


@pytest.mark.parametrize("exact", [False, True], ids=["shared", "exact"])
@pytest.mark.parametrize("scheme", CENTRED_SCHEMES)
def test_html_colour_of_each_token_is_its_own_terms(words, scheme, exact):
    """Token by token, the HTML colour is that token's term (not its neighbour's), of the
    right sign and size; the tooltip gives the exact term only with exact_terms=True."""
    tok, texts = words
    view = token_view(texts[2], KEY, Verifier(tok, scheme=scheme), owner="owner-1")
    source = token_views_html([view], exact_terms=exact)
    page = parsed(source)
    assert len(page.spans) == len(view.tokens)
    assert "".join(text for *_, text in page.spans) == texts[2]
    for (kind, style, title, _), term in zip(page.spans, view.terms, strict=True):
        expected = expected_colour(term - view.centre, view.scale, exact)
        if expected is None:
            assert kind == "u" and not style
            continue
        red, green, blue, alpha = rgba(style)
        assert (red, green, blue) == expected[:3], (term, style)
        assert alpha == pytest.approx(expected[3], abs=1e-3), (term, style)
        if exact:
            assert float(title.split()[-1]) == pytest.approx(term, abs=1e-4)
        else:
            assert not NUMBER_IN.search(title), title
    counted = [t for t in view.terms if not math.isnan(t)]
    assert any(t > view.centre for t in counted) and any(t < view.centre for t in counted)
    if not exact:  # no exact term anywhere in the page
        for term in counted:
            assert f"{term:+.4f}" not in source and f"{abs(term):.4f}" not in source


def png_token_colours(view, tmp_path, exact: bool) -> list[tuple[int, int, int]]:
    """Each token's background colour in the PNG written by write_token_views: the most
    common pixel of the box behind the token's text, found from where the figure draws it."""
    from PIL import Image

    _, png = write_token_views([view], tmp_path, exact_terms=exact)
    fig = token_views_figure([view], exact_terms=exact)
    ax = fig.axes[0]
    drawn = list(ax.texts)[-len(view.tokens) :]
    assert [t.get_text() for t in drawn] == list(view.tokens), "one drawn string per token"
    with Image.open(png) as image:
        pixels = np.asarray(image.convert("RGB"))
    height, scale = pixels.shape[0], 120 / fig.dpi
    colours = []
    for text in drawn:
        col, row = text.get_position()
        width = len(text.get_text())
        corners = ax.transData.transform([(col + 0.2, row - 0.35), (col + width - 0.2, row + 0.35)])
        (x0, y0), (x1, y1) = corners * scale
        box = pixels[
            round(height - max(y0, y1)) : round(height - min(y0, y1)), round(x0) : round(x1)
        ].reshape(-1, 3)
        values, counts = np.unique(box, axis=0, return_counts=True)
        colours.append(tuple(int(v) for v in values[np.argmax(counts)]))
    return colours


@pytest.mark.parametrize("exact", [False, True], ids=["shared", "exact"])
@pytest.mark.parametrize("scheme", CENTRED_SCHEMES)
def test_png_colour_of_each_token_is_its_own_terms(words, scheme, exact, tmp_path):
    """Token by token, the PNG shows behind each token the colour of that token's own term
    (sign and size), composited on white; not counted: no box (a shift by one token, or a
    flipped sign, fails)."""
    tok, texts = words
    text = " ".join(texts[0].split()[:40])
    view = token_view(text, KEY, Verifier(tok, scheme=scheme))
    shown = png_token_colours(view, tmp_path, exact)
    expected = [on_white(expected_colour(t - view.centre, view.scale, exact)) for t in view.terms]
    wrong = [
        (i, term, got, want)
        for i, (term, got, want) in enumerate(zip(view.terms, shown, expected, strict=True))
        if max(abs(g - w) for g, w in zip(got, want, strict=True)) > 3
    ]
    assert not wrong, wrong
    assert len(set(expected)) >= 2  # the text has terms of both signs


def test_the_colour_scale_is_the_schemes_largest_term():
    assert token_colour(1.0, 1.0) == (*POSITIVE_RGB, 1.0)
    assert token_colour(-0.25, 0.5) == (*NEGATIVE_RGB, 0.5)
    assert token_colour(0.0, 1.0) == (*POSITIVE_RGB, 0.0)
    assert token_colour(float("nan"), 1.0) is None
    a, b = token_colour(0.2, 1.0), token_colour(0.7, 1.0)
    assert a[3] < b[3]
    tok = word_tokenizer(4096)
    kgw = token_view("w1 w2 w3", KEY, Verifier(tok, scheme="kgw"))  # gamma 0.5: terms +-1
    assert kgw.scale == pytest.approx(1.0)
    from waterdrum_hf.schemes import KGWScheme

    skewed = token_view("w1 w2 w3", KEY, Verifier(tok, scheme=KGWScheme(gamma=0.25)))
    assert skewed.scale == pytest.approx(math.sqrt(0.75 / 0.25))  # the green term, the largest


def test_the_page_is_self_contained_and_escapes_the_text():
    bpe = pydoc_bpe_tokenizer()
    text = 'The <script>alert("x")</script> & <img src=http://example.com/a.png> é\n\tend'
    view = token_view(text, KEY, Verifier(bpe), owner="<b>owner</b>", label="a & b")
    source = token_views_html([view], title="<t>")
    page = parsed(source)
    assert "".join(text for *_, text in page.spans) == text
    assert "script" not in page.tags and "img" not in page.tags
    assert page.tags.count("style") == 1
    for fetched in ("src=", "href=", "url(", "@import", "http://example", "<link"):
        assert fetched not in source


@pytest.mark.parametrize("scheme", SCHEMES)
def test_no_key_in_the_view_the_page_or_the_png(words, scheme, tmp_path):
    tok, texts = words
    views = [token_view(t, KEY, Verifier(tok, scheme=scheme), owner="owner-2") for t in texts[:2]]
    html_path, png_path = write_token_views(views, tmp_path, columns=2)
    figure_text = drawn_text(token_views_figure(views))
    written = html_path.read_text() + png_path.read_bytes().decode("latin-1") + figure_text
    for form in key_forms(KEY):
        assert form not in written and form not in repr(views)
    assert "owner-2" in html_path.read_text() and "owner-2" in figure_text


def test_png_is_a_valid_image_with_both_full_colours(words, tmp_path):
    from PIL import Image

    tok, texts = words
    view = token_view(texts[0], KEY, Verifier(tok, scheme="kgw"))  # every term is +1 or -1
    _, png = write_token_views([view], tmp_path, exact_terms=True)
    with Image.open(png) as image:
        image.verify()
    with Image.open(png) as image:
        assert image.format == "PNG" and image.width > 400 and image.height > 100
        pixels = np.asarray(image.convert("RGB")).reshape(-1, 3)
    colours = {tuple(p) for p in np.unique(pixels, axis=0)}
    assert POSITIVE_RGB in colours and NEGATIVE_RGB in colours


def test_a_text_with_nothing_to_count_has_no_score_and_still_renders(tmp_path, caplog):
    tok = word_tokenizer(4096)
    view = token_view("w5", KEY, Verifier(tok))
    assert math.isnan(view.score) and view.null_mean is None and view.p_value is None
    html_path, png_path = write_token_views([view], tmp_path)
    assert "nothing to count" in html_path.read_text() and png_path.stat().st_size > 0


def test_odd_characters_are_drawn_without_warnings():
    bpe = pydoc_bpe_tokenizer()
    view = token_view("a $x^2$ b \u4e2d\u6587 \x07 c\r\nd", KEY, Verifier(bpe))
    fig = token_views_figure([view])  # mathtext and missing glyphs would warn (an error here)
    drawn = drawn_text(fig, separator="")
    assert "$x^2$" in drawn and "\u4e2d" not in drawn and "?" in drawn
    fig.savefig(io.BytesIO(), format="png")


def test_unlearning_views_put_each_set_in_a_row_and_each_model_in_a_column(words, tmp_path):
    tok, texts = words
    completions = {
        "original": {"forget": texts[0], "retain": texts[1]},
        "kl": {"forget": texts[2], "retain": texts[3]},
    }
    ids = {"forget": KEY, "retain": OTHER_KEY}
    views = unlearning_token_views(
        completions, ids, Verifier(tok), owner_names={"forget": "owner-4", "retain": "owner-1"}
    )
    assert [v.label for v in views] == [
        "forget set, original model",
        "forget set, kl model",
        "retain set, original model",
        "retain set, kl model",
    ]
    assert [v.owner for v in views] == ["owner-4", "owner-4", "owner-1", "owner-1"]
    verifier = Verifier(tok)
    assert views[1].score == verifier.verify(texts[2], KEY)[0]
    assert views[3].score == verifier.verify(texts[3], OTHER_KEY)[0]
    html_path, png_path = write_token_views(views, tmp_path, columns=2)
    assert "repeat(2," in html_path.read_text() and png_path.exists()
    with pytest.raises(ValueError, match="every model needs one completion"):
        unlearning_token_views(
            {"original": {"forget": texts[0]}}, ids, verifier, owner_names={"forget": "a"}
        )
    with pytest.raises(ValueError, match="no display name"):
        unlearning_token_views(completions, ids, verifier, owner_names={"forget": "a"})


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"text": 5}, TypeError, "`text` must be a string"),
        ({"text": ""}, ValueError, "`text` is empty"),
        ({"watermark_id": -1}, ValueError, "0..2"),
        ({"watermark_id": 2**32}, ValueError, "0..2"),
        ({"watermark_id": "7"}, TypeError, "integer"),
        ({"verifier": "tok"}, TypeError, "Verifier"),
        ({"owner": ""}, TypeError, "display name"),
    ],
)
def test_bad_input_names_the_argument(arguments, error, message):
    call = {"text": "w1 w2", "watermark_id": KEY, "verifier": Verifier(word_tokenizer(4096))}
    call.update(arguments)
    owner = call.pop("owner", "owner")
    with pytest.raises(error, match=message) as raised:
        token_view(call["text"], call["watermark_id"], call["verifier"], owner=owner)
    assert str(KEY) not in str(raised.value)


@pytest.fixture
def texts_file(tmp_path, words):
    tok, texts = words
    tok.save_pretrained(tmp_path / "tok")
    rows = [{"text": t, "owner_id": [KEY, OTHER_KEY][i % 2]} for i, t in enumerate(texts)]
    (tmp_path / "texts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "id.txt").write_text(f"{KEY}\n")
    return tmp_path, texts


@pytest.mark.parametrize("scheme", SCHEMES)
def test_show_writes_one_html_and_png_per_text(texts_file, scheme, capsys):
    tmp_path, texts = texts_file
    out = tmp_path / "views"
    argv = ["show", "--file", tmp_path / "texts.jsonl", "--watermark-tokenizer", tmp_path / "tok"]
    argv += ["--id-file", tmp_path / "id.txt", "--output-dir", out, "--max-rows", 3]
    code = main([str(a) for a in [*argv, "--scheme", scheme]])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert sorted(p.name for p in out.iterdir()) == [
        f"row-{r:04d}.{ext}" for r in range(3) for ext in ("html", "png")
    ]
    verifier = Verifier(word_tokenizer(4096), scheme=scheme)
    for row in range(3):
        page = (out / f"row-{row:04d}.html").read_text()
        assert "".join(t for *_, t in parsed(page).spans) == texts[row]
        assert f"score {verifier.verify(texts[row], KEY)[0]:+.3f}" in page
        assert f"{scheme} (" in page
        for form in key_forms(KEY):
            assert form not in page
    for form in key_forms(KEY):
        assert form not in printed.out + printed.err
    again = main([str(a) for a in argv])
    assert again == 2 and "--overwrite" in capsys.readouterr().err
    assert main([str(a) for a in [*argv, "--overwrite"]]) == 0


def test_show_reads_each_rows_key_and_name_from_columns(texts_file, capsys):
    tmp_path, texts = texts_file
    rows = [json.loads(line) for line in (tmp_path / "texts.jsonl").read_text().splitlines()]
    for i, row in enumerate(rows):
        row["owner"] = f"house-{i % 2}"
    (tmp_path / "named.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = ["show", "--file", tmp_path / "named.jsonl", "--watermark-tokenizer", tmp_path / "tok"]
    argv += ["--id-column", "owner_id", "--name-column", "owner", "--output-dir", tmp_path / "v"]
    assert main([str(a) for a in argv]) == 0
    out = capsys.readouterr().out
    assert "row 1 (house-1)" in out
    page = (tmp_path / "v" / "row-0001.html").read_text()
    score = Verifier(word_tokenizer(4096)).verify(texts[1], OTHER_KEY)[0]
    assert "house-1" in page and f"score {score:+.3f}" in page
    for form in key_forms(KEY) + key_forms(OTHER_KEY):
        assert form not in page and form not in out


def test_show_writes_exact_terms_only_when_asked_and_its_help_says_why(texts_file, capsys):
    """A shared view (the default) carries no exact term; --exact-terms restores them, and
    --help says what they give away."""
    tmp_path, texts = texts_file
    argv = ["show", "--file", tmp_path / "texts.jsonl", "--watermark-tokenizer", tmp_path / "tok"]
    argv += ["--id-file", tmp_path / "id.txt", "--max-rows", 1]
    assert main([str(a) for a in [*argv, "--output-dir", tmp_path / "shared"]]) == 0
    assert main([str(a) for a in [*argv, "--output-dir", tmp_path / "exact", "--exact-terms"]]) == 0
    view = token_view(texts[0], KEY, Verifier(word_tokenizer(4096)))
    shared = (tmp_path / "shared" / "row-0000.html").read_text()
    exact = (tmp_path / "exact" / "row-0000.html").read_text()
    terms = [t for t in view.terms if not math.isnan(t)]
    assert 'title="term ' not in shared and 'title="term ' in exact
    assert all(f"term {t:+.4f}" in exact and f"{t:+.4f}" not in shared for t in terms)
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["show", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "--exact-terms" in shown and "keyed permutation" in shown and "SECURITY.md" in shown


# --- What each output shows, exactly: hand-made views whose every colour is known. ---------

NAN = float("nan")


def hand_view(**changes) -> TokenView:
    """A view with known terms about centre 0, scale 0.8: not counted, for (over the scale),
    against, near zero, against; the text needs escaping."""
    fields = {
        "tokens": ("A<", " b&", " c", " d", "\n e"),
        "terms": (NAN, 0.9, -0.3, 0.1, -0.6),
        "score": 0.025,
        "scale": 0.8,
        "owner": "o-1",
        "scheme": {"scheme": "waterfall", "k_p": 1, "n_gram": 2},
    }
    fields.update(changes)
    return TokenView(**fields)


#: The spans of hand_view(), shared (levels) and exact (sign and strength |term| / scale).
SHARED_SPANS = (
    '<span class="u" title="not counted">A&lt;</span>'
    '<span class="t" style="background-color:rgba(67,147,195,0.800)" '
    'title="for the watermark"> b&amp;</span>'
    '<span class="t" style="background-color:rgba(214,96,77,0.800)" title="against"> c</span>'
    '<span class="t" style="background-color:rgba(150,150,150,0.300)" title="near zero"> d</span>'
    '<span class="t" style="background-color:rgba(214,96,77,0.800)" title="against">\n e</span>'
)
EXACT_SPANS = (
    '<span class="u" title="not counted">A&lt;</span>'
    '<span class="t" style="background-color:rgba(67,147,195,1.000)" '
    'title="term +0.9000"> b&amp;</span>'
    '<span class="t" style="background-color:rgba(214,96,77,0.375)" title="term -0.3000"> c</span>'
    '<span class="t" style="background-color:rgba(67,147,195,0.125)" title="term +0.1000"> d</span>'
    '<span class="t" style="background-color:rgba(214,96,77,0.750)" title="term -0.6000">\n e</span>'
)
SHARED_LEGEND = (
    '<span class="key" style="background-color:rgba(67,147,195,0.800)">for the watermark</span> '
    '<span class="key" style="background-color:rgba(150,150,150,0.300)">near zero</span> '
    '<span class="key" style="background-color:rgba(214,96,77,0.800)">against</span>'
)
EXACT_LEGEND = (
    '<span class="key" style="background-color:rgba(67,147,195,1.000)">for the watermark</span> '
    '<span class="key" style="background-color:rgba(67,147,195,0.300)">weakly for</span> '
    '<span class="key" style="background-color:rgba(214,96,77,1.000)">against</span>'
)


@pytest.mark.parametrize("exact", [False, True], ids=["shared", "exact"])
def test_the_page_is_the_exact_markup_of_each_token_legend_and_words(exact):
    """Every span of a known view, the legend, the explanation for the kind of file, the
    default title and columns, sections one per line, and a heading only for a label."""
    view = hand_view()
    page = token_views_html([view], exact_terms=exact)
    assert page.startswith(
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        "<title>Watermark view</title>\n<style>"
    )
    assert "<h1>Watermark view</h1>" in page and "repeat(1, minmax(0, 1fr))" in page
    spans = EXACT_SPANS if exact else SHARED_SPANS
    assert f'<div class="text">{spans}</div></section>' in page
    assert '<section class="view"><p class="stats">' in page and "<h2>" not in page
    legend = EXACT_LEGEND if exact else SHARED_LEGEND
    assert f'<p class="about">{legend} <span class="key" style="color:#999">not counted' in page
    words, other = (EXPLANATION, SHARED_EXPLANATION) if exact else (SHARED_EXPLANATION, EXPLANATION)
    assert f'<p class="about">{html.escape(words)}</p>' in page
    assert html.escape(other) not in page
    labelled = token_views_html(
        [hand_view(label="a & b"), view], title="T", columns=2, exact_terms=exact
    )
    assert '<section class="view"><h2>a &amp; b</h2><p class="stats">' in labelled
    assert "</section>\n<section" in labelled and labelled.count("<h2>") == 1
    assert "<title>T</title>" in labelled and "repeat(2, minmax" in labelled
    assert page == token_views_html([view], title="Watermark view", columns=1, exact_terms=exact)


def test_colours_and_levels_are_taken_about_the_null_centre():
    """Synth-ID's terms lie about 0.5: 1.0 reads for at full strength, 0.0 against at full
    strength, 0.55 near zero (0.05 above the centre), 0.25 against at half strength. Adding the
    centre instead of subtracting it (or ignoring it) colours every token blue."""
    view = hand_view(
        tokens=("a", " b", " c", " d", " e"), terms=(NAN, 1.0, 0.0, 0.55, 0.25), centre=0.5,
        scale=0.5,
    )  # fmt: skip
    exact = parsed(token_views_html([view], exact_terms=True)).spans
    assert [rgba(style) for _, style, _, _ in exact[1:]] == [
        (*POSITIVE_RGB, 1.0), (*NEGATIVE_RGB, 1.0), (*POSITIVE_RGB, 0.1), (*NEGATIVE_RGB, 0.5)
    ]  # fmt: skip
    assert [title for _, _, title, _ in exact[1:]] == [
        "term +1.0000", "term +0.0000", "term +0.5500", "term +0.2500"
    ]  # fmt: skip
    shared = parsed(token_views_html([view])).spans
    assert [title for _, _, title, _ in shared] == [
        "not counted", "for the watermark", "against", "near zero", "against"
    ]  # fmt: skip


def test_a_synthid_view_is_centred_on_the_schemes_null_mean(words):
    tok, texts = words
    verifier = Verifier(tok, scheme="synthid")
    view = token_view(texts[0], KEY, verifier)
    centre = verifier.scheme.null_moments(verifier.vocab_size).mean
    assert view.centre == pytest.approx(centre, abs=1e-12) and 0.4 < view.centre < 0.6
    assert view.z == pytest.approx((view.score - view.null_mean) / view.null_std, rel=1e-12)
    waterfall = token_view(texts[0], KEY, Verifier(tok))
    assert waterfall.centre == pytest.approx(0.0, abs=1e-12)  # Waterfall's null mean


def test_exp_edit_has_no_token_view():
    """EXP-edit scores whole texts (no per-token term): the view refuses it by name."""
    with pytest.raises(ValueError, match="'exp_edit' scheme has none"):
        token_view("w1 w2 w3", KEY, Verifier(word_tokenizer(4096), scheme="exp_edit"))


def test_a_null_without_spread_gives_no_z_and_no_p_value(monkeypatch):
    """std 0 (no pair can vary): z and p would divide by zero, so both are None."""
    from waterdrum_hf.scoring.analytic_null import AnalyticNull

    monkeypatch.setattr(AnalyticNull, "mean_std", lambda self, samples, weights: (0.25, 0.0))
    view = token_view("w1 w2 w3", KEY, Verifier(word_tokenizer(4096)))
    assert (view.null_mean, view.null_std, view.z, view.p_value) == (0.25, 0.0, None, None)


def test_colour_strength_is_capped_and_rounded_to_three_decimals():
    assert token_colour(2.0, 1.0) == (*POSITIVE_RGB, 1.0)
    assert token_colour(-1.0, 3.0) == (*NEGATIVE_RGB, 0.333)


def test_stats_line_reads_every_number_with_its_sign_and_rounding():
    """A score that rounds to zero reads +0.000 (never -0.000); the double rounding of
    round(x, 4) then 3 decimals would read -0.001 for -0.0004999."""
    view = hand_view(
        score=-0.0004999, null_mean=0.25, null_std=0.1234, z=-2.5, p_value=0.99379,
        effective_pairs=1.6, scheme={"scheme": "kgw", "gamma": 0.5, "n_gram": 2},
    )  # fmt: skip
    assert stats_line(view) == (
        "key of o-1 · kgw (gamma=0.5, n_gram=2) · score +0.000 · null level +0.250 ± 0.123 · "
        "z -2.50, p 0.99 · 4 of 5 tokens counted (~2 effective pairs)"
    )
    assert "score -0.001" in stats_line(hand_view(score=-0.0005001))


def texts_of(fig) -> list[tuple[str, tuple[float, float], str, str]]:
    """Every string the figure draws: text, (column, row), weight, colour."""
    from matplotlib.colors import to_hex

    return [
        (t.get_text(), tuple(t.get_position()), t.get_weight(), to_hex(t.get_color()))
        for t in fig.axes[0].texts
    ]


def expected_layout(views, title, columns, words):
    """The layout the figure must have, built by hand: the title, the explanation wrapped to
    the page, then views row by row (label, numbers wrapped to 76, a blank row, tokens), 80
    characters a column; a group of views ends 2 rows below its tallest view."""
    cells = [(title, (0, 0), "bold", "#222222")]
    cells += [
        (line, (0, 1 + i), "normal", "#222222")
        for i, line in enumerate(textwrap.wrap(words, columns * 80 - 4))
    ]
    top = len(cells) + 1
    for first in range(0, len(views), columns):
        bottom = 0
        for column, view in enumerate(views[first : first + columns]):
            left, row = 80 * column, 0
            if view.label:
                cells.append((view.label, (left, top), "bold", "#222222"))
                row += 1
            for line in textwrap.wrap(stats_line(view), 76):
                cells.append((line, (left, top + row), "normal", "#222222"))
                row += 1
            row, col = row + 1, 0
            for piece, term in zip(view.tokens, view.terms, strict=True):
                grey = "#999999" if math.isnan(term) else "#222222"
                cells.append((piece, (left + col, top + row), "normal", grey))
                col += len(piece)
            bottom = max(bottom, row)
        top += bottom + 2
    return cells, top


def short_view(label: str) -> TokenView:
    return hand_view(tokens=("w1", " w2", " w3"), terms=(NAN, 0.5, -0.5), label=label)


@pytest.mark.parametrize("exact", [False, True], ids=["shared", "exact"])
def test_the_figure_lays_out_title_words_and_views_on_its_grid(exact):
    """Three views in two columns: each string at its row and column, the grid's size, and a
    box of the token's colour behind each counted token only."""
    from matplotlib.colors import to_rgba

    views = [short_view("first"), short_view("second"), short_view("")]
    fig = token_views_figure(views, title="T", columns=2, exact_terms=exact)
    words = EXPLANATION if exact else SHARED_EXPLANATION
    cells, top = expected_layout(views, "T", 2, words)
    assert texts_of(fig) == cells
    ax = fig.axes[0]
    assert ax.get_xlim() == (-1, 161) and ax.get_ylim() == (top + 0.5, -0.5)
    width, height = fig.get_size_inches()
    assert width == pytest.approx(162 * 0.6021 * 9 / 72) and height == pytest.approx(
        (top + 1) * 1.75 * 9 / 72
    )
    boxes = [
        (p.get_x(), p.get_y(), p.get_width(), p.get_height(), p.get_facecolor()) for p in ax.patches
    ]
    want = []
    for text, (col, row), _, colour in cells:
        if colour == "#222222" and text.strip() in ("w2", "w3"):
            term = 0.5 if text == " w2" else -0.5
            r, g, b, a = expected_colour(term, 0.8, exact)
            want.append(
                (col + 0.05, row - 0.45, len(text) - 0.1, 0.9, (r / 255, g / 255, b / 255, a))
            )
    assert len(boxes) == len(want) == 6
    for got, expected in zip(boxes, want, strict=True):
        assert got[:4] == pytest.approx(expected[:4])
        assert got[4] == pytest.approx(to_rgba(expected[4]), abs=1e-3)


def test_the_figures_defaults_are_one_column_of_levels_titled_watermark_view():
    view = short_view("")
    cells, _ = expected_layout([view], "Watermark view", 1, SHARED_EXPLANATION)
    assert texts_of(token_views_figure([view])) == cells


def png_pixels(path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def figure_pixels(fig, tmp_path, name) -> np.ndarray:
    fig.savefig(tmp_path / name, dpi=120, facecolor="white")
    return png_pixels(tmp_path / name)


def test_the_png_is_the_figure_at_120_dpi_on_white_whatever_the_style(tmp_path):
    """plot_token_views draws token_views_figure with the same title, columns and kind, at
    120 dpi on a white background even where a style makes figures dark."""
    import matplotlib

    views = [short_view("a"), short_view("b")]
    with matplotlib.rc_context({"figure.facecolor": "black", "savefig.facecolor": "auto"}):
        path = plot_token_views(views, tmp_path / "v.png", title="T", columns=2, exact_terms=True)
        fig = token_views_figure(views, title="T", columns=2, exact_terms=True)
    shown = png_pixels(path)
    width, height = fig.get_size_inches()
    assert abs(shown.shape[0] - height * 120) <= 1 and abs(shown.shape[1] - width * 120) <= 1
    assert tuple(shown[0, 0]) == (255, 255, 255)
    assert np.array_equal(shown, figure_pixels(fig, tmp_path, "want.png"))
    default = png_pixels(plot_token_views(views, tmp_path / "d.png"))
    want = token_views_figure(views, title="Watermark view", columns=1, exact_terms=False)
    assert np.array_equal(default, figure_pixels(want, tmp_path, "want-default.png"))


def test_write_token_views_writes_both_files_as_asked(tmp_path):
    """Default names, title, columns and kind; otherwise the ones given; folders made."""
    views = [short_view("a"), short_view("b")]
    html_path, png_path = write_token_views(views, tmp_path / "x" / "y")
    assert (html_path.name, png_path.name) == ("watermark_view.html", "watermark_view.png")
    assert html_path.parent == png_path.parent == tmp_path / "x" / "y"
    assert html_path.read_text(encoding="utf-8") == token_views_html(views)
    default = token_views_figure(views, title="Watermark view", columns=1, exact_terms=False)
    assert np.array_equal(png_pixels(png_path), figure_pixels(default, tmp_path, "d.png"))
    html_path, png_path = write_token_views(
        views, tmp_path, stem="s", title="T", columns=2, exact_terms=True
    )
    assert (html_path.name, png_path.name) == ("s.html", "s.png")
    assert html_path.read_text(encoding="utf-8") == token_views_html(
        views, title="T", columns=2, exact_terms=True
    )
    given = token_views_figure(views, title="T", columns=2, exact_terms=True)
    assert np.array_equal(png_pixels(png_path), figure_pixels(given, tmp_path, "g.png"))


ASCII_LOCALE_WRITE = """
import codecs, json, locale, sys
from waterdrum_hf.report.token_view import TokenView
from waterdrum_hf.report.token_view_render import write_token_views
fields = json.loads(sys.argv[1])
fields["tokens"], fields["terms"] = tuple(fields["tokens"]), tuple(fields["terms"])
write_token_views([TokenView(**fields)], sys.argv[2])
print(codecs.lookup(locale.getpreferredencoding(False)).name)
"""


def test_the_page_is_utf8_under_an_ascii_locale(tmp_path):
    """A text with 'é' and the stats' '±' is written as UTF-8 (the page says charset=utf-8)
    even where the locale's encoding is ASCII."""
    view = hand_view(tokens=("é", " b"), terms=(NAN, 0.5), null_mean=0.0, null_std=0.1)
    fields = {k: getattr(view, k) for k in ("tokens", "terms", "score", "scale", "owner")}
    fields.update(scheme=dict(view.scheme), null_mean=0.0, null_std=0.1)
    run_in_ascii_locale(ASCII_LOCALE_WRITE, json.dumps(fields), str(tmp_path))
    written = (tmp_path / "watermark_view.html").read_bytes()
    assert written == token_views_html([view]).encode("utf-8")


def test_a_view_whose_tokens_and_terms_differ_in_number_is_refused(tmp_path):
    """A hand-made view with a term too few would shift every colour after the gap: both
    files refuse it instead of drawing what is left."""
    view = hand_view(terms=(NAN, 0.9, -0.3, 0.1))
    with pytest.raises(ValueError, match="zip"):
        token_views_html([view])
    with pytest.raises(ValueError, match="zip"):
        token_views_figure([view])


def test_tokens_wrap_at_76_characters_unbroken_when_they_fit():
    """A token that fits a line but not the rest of this one starts the next (one ending
    exactly at character 76 stays); one of exactly 76 takes a line of its own; a longer one
    is cut at the line's end; a newline starts a row; a tab is 4 spaces."""
    tokens = ("x" * 70, " yyyyyy", "w" * 69, "v", "u" * 76, "\nab", "q" * 80, "\tt")
    view = hand_view(tokens=tokens, terms=(NAN,) + (0.5,) * 7)
    stats = len(textwrap.wrap(stats_line(view), 76))
    top = len(textwrap.wrap(SHARED_EXPLANATION, 76)) + 2 + stats + 1  # the first token's row
    drawn = texts_of(token_views_figure([view]))[-9:]
    assert [(text, position) for text, position, _, _ in drawn] == [
        ("x" * 70, (0, top)),
        (" yyyyyy", (0, top + 1)),
        ("w" * 69, (7, top + 1)),
        ("v", (0, top + 2)),
        ("u" * 76, (0, top + 3)),
        ("ab", (0, top + 4)),
        ("q" * 74, (2, top + 4)),
        ("q" * 6, (0, top + 5)),
        ("    t", (6, top + 5)),
    ]


def test_the_figures_boxes_are_coloured_about_the_null_centre():
    """As in the page: with centre 0.5, a term of 1.0 is blue and 0.0 red (not both blue)."""
    view = hand_view(tokens=("a", " b", " c"), terms=(NAN, 1.0, 0.0), centre=0.5, scale=0.5)
    faces = [p.get_facecolor() for p in token_views_figure([view]).axes[0].patches]
    want = [(*POSITIVE_RGB, 0.8), (*NEGATIVE_RGB, 0.8)]
    assert faces == [pytest.approx((r / 255, g / 255, b / 255, a)) for r, g, b, a in want]


def test_the_figure_draws_line_ends_control_characters_and_missing_glyphs_plainly():
    """CRLF starts a row like LF, a control character is a space, a character the font lacks
    is one '?'."""
    view = hand_view(tokens=("a", "\r\nz", " \x07b", " \u4e2d"), terms=(NAN, 0.5, 0.5, 0.5))
    stats = len(textwrap.wrap(stats_line(view), 76))
    top = len(textwrap.wrap(SHARED_EXPLANATION, 76)) + 2 + stats + 1
    drawn = texts_of(token_views_figure([view]))[-4:]
    assert [(text, position) for text, position, _, _ in drawn] == [
        ("a", (0, top)),
        ("z", (0, top + 1)),
        ("  b", (1, top + 1)),
        (" ?", (4, top + 1)),
    ]


def test_a_level_starts_at_exactly_a_quarter_of_the_scale():
    assert [token_level(t, 2.0) for t in (0.5, 0.4999, -0.4999, -0.5)] == [
        "for", "neutral", "neutral", "against"
    ]  # fmt: skip


# --- The view's fallbacks and arguments, each against what it must be. ----------------------


def test_the_defaults_are_a_view_of_owner_without_a_label():
    view = token_view("w1 w2 w3", KEY, Verifier(word_tokenizer(4096)))
    assert (view.owner, view.label) == ("owner", "")


def test_text_after_the_last_token_goes_with_the_last_piece():
    """Whitespace the tokenizer makes no token of, at the end, is kept: the pieces still join
    to the text (the last piece runs to the end, not to its token's end)."""
    text = "w1 w2 w3 \t\n "
    view = token_view(text, KEY, Verifier(word_tokenizer(4096)))
    assert view.tokens == ("w1", " w2", " w3 \t\n ")


def bos_word_tokenizer():
    """A word tokenizer that, asked for special tokens (the default), puts ``<bos>`` first."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {f"w{i}": i for i in range(64)} | {"<bos>": 64}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="w0"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    backend.post_processor = processors.TemplateProcessing(
        single="<bos> $A", special_tokens=[("<bos>", 64)]
    )
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<bos>")
    assert tok("w1 w2")["input_ids"] == [64, 1, 2]  # the default adds it
    return tok


def test_a_tokenizer_that_adds_a_bos_token_is_cut_without_it():
    """The pieces come from the same ids the verifier reads (no special tokens): a BOS added
    by default would make the ids differ and the view refuse the text."""
    view = token_view("w1 w2 w3", KEY, Verifier(bos_word_tokenizer()))
    assert view.tokens == ("w1", " w2", " w3") and view.num_counted == 2


class NoIsFast:
    """A fast tokenizer that does not say it is fast (no ``is_fast`` attribute)."""

    def __init__(self, tokenizer):
        self._tokenizer = tokenizer

    def __call__(self, *args, **kwargs):
        return self._tokenizer(*args, **kwargs)

    def __getattr__(self, name):
        if name == "is_fast":
            raise AttributeError(name)
        return getattr(self._tokenizer, name)


def test_a_tokenizer_that_does_not_say_it_is_fast_is_refused_as_slow():
    """Only a tokenizer that says it is fast gives offsets to trust; one without the
    attribute is refused with the same clear error as a slow one."""
    verifier = Verifier(NoIsFast(word_tokenizer(4096)))
    with pytest.raises(ValueError, match="needs a fast tokenizer"):
        token_view("w1 w2 w3", KEY, verifier)


def unpowered_synthid():
    """Synth-ID with a g-value table of 1000 entries: not a power of two, so no analytic null
    and no centre; not a permutation scheme, so its scale is the text's own."""
    from waterdrum_hf.schemes.synthid.scheme import SynthIDScheme

    return SynthIDScheme(sampling_table_size=1000, n_gram=2)


def test_a_scheme_without_null_moments_is_centred_on_zero_and_scaled_by_the_text(words):
    tok, texts = words
    verifier = Verifier(tok, scheme=unpowered_synthid())
    with pytest.raises(TypeError, match="power-of-two"):
        verifier.scheme.null_moments(verifier.vocab_size)
    view = token_view(texts[0], KEY, verifier)
    assert view.centre == 0.0
    assert (view.null_mean, view.null_std, view.z, view.p_value) == (None,) * 4
    counted = [t for t in view.terms if not math.isnan(t)]
    assert view.scale == max(abs(t) for t in counted) > 0  # g-value means lie in [0, 1]


def test_a_scale_of_nothing_is_one(monkeypatch):
    """A text with no counted token, or whose every term is its centre: the scale would be
    0 (or undefined), and the colours divide by it, so it is 1."""
    verifier = Verifier(word_tokenizer(4096), scheme=unpowered_synthid())
    nothing = token_view("w5", KEY, verifier)
    assert nothing.num_counted == 0 and nothing.scale == 1.0
    from waterdrum_hf.schemes.synthid.scheme import SynthIDScheme

    monkeypatch.setattr(
        SynthIDScheme, "token_terms", lambda self, keys, contexts, tokens, n: np.zeros(len(tokens))
    )
    flat = token_view("w1 w2 w3", KEY, verifier)
    assert flat.terms[1:] == (0.0, 0.0) and flat.scale == 1.0


def test_the_stats_line_without_a_score_a_scheme_name_or_a_half_null():
    """Nothing counted reads exactly so; a scheme dict without a name reads "scheme"; a null
    mean without its spread, or a z without its p-value, is left out (not half printed)."""
    view = hand_view(
        terms=(NAN,) * 5, score=NAN, scheme={"k_p": 1}, null_mean=0.5, z=1.5, effective_pairs=None
    )
    assert stats_line(view) == (
        "key of o-1 · scheme (k_p=1) · nothing to count: no score · 0 of 5 tokens counted"
    )
    view = hand_view(null_std=0.25, p_value=0.5)
    assert stats_line(view) == (
        "key of o-1 · waterfall (k_p=1, n_gram=2) · score +0.025 · 4 of 5 tokens counted"
    )


@pytest.mark.parametrize("draw", ["html", "figure"])
def test_views_that_are_not_a_non_empty_list_of_views_are_refused(draw):
    render = token_views_html if draw == "html" else token_views_figure
    for views in ([], ["view"], [hand_view(), "view"]):
        with pytest.raises(TypeError, match="non-empty list of TokenView"):
            render(views)
    with pytest.raises(ValueError, match="`columns` must be >= 1"):
        render([hand_view()], columns=0)
    with pytest.raises(TypeError, match="`columns` must be an integer"):
        render([hand_view()], columns=1.0)


def test_the_figure_draws_on_an_agg_canvas_with_plain_monospace_text_and_borderless_boxes():
    """A caller can render the figure itself (fig.canvas.draw, buffer_rgba); every string is
    DejaVu Sans Mono at 9 points, centred on its row from its column, with no mathtext; each
    box has no edge line (it would cover the hairline between tokens)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = token_views_figure([hand_view(tokens=("a", " $x$", " c", " d", " e"))])
    assert isinstance(fig.canvas, FigureCanvasAgg)
    fig.canvas.draw()
    width, height = fig.canvas.get_width_height()
    assert np.asarray(fig.canvas.buffer_rgba()).shape == (height, width, 4)
    ax = fig.axes[0]
    assert tuple(ax.get_position().bounds) == (0.0, 0.0, 1.0, 1.0)
    for text in ax.texts:
        assert text.get_fontfamily() == ["DejaVu Sans Mono"]
        assert text.get_fontsize() == 9.0
        assert (text.get_verticalalignment(), text.get_horizontalalignment()) == ("center", "left")
        assert text.get_parse_math() is False
    assert " $x$" in [t.get_text() for t in ax.texts]
    assert len(ax.patches) == 4 and all(p.get_linewidth() == 0 for p in ax.patches)


def test_the_views_scheme_names_the_n_gram_and_the_vocabulary_it_was_read_with():
    """The scheme's own vocab_size None ("the tokenizer's") is replaced by the vocabulary the
    text was read with; nothing else is added."""
    view = token_view("w1 w2 w3", KEY, Verifier(word_tokenizer(4096)))
    assert view.scheme == {"scheme": "waterfall", "k_p": 1, "n_gram": 2, "vocab_size": 4096}
    assert "n_gram=2, vocab_size=4096" in stats_line(view)


def test_bad_text_and_ids_are_refused_with_the_arguments_name():
    verifier = Verifier(word_tokenizer(4096))
    with pytest.raises(ValueError, match="^`text` holds a lone surrogate"):
        token_view("w1 \ud800", KEY, verifier)
    with pytest.raises(ValueError, match="^`watermark_id` must be in 0..2"):
        token_view("w1 w2", 2**32, verifier)
    with pytest.raises(TypeError, match="^`watermark_id` must be an integer"):
        token_view("w1 w2", "7", verifier)
