"""The per-token watermark view (``waterdrum_hf.report.token_view``) and ``waterdrum show``:
terms equal to the verifier's, colours that follow them, HTML that parses and holds no key,
a valid PNG, both schemes."""

from __future__ import annotations

import io
import json
import math
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from tokenizer_builders import pydoc_bpe_tokenizer, word_texts, word_tokenizer

from waterdrum_hf import Verifier, WaterDrumConfig, compute_waterdrum
from waterdrum_hf.report.token_view import (
    NEGATIVE_RGB,
    NEUTRAL_RGB,
    POSITIVE_RGB,
    token_colour,
    token_view,
    unlearning_token_views,
)
from waterdrum_hf.report.token_view_render import (
    token_views_figure,
    token_views_html,
    write_token_views,
)
from waterdrum_hf.scripts import main

KEY = 3_000_000_017  # distinctive, so that a leak would show
NUMBER_IN = re.compile(r"\d")
OTHER_KEY = 3_999_999_929
SCHEMES = ["waterfall", "kgw"]


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


@pytest.mark.parametrize("scheme", SCHEMES)
def test_null_level_and_p_value_are_the_metrics_analytic_null_of_the_text(words, scheme):
    tok, texts = words
    view = token_view(texts[1], KEY, Verifier(tok, scheme=scheme))
    config = WaterDrumConfig.from_keywords({"null": "analytic", "scheme": scheme})
    metric = compute_waterdrum([texts[1]], [KEY], tok, config=config)
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
@pytest.mark.parametrize("scheme", SCHEMES)
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
        expected = expected_colour(term, view.scale, exact)
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
    assert any(t > 0 for t in counted) and any(t < 0 for t in counted)
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
@pytest.mark.parametrize("scheme", SCHEMES)
def test_png_colour_of_each_token_is_its_own_terms(words, scheme, exact, tmp_path):
    """Token by token, the PNG shows behind each token the colour of that token's own term
    (sign and size), composited on white; not counted: no box (a shift by one token, or a
    flipped sign, fails)."""
    tok, texts = words
    text = " ".join(texts[0].split()[:40])
    view = token_view(text, KEY, Verifier(tok, scheme=scheme))
    shown = png_token_colours(view, tmp_path, exact)
    expected = [on_white(expected_colour(t, view.scale, exact)) for t in view.terms]
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
    argv += ["--id-file", tmp_path / "id.txt", "--output", out, "--max-rows", 3]
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
    argv += ["--id-column", "owner_id", "--name-column", "owner", "--output", tmp_path / "v"]
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
    assert main([str(a) for a in [*argv, "--output", tmp_path / "shared"]]) == 0
    assert main([str(a) for a in [*argv, "--output", tmp_path / "exact", "--exact-terms"]]) == 0
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
