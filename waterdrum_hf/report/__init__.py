"""Reports of WaterDrum results: ``report.json``, a readable ``report.md`` and PNG plots.

Shared by ``waterdrum demo``, ``waterdrum score``, the monitoring example and the paper
reproduction. A report is a dict::

    {"models": {name: <waterdrum_result(..., return_details=True)>, ...},
     "curves": {method: [{"step": ..., "forget": ..., "retain": ...}, ...]},   # optional
     "timings": {stage: seconds}, "settings": {...},
     # optional, for readers who never read the paper:
     "methods": {method: one-line description},
     "setting_help": {setting: what it means},
     "curve_sampling": {"queries": n, "num_samples": n, "max_new_tokens": n,
                        "no_curve": {method: why it has no curve}},
     # optional: the relearning and quantization audits (waterdrum_hf.audits)
     "audits": AuditResults or its to_dict()}

A model's result may also be its flat dict (``waterdrum_metrics``'s, or one read back from
``report.json``): every function here takes either and reads a
:class:`~waterdrum_hf.scoring.WaterDrumResult`; ``report.json`` holds the flat dicts.

Models named ``original`` and ``retrained`` are marked in the plots; every model keeps one
colour in every plot (:func:`model_color`); owners appear by name only.

The modules, in the order the data flows: :mod:`~waterdrum_hf.report.findings` reads the
results (closest method, detection, p-value floor), :mod:`~waterdrum_hf.report.text` writes
``report.md``'s words (with :mod:`~waterdrum_hf.report.verdict` for the verdict and
:mod:`~waterdrum_hf.report.audit_section` for the audits),
:mod:`~waterdrum_hf.report.plots` draws the PNGs and :mod:`~waterdrum_hf.report.files` writes
them all to a folder and reads ``report.json`` back. :mod:`~waterdrum_hf.report.token_view`
reads one text token by token under an owner's key, and
:mod:`~waterdrum_hf.report.token_view_render` draws it as HTML and PNG.
"""

from waterdrum_hf.report.audit_section import (
    AUDIT_EXPLANATION,
    audit_section,
)
from waterdrum_hf.report.files import (
    json_text,
    read_report,
    write_report,
)
from waterdrum_hf.report.findings import (
    DETECTION_LEVEL,
    closest_to_retrained,
    detected,
    p_value_floor,
    run_comparison,
    typed,
    typed_audits,
)
from waterdrum_hf.report.plots import (
    IDEAL_COLOR,
    LABEL_OFFSETS,
    OTHER_COLORS,
    benchmark_figure,
    draw_benchmark,
    draw_roc,
    label_points,
    model_color,
    new_figure,
    plot_benchmark,
    plot_curves,
    plot_per_owner,
    plot_roc,
    save_figure,
)
from waterdrum_hf.report.text import (
    Q_DEFINITION,
    curve_note,
    markdown,
)
from waterdrum_hf.report.token_view import (
    token_view,
    unlearning_token_views,
)

__all__ = [
    "AUDIT_EXPLANATION",
    "DETECTION_LEVEL",
    "IDEAL_COLOR",
    "LABEL_OFFSETS",
    "OTHER_COLORS",
    "Q_DEFINITION",
    "audit_section",
    "benchmark_figure",
    "closest_to_retrained",
    "curve_note",
    "detected",
    "draw_benchmark",
    "draw_roc",
    "json_text",
    "label_points",
    "markdown",
    "model_color",
    "new_figure",
    "p_value_floor",
    "plot_benchmark",
    "plot_curves",
    "plot_per_owner",
    "plot_roc",
    "read_report",
    "run_comparison",
    "save_figure",
    "token_view",
    "typed",
    "typed_audits",
    "unlearning_token_views",
    "write_report",
]
