"""Surviving mutants of the benchmark renderers and studies (``docs/generators/*_block.py``,
``doc_blocks.py``, ``capacity.py``, ``dilution.py``, ``robustness.py``) judged equivalent or not
checked (read by ``judged.py``): each entry is ``(function, before, after, reason)``
or ``(function, before, after, reason, category)``, as ``judged.Judged`` takes them.

Not checked: the functions that run a study (train, sample and verify models for minutes to
hours: the committed results are their output, re-run by hand). Every function that turns
those results into a published table, sentence, figure or estimate is tested instead
(benchmarks/tests/test_capacity*.py, benchmarks/tests/test_published_studies.py,
tests/docs/test_rendered_blocks.py)."""

from __future__ import annotations

NOT_CHECKED = "not checked"


def _study(module: str, function: str, what: str) -> tuple[str | None, ...]:
    """Every mutant of ``benchmarks.<module>.<function>``: a study's run, not checked."""
    return (f"benchmarks.{module}.{function}", None, None, what, NOT_CHECKED)


_TRAINS = "the gate's fast tests cannot run it"

_BACKEND = (
    "matplotlib looks backend names up case-insensitively (rcsetup validates them lowercased): "
    "'agg' and 'AGG' select the same Agg backend"
)
_ONE_MARKER = "{}: the mutant reads the same block"
_FIRST_PART = (
    "str.split(sep, n)[0] is the text before the first sep for every n (and without n): "
    "the maxsplit only decides how the rest is cut, and only [0] is read"
)
_RESULTS_LINE = (
    'results = report.split("\\n## Results\\n", 1)[-1].split("\\n## ", 1)[0]  # not the settings\''
)
_SECTION_LINE = 'section = audits[1].split("\\n## ", 1)[0].split("Retain values before", 1)[0]'

