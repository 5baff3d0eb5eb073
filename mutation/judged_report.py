"""Surviving mutants of ``waterdrum_hf/report/`` (all but the token view) judged
equivalent (read by ``judged.py``): each entry is ``(function, before, after, reason)``, as
``judged.Judged`` takes them."""

from __future__ import annotations

_VERDICT = "waterdrum_hf.report.verdict."
_AUDITS = "waterdrum_hf.report.audit_section."
_FILES = "waterdrum_hf.report.files."
_TEXT = "waterdrum_hf.report.text."
_PLOTS = "waterdrum_hf.report.plots."
_ZERO_LINE = "Axes.axhline's y defaults to 0, so leaving the 0 out draws the same line"
_CASE = (
    "matplotlib reads colour names and errorbar's fmt 'none' case-insensitively "
    "(to_rgba('GREY') == to_rgba('grey'), to_rgba('NONE') is transparent), so the same is drawn"
)
_RENDERER = (
    "with no renderer given, Axes.get_window_extent ignores it and Text.get_window_extent takes "
    "the figure's, which on the Agg canvas is canvas.get_renderer(): the same object, so every "
    "box measures the same"
)
_BLACK = (
    "matplotlib reads colour names case-insensitively (to_rgba('BLACK') == "
    "to_rgba('black')), so the zero line is the same black"
)
_TYPED_AGAIN = (
    "markdown types the report's models and audits itself (typed(report['models']), "
    "typed_audits(report)); without the key it reads the caller's entries, which write_report "
    "has already typed without error a few lines above (typing a typed result returns it), so "
    "markdown gets equal results and writes the same text"
)
_STRICT_JSON = (
    "_without_nan has already turned every non-finite float (Python's, numpy's via .item(), "
    "inside mappings, lists and tuples) into None and every key into a string, so json.dumps "
    "never meets a value that allow_nan decides: strict or not, the text is the same (and a "
    "value JSON cannot write raises TypeError either way)"
)
_EMPTY_LINES = (
    "lines is still the empty list it was bound to a few lines above (nothing is added to it "
    "before this statement), so binding it to the new list holds the same lines as adding them"
)

