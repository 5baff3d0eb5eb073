"""Surviving mutants of the token view (``waterdrum_hf/report/token_view.py`` and
``token_view_render.py``) judged equivalent (read by ``mutation_judged.py``): each entry is
``(function, before, after, reason)``, as ``mutation_judged.Judged`` takes them."""

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
)