JUDGED_ENTRIES: tuple[tuple[str | None, ...], ...] = (
    # benchmarks/capacity.py: trains the reproduction's no-duplicate setting on three base-model
    # sizes x two epoch counts x three seeds (hours on one thread).
    _study(
        "capacity",
        "x_main",
        "the capacity study's command line: parses arguments, runs the study (hours of "
        "training and verification on one thread) and writes its results folder; "
        f"{_TRAINS}",
    ),
    _study(
        "capacity",
        "x_run",
        "pretrains each base-model size, retrains and verifies the reproduction's "
        f"no-duplicate models for every epochs and seed (hours); {_TRAINS}",
    ),
    _study(
        "capacity",
        "x_base_config",
        "the ReproductionConfig the run trains with (its output folder is the model cache); "
        f"only the run reads it and a wrong one changes only which models are trained; {_TRAINS}",
    ),
    _study(
        "capacity",
        "x_tiny_size",
        "the base-model size the run pretrains for a plan's size name; only the run reads it; "
        f"{_TRAINS}",
    ),
    _study(
        "capacity",
        "x_training_token_seconds",
        "times real forward/backward/AdamW steps of freshly built models (wall-clock seconds, "
        f"different on every machine and run: nothing to compare with); {_TRAINS}",
    ),
    # benchmarks/dilution.py: samples every reproduction model under four model-owner
    # watermarks for three seeds (hours).
    _study(
        "dilution",
        "x_main",
        "the dilution study's command line: runs the study (the reproduction's models sampled "
        "under each model owner's watermark, hours) and writes its results folder; "
        f"{_TRAINS}",
    ),
    _study(
        "dilution",
        "x_run",
        "calibrates the reproduction's models and samples and verifies each under every "
        f"model owner's watermark and seed (hours); {_TRAINS}",
    ),
    _study(
        "dilution",
        "x_reproduction_config",
        "the ReproductionConfig the run trains with (its output folder is the model cache); "
        f"only the run reads it; {_TRAINS}",
    ),
    # benchmarks/robustness.py: trains the demo's models and verifies every attack at every
    # strength and seed (an hour).
    _study(
        "robustness",
        "x_main",
        "the robustness study's command line: runs the study (the demo's models, every attack, "
        f"strength and seed verified, an hour) and writes its results folder; {_TRAINS}",
    ),
    _study(
        "robustness",
        "x_run_scheme",
        "trains or loads the demo's models of one scheme, samples their completions and "
        f"measures every attack on them; {_TRAINS}",
    ),
    _study(
        "robustness",
        "x_measure",
        "verifies both demo models' attacked completions with the library's metric (its "
        "inputs are the run's trained models' completions and the owners' keys); "
        f"{_TRAINS}",
    ),
    _study(
        "robustness",
        "x_attack_inputs",
        "the built-in model and the owners' passages the run hands each attack; only the run "
        f"reads it; {_TRAINS}",
    ),
    # Equivalent: each proof below; each function has a probe in probes_benchmarks.py.
    *(
        (
            "docs.generators.trust_block.x_correlation",
            "xs, ys = zip(*pairs, strict=True) if pairs else ((), ())",
            after,
            "every pair is the 2-tuple (column mean, R² mean) built two lines above, so the "
            "iterables zip reads (the pairs) all have length 2 and strictness never fires",
        )
        for after in (
            "xs, ys = zip(*pairs, strict=None) if pairs else ((), ())",
            "xs, ys = zip(*pairs, ) if pairs else ((), ())",
            "xs, ys = zip(*pairs, strict=False) if pairs else ((), ())",
        )
    ),
    *(
        (
            "docs.generators.doc_blocks.x_read_block",
            'return text.split(start, 1)[1].split(end, 1)[0].strip("\\n")',
            after,
            _ONE_MARKER.format(
                "the text holds one start marker, so its split gives the same "
                "[before, after] under any maxsplit and from either end; the "
                "part after it holds at most one end marker, so [0] is the text "
                "before it under any maxsplit and from either end"
            ),
        )
        for after in (
            'return text.split(start, 1)[1].split(end, )[0].strip("\\n")',
            'return text.split(start, 1)[1].rsplit(end, 1)[0].strip("\\n")',
            'return text.split(start, )[1].split(end, 1)[0].strip("\\n")',
            'return text.rsplit(start, 1)[1].split(end, 1)[0].strip("\\n")',
            'return text.split(start, 2)[1].split(end, 1)[0].strip("\\n")',
            'return text.split(start, 1)[1].split(end, 2)[0].strip("\\n")',
        )
    ),
    *(
        (
            "docs.generators.doc_blocks.x_replace_block",
            before,
            after,
            _ONE_MARKER.format(
                "read_block has checked one start and one end marker in the "
                "text, so each split here meets at most one separator and "
                "gives the same parts under any maxsplit and from either end "
                "(an end before the start: IndexError in every variant)"
            ),
        )
        for before, afters in (
            (
                "head, rest = text.split(start, 1)",
                (
                    "head, rest = text.split(start, )",
                    "head, rest = text.rsplit(start, 1)",
                    "head, rest = text.split(start, 2)",
                ),
            ),
            (
                'return head + start + "\\n" + block + "\\n" + end + rest.split(end, 1)[1]',
                (
                    'return head + start + "\\n" + block + "\\n" + end + rest.split(end, )[1]',
                    'return head + start + "\\n" + block + "\\n" + end + rest.rsplit(end, 1)[1]',
                    'return head + start + "\\n" + block + "\\n" + end + rest.split(end, 2)[1]',
                ),
            ),
        )
        for after in afters
    ),
    *(
        ("docs.generators.demo_block.x_render", before, after, _FIRST_PART)
        for before, afters in (
            (
                _RESULTS_LINE,
                (
                    _RESULTS_LINE.replace('.split("\\n## ", 1)', '.split("\\n## ", )'),
                    _RESULTS_LINE.replace('.split("\\n## ", 1)', '.split("\\n## ", 2)'),
                ),
            ),
            (
                _SECTION_LINE,
                (
                    _SECTION_LINE.replace(
                        '"Retain values before", 1)', '"Retain values before", )'
                    ),
                    _SECTION_LINE.replace('.split("\\n## ", 1)', '.split("\\n## ", )'),
                    _SECTION_LINE.replace('.split("\\n## ", 1)', '.split("\\n## ", 2)'),
                    _SECTION_LINE.replace(
                        '"Retain values before", 1)', '"Retain values before", 2)'
                    ),
                ),
            ),
        )
        for after in afters
    ),
    (
        "docs.generators.gpu_block.x_versions",
        'floors = {name: pin for name, _, pin in (word.partition("==") for word in pins)}',
        'floors = {name: pin for name, _, pin in (word.rpartition("==") for word in pins)}',
        "pins holds the floors file's words that contain '==', and a pin is name==version "
        "with one '==' (pip's syntax: a version has no '='; the file's comments quote pins "
        "the same way), so the first and the last '==' are the same and both split alike",
    ),
    *(
        (
            "benchmarks.robustness.x_attacked",
            "return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]",
            f"return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:], {strict})]",
            "bounds[:-1] and bounds[1:] are slices of one array, each one element shorter than "
            "it, so zip's two iterables always have the same length and strictness never fires",
        )
        for strict in ("strict=None", "", "strict=False")
    ),
    *(
        (f"benchmarks.{module}.x_plot", 'matplotlib.use("Agg")', after, _BACKEND)
        for module in ("capacity", "robustness")
        for after in ('matplotlib.use("agg")', 'matplotlib.use("AGG")')
    ),
    *(
        ("benchmarks.capacity.x_plot", before, before.replace("strict=True", strict), why)
        for before, why in (
            (
                "for ax, column in zip(axes[:-1], panels, strict=True):",
                "the figure has len(panels) + 1 axes, so axes[:-1] and panels have the same "
                "length and strictness never fires",
            ),
            (
                "for p, xi, yi in zip(points, x, y, strict=True):",
                "x and y are built from points one entry each, so the three have the same "
                "length and strictness never fires",
            ),
        )
        for strict in ("strict=None", "", "strict=False")
    ),
    *(
        (
            "benchmarks.robustness.x_plot",
            "for ax, column in zip(axes[row], panels, strict=True):",
            f"for ax, column in zip(axes[row], panels, {strict}):",
            "each row of the grid has len(panels) axes (squeeze=False keeps it 2-D), so the "
            "two have the same length and strictness never fires",
        )
        for strict in ("strict=None", "", "strict=False")
    ),
    (
        "benchmarks.robustness.x_plot",
        "len(schemes), len(panels), figsize=(13, 3.6 * len(schemes)), squeeze=False",
        "len(schemes), len(panels), figsize=(13, 3.6 * len(schemes)), squeeze=None",
        "matplotlib reads squeeze by its truth value (GridSpec.subplots: `if squeeze:`), and "
        "None is false like False: the axes stay a 2-D array",
    ),
)