JUDGED_ENTRIES: tuple[tuple[str, str | None, str | None, str], ...] = (
    (
        _VERDICT + "x_verdict",
        "lines += _benchmark_verdict(models, comparison, whose)",
        "lines = _benchmark_verdict(models, comparison, whose)",
        _EMPTY_LINES,
    ),
    (
        _VERDICT + "x__benchmark_verdict",
        'lines += [line, ""]',
        'lines = [line, ""]',
        _EMPTY_LINES,
    ),
    (
        _VERDICT + "x__kept",
        "if model is None or original is None or not (original.retain and model.retain):",
        "if model is None and original is None or not (original.retain and model.retain):",
        "_kept is only called by _kept_phrase from _benchmark_verdict, which runs only when "
        "models holds both 'original' and 'retrained': model is models[name] or "
        "models['retrained'] and original is models['original'], never None, so both "
        "'model is None or original is None' and 'model is None and original is None' are False",
    ),
    (
        _AUDITS + "x__set_cell",
        "value = getattr(result, name, None) if result is not None else None",
        "value = getattr(result, name, None) if (result is not None) or True else None",
        "with result None the mutant reads getattr(None, name, None), and None has no attribute "
        "'forget' or 'retain' (the only names audit_section passes), so it gives None too",
    ),
    (
        _AUDITS + "x__set_cell",
        "value = getattr(result, name, None) if result is not None else None",
        "value = getattr(result, name, ) if result is not None else None",
        "this branch runs only for a WaterDrumResult (AuditResults.from_dict types every "
        "entry), and name is 'forget' or 'retain', dataclass fields every result has, so the "
        "default is never used",
    ),
    *(
        (
            _AUDITS + "x_plot_audits",
            "for ax, audit in zip(np.atleast_1d(axes), names, strict=True):",
            f"for ax, audit in zip(np.atleast_1d(axes), names, {strict}):",
            "the axes are made by new_figure(..., ncols=len(names)): np.atleast_1d gives exactly "
            "len(names) of them (no audit: fig.subplots(1, 0) raises before the loop), so the "
            "lengths always match and strict never fires",
        )
        for strict in ("strict=False", "strict=None", "")
    ),
    (
        _AUDITS + "x_plot_audits",
        'markerfacecolor=color if filled else "white",',
        'markerfacecolor=color if filled else "WHITE",',
        "matplotlib reads colour names case-insensitively (to_rgba('WHITE') == "
        "to_rgba('white')), so the hollow marker's face is the same white",
    ),
    (
        _AUDITS + "x_plot_audits",
        '"",',
        "None,",
        "the arrow's annotation text: matplotlib's Text.set_text turns None into '' "
        "(Text(0, 0, None).get_text() == ''), so the arrow is drawn with the same empty text",
    ),
    (
        _AUDITS + "x_plot_audits",
        "line = audits.forget(audits.retrained, audit) if audits.retrained else None",
        "line = audits.forget(audits.retrained, audit) if (audits.retrained) or True else None",
        "without a retrained model the mutant calls AuditResults.forget(None, audit), which "
        "reads self.models.get(None, {}).get(audit): None, the same as the original's else",
    ),
    (
        _AUDITS + "x_plot_audits",
        'color=model_color("retrained"),',
        'color=model_color("RETRAINED"),',
        "model_color lower-cases the name before looking it up, so 'RETRAINED' gets "
        "MODEL_COLORS['retrained']",
    ),
    *(
        (function, 'ax.axhline(0, color="black", linewidth=0.5)', after, reason)
        for function in (_AUDITS + "x_plot_audits", _PLOTS + "x_plot_curves")
        for after, reason in (
            ('ax.axhline(color="black", linewidth=0.5)', _ZERO_LINE),
            ('ax.axhline(0, color="BLACK", linewidth=0.5)', _BLACK),
        )
    ),
    *(
        (
            _PLOTS + "x_plot_curves",
            'for ax, key in zip(axes, ("forget", "retain"), strict=True):',
            f'for ax, key in zip(axes, ("forget", "retain"), {strict}):',
            "new_figure(..., ncols=2) gives exactly two axes, one per key, so the lengths always "
            "match and strict never fires",
        )
        for strict in ("strict=False", "strict=None", "")
    ),
    (
        _PLOTS + "x_plot_curves",
        'fig.text(0.02, 0.0, note, ha="left", va="top", fontsize=7.5, wrap=True)',
        'fig.text(0.02, 0.0, note, va="top", fontsize=7.5, wrap=True)',
        "matplotlib's Text aligns left by default (horizontalalignment 'left'), and wrapping "
        "reads the same alignment, so the note is placed and wrapped the same",
    ),
    *(
        (_PLOTS + function, line.format("strict=True"), line.format(strict), reason)
        for function, line, reason in (
            (
                "x_benchmark_figure",
                "for ax, (title, models) in zip(axes, panels.items(), {})",
                "new_figure(..., ncols=len(panels)) makes one axis per panel",
            ),
            (
                "x_benchmark_figure",
                "for handle, label in zip(*ax.get_legend_handles_labels(), {}):",
                "get_legend_handles_labels returns a handle for each label",
            ),
            (
                "x_benchmark_figure",
                "for ax, named in zip(axes, points, {}):",
                "points holds one entry per axis (draw_benchmark's return, axis by axis)",
            ),
            (
                "x_plot_per_owner",
                "for xi, owner in zip(x, owners, {}):",
                "x is np.arange(len(owners))",
            ),
        )
        for strict in ("strict=None", "", "strict=False")
    ),
    *(
        (
            _PLOTS + "x_draw_roc",
            "for (label, raw), style in zip(curves.items(), styles, strict=False):",
            f"for (label, raw), style in zip(curves.items(), styles, {strict}):",
            "zip's strict defaults to False, and None is as false as False",
        )
        for strict in ("strict=None", "")
    ),
    (
        _PLOTS + "x_draw_roc",
        'ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=0.8)',
        'ax.plot([0, 1], color="grey", linestyle="--", linewidth=0.8)',
        "Axes.plot of one list puts it against x = range(len) = [0, 1]: the same diagonal",
    ),
    (
        _PLOTS + "x_draw_roc",
        'ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=0.8)',
        'ax.plot([0, 1], [0, 1], color="GREY", linestyle="--", linewidth=0.8)',
        _CASE,
    ),
    *(
        (_PLOTS + "x_draw_benchmark", before, after, _CASE)
        for before, after in (
            ('fmt="none",', 'fmt="NONE",'),
            ('facecolors="none",', 'facecolors="NONE",'),
            ('color="grey",', 'color="GREY",'),
        )
    ),
    *(
        (
            _PLOTS + "x_draw_benchmark",
            before,
            after,
            "errorbar drops keywords given as None and sets zorder 2 itself when none is given, "
            "so its bars are drawn at zorder 2 either way",
        )
        for before, after in (("zorder=2,", "zorder=None,"), ("zorder=2, )", ")"))
    ),
    *(
        (
            _PLOTS + "x_label_points",
            f"ax.set_{axis}lim(ax.get_{axis}lim())" + comment,
            f"ax.set_{axis}lim(None)" + comment,
            f"set_{axis}lim(None) keeps the current limits (read after the pending autoscale, as "
            f"get_{axis}lim reads them) and, as any call with auto=False, turns autoscaling "
            "off: the same frozen limits",
        )
        for axis, comment in (
            ("x", "  # freeze the limits: the names must not move the points"),
            ("y", ""),
        )
    ),
    *(
        (_PLOTS + "x_label_points", before, after, _RENDERER)
        for before, after in (
            ("renderer = ax.figure.canvas.get_renderer()", "renderer = None"),
            ("frame = ax.get_window_extent(renderer)", "frame = ax.get_window_extent(None)"),
            (
                "text.get_window_extent(renderer)  # places the name (and its leader line)",
                "text.get_window_extent(None)  # places the name (and its leader line)",
            ),
            (
                "box = Text.get_window_extent(text, renderer).padded(1.5)  # the name alone",
                "box = Text.get_window_extent(text, None).padded(1.5)  # the name alone",
            ),
            (
                "box = Text.get_window_extent(text, renderer).padded(1.5)  # the name alone",
                "box = Text.get_window_extent(text, ).padded(1.5)  # the name alone",
            ),
        )
    ),
    *(
        (
            _PLOTS + "x_label_points",
            f'{key}="{pos}" if {d} > 0 else "{neg}" if {d} < 0 else "center",',
            f'{key}="{pos}" if {d} > 1 else "{neg}" if {d} < 0 else "center",',
            "every offset in LABEL_OFFSETS is 0 or at least 6 points away in each direction, so "
            f"no {d} lies in (0, 1]",
        )
        for key, pos, neg, d in (("ha", "left", "right", "dx"), ("va", "bottom", "top", "dy"))
    ),
    *(
        (
            _PLOTS + "x_label_points",
            "if max(abs(dx), abs(dy)) < 10",
            after,
            "the largest coordinate of an offset in LABEL_OFFSETS is 6, 8, 13, 16, 21 or 26, so "
            "none lies in [10, 11)",
        )
        for after in ("if max(abs(dx), abs(dy)) <= 10", "if max(abs(dx), abs(dy)) < 11")
    ),
    (
        _PLOTS + "x_plot_per_owner",
        "label = None",
        'label = ""',
        "matplotlib gives a bar container with an empty label, as with None, the name "
        "'_containerN', which the legend leaves out: the same artists and legend",
    ),
    (
        _PLOTS + "x_plot_per_owner",
        'ax.axhline(0, color="black", linewidth=0.5)',
        'ax.axhline(color="black", linewidth=0.5)',
        _ZERO_LINE,
    ),
    (
        _PLOTS + "x_plot_per_owner",
        "zorder=0,",
        "zorder=None,",
        "matplotlib >= 3.10 returns a FillBetweenPolyCollection, whose class zorder is 0, so "
        "set_zorder(None) gives 0 there; under matplotlib 3.8-3.9 (the floor is 3.8) fill_between "
        "returns a PolyCollection, class zorder 1, and the band would be drawn over the bars. "
        "tests/report/test_report.py asserts the bands' zorder 0 below the bars, which kills it there; "
        "the gate runs the newest matplotlib",
        "not checked",
    ),
    (_PLOTS + "x_plot_per_owner", 'color="grey",', 'color="GREY",', _CASE),
    (
        _PLOTS + "x_plot_per_owner",
        'ax.axhline(0, color="black", linewidth=0.5)',
        'ax.axhline(0, color="BLACK", linewidth=0.5)',
        _BLACK,
    ),
    (
        _PLOTS + "x_plot_per_owner",
        "band = None",
        'band = ""',
        "a later band's label: Axes.add_collection names a collection with an empty label, as "
        "one with None, '_childN', and the legend leaves out empty and underscored labels: the "
        "same artists and legend",
    ),
    (
        _FILES + "x_write_report",
        'written[-1].write_text(json_text(saved["audits"]))',
        'written[+1].write_text(json_text(saved["audits"]))',
        "written is [report.json, audits.json] here (one path, then the one just appended), "
        "so written[1] is written[-1]",
    ),
    *(
        (
            _FILES + "x_write_report",
            'report = {**report, "models": models, "audits": audits}',
            after,
            _TYPED_AGAIN,
        )
        for after in (
            'report = {**report, "XXmodelsXX": models, "audits": audits}',
            'report = {**report, "MODELS": models, "audits": audits}',
            'report = {**report, "models": models, "XXauditsXX": audits}',
            'report = {**report, "models": models, "AUDITS": audits}',
        )
    ),
    (
        _FILES + "x_write_report",
        "if run_count(report) > 1:",
        "if run_count(report) >= 1:",
        "run_count is at least 1, so the mutant also takes the mean over one run: "
        "mean_over_runs keeps a value with no interval over runs (one run has none) at its own "
        "value and query interval (compare_seeds of one run: the mean of one float64 is itself), "
        "so the benchmark plot gets equal results",
    ),
    *(
        (
            _FILES + "x_json_text",
            "return json.dumps(_without_nan(value), indent=2, allow_nan=False)",
            f"return json.dumps(_without_nan(value), indent=2, {allow})",
            _STRICT_JSON,
        )
        for allow in ("allow_nan=None", "allow_nan=True", "")
    ),
    (
        _TEXT + "x__methods_and_settings",
        'lines += ["## Methods", ""]',
        'lines = ["## Methods", ""]',
        _EMPTY_LINES,
    ),
)
