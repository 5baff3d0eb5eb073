"""The per-token watermark view (``waterdrum_hf.report.token_view``) and ``waterdrum show``:
terms equal to the verifier's, colours that follow them, HTML that parses and holds no key,
a valid PNG, both schemes."""

from __future__ import annotations

import io
import json
import math
from html.parser import HTMLParser

import numpy as np
import pytest
from tokenizer_builders import pydoc_bpe_tokenizer, word_texts, word_tokenizer

from waterdrum_hf import Verifier, WaterDrumConfig, compute_waterdrum
from waterdrum_hf.cli import main
from waterdrum_hf.report.token_view import (
    NEGATIVE_RGB,
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

KEY = 3_000_000_017  # distinctive, so that a leak would show
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


@pytest.mark.parametrize("scheme", SCHEMES)
def test_html_colours_follow_the_terms(words, scheme):
    tok, texts = words
    view = token_view(texts[2], KEY, Verifier(tok, scheme=scheme), owner="owner-1")
    page = parsed(token_views_html([view]))
    assert len(page.spans) == len(view.tokens)
    assert "".join(text for *_, text in page.spans) == texts[2]
    alphas = []
    for (kind, style, title, _), term in zip(page.spans, view.terms, strict=True):
        if math.isnan(term):
            assert kind == "u" and not style
            alphas.append(-1.0)
            continue
        red, green, blue, alpha = rgba(style)
        assert (red, green, blue) == (POSITIVE_RGB if term >= 0 else NEGATIVE_RGB)
        assert alpha == pytest.approx(abs(term) / view.scale, abs=1e-3)
        assert float(title.split()[-1]) == pytest.approx(term, abs=1e-4)
        alphas.append(alpha if term >= 0 else -alpha)
    strongest = int(np.nanargmax(view.terms))
    assert alphas[strongest] == max(alphas)
    assert NEGATIVE_RGB != POSITIVE_RGB and any(t < 0 for t in view.terms)


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
    _, png = write_token_views([view], tmp_path)
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
    argv = ["show", tmp_path / "texts.jsonl", "--watermark-tokenizer", tmp_path / "tok"]
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
    argv = ["show", tmp_path / "named.jsonl", "--watermark-tokenizer", tmp_path / "tok"]
    argv += ["--id-column", "owner_id", "--name-column", "owner", "--output", tmp_path / "v"]
    assert main([str(a) for a in argv]) == 0
    out = capsys.readouterr().out
    assert "row 1 (house-1)" in out
    page = (tmp_path / "v" / "row-0001.html").read_text()
    score = Verifier(word_tokenizer(4096)).verify(texts[1], OTHER_KEY)[0]
    assert "house-1" in page and f"score {score:+.3f}" in page
    for form in key_forms(KEY) + key_forms(OTHER_KEY):
        assert form not in page and form not in out
