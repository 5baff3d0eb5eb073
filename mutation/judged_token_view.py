"""Surviving mutants of the token view (``waterdrum_hf/report/token_view.py`` and
``token_view_render.py``) judged equivalent (read by ``judged.py``): each entry is
``(function, before, after, reason)``, as ``judged.Judged`` takes them."""

from __future__ import annotations

_VIEW = "waterdrum_hf.report.token_view."
_RENDER = "waterdrum_hf.report.token_view_render."
_ONE_SAMPLE = (
    "the null is asked about sample 0 only (samples = [0]); AnalyticNull's sample count only "
    "sets bincount's minlength, so a second, empty sample adds an entry to _starts/_ends that "
    "is never read"
)
_INT_SAMPLES = (
    "AnalyticNull reads samples through np.asarray(samples, dtype=np.int64) (_distinct_pairs), "
    "so zeros of float64 become the same int64 index 0 before any use"
)

_INT64_KEYS = (
    "watermark_id is a Python int in 0..2**32-1 (check_watermark_id returns int(value)), so "
    "np.full infers NumPy's default integer, int64 (NumPy >= 2 on every 64-bit platform; a "
    "value above 2**31 - 1 needs int64 anyway), and both readers of token terms take the keys "
    "through np.asarray(watermark_ids, np.int64) (PermutationScheme.token_terms, "
    "SynthIDScheme._each_layer): the same int64 keys"
)
_COUNTED_HAS_LEVEL = (
    "the fallback runs only for a counted token, whose colour is not None: _colour gives None "
    "exactly when term - view.centre is NaN (token_colour and level_colour both test "
    "math.isnan), and token_level gives None exactly then too, so for a counted token it is "
    "'for', 'neutral' or 'against' and the fallback is never read"
)
_CAPPED = (
    "token_colour caps the strength at 1 (min(abs(term) / scale, 1.0)): a term of 2 on a scale "
    "of 1 gives the same colour, alpha 1.0, as a term of 1"
)

JUDGED_ENTRIES: tuple[tuple[str, str | None, str | None, str], ...] = (
    (
        _VIEW + "x__null_statistics",
        "null = AnalyticNull(contexts, tokens, sample_of, 1, moments)",
        "null = AnalyticNull(contexts, tokens, sample_of, 2, moments)",
        _ONE_SAMPLE,
    ),
    (
        _VIEW + "x__null_statistics",
        "samples, weights = np.zeros(1, dtype=np.int64), np.array([1.0 / len(tokens)])",
        "samples, weights = np.zeros(1, dtype=None), np.array([1.0 / len(tokens)])",
        _INT_SAMPLES,
    ),
    (
        _VIEW + "x__null_statistics",
        "samples, weights = np.zeros(1, dtype=np.int64), np.array([1.0 / len(tokens)])",
        "samples, weights = np.zeros(1, ), np.array([1.0 / len(tokens)])",
        _INT_SAMPLES,
    ),
    (
        _RENDER + "x_plot_token_views",
        'fig.savefig(path, dpi=120, facecolor="white")',
        'fig.savefig(path, dpi=120, facecolor="WHITE")',
        "matplotlib looks colour names up lower-cased (colors._to_rgba_no_colorcycle: "
        "_colors_full_map[c.lower()]), so 'WHITE' is the same (1, 1, 1, 1)",
    ),
    (
        _RENDER + "x_write_token_views",
        'html.write_text(page, encoding="utf-8")',
        'html.write_text(page, encoding="UTF-8")',
        "codec names are case-insensitive: codecs.lookup gives the same UTF-8 codec",
    ),
    (
        _RENDER + "x__wrap",
        'return textwrap.wrap(text, width) or [""]',
        'return textwrap.wrap(text, width) or ["XXXX"]',
        "_wrap is given only EXPLANATION, SHARED_EXPLANATION and stats_line(view), which "
        "always begins 'key of', none of them empty or blank, so textwrap.wrap never returns "
        "the empty list and the fallback is never read",
    ),
    (
        _VIEW + "x__token_pieces",
        'if not getattr(tokenizer, "is_fast", False):',
        'if not getattr(tokenizer, "is_fast", None):',
        "the default is read only for a tokenizer without is_fast, and not None is True like "
        "not False: both refuse it",
    ),
    (
        _VIEW + "x__token_terms",
        "keys = np.full(len(tokens), watermark_id, dtype=np.int64)",
        "keys = np.full(len(tokens), watermark_id, dtype=None)",
        _INT64_KEYS,
    ),
    (
        _VIEW + "x__token_terms",
        "keys = np.full(len(tokens), watermark_id, dtype=np.int64)",
        "keys = np.full(len(tokens), watermark_id, )",
        _INT64_KEYS,
    ),
    *(
        (
            _RENDER + "x__html_section",
            'level = token_level(term - view.centre, view.scale) or "neutral"  # counted',
            f'level = token_level(term - view.centre, view.scale) or "{word}"  # counted',
            _COUNTED_HAS_LEVEL,
        )
        for word in ("XXneutralXX", "NEUTRAL")
    ),
    (
        _RENDER + "x_token_views_html",
        '("for the watermark", token_colour(1.0, 1.0)),',
        '("for the watermark", token_colour(2.0, 1.0)),',
        _CAPPED,
    ),
    (
        _RENDER + "x_token_views_html",
        '("against", token_colour(-1.0, 1.0)),',
        '("against", token_colour(-2.0, 1.0)),',
        _CAPPED,
    ),
    (
        _RENDER + "x_token_views_figure",
        'ha="left", parse_math=False, color="#999999" if colour is False else "#222222",',
        'parse_math=False, color="#999999" if colour is False else "#222222",',
        "matplotlib's Text takes horizontalalignment='left' by default (Text.__init__), and no "
        "rcParam changes it, so leaving ha out draws the same",
    ),
)
