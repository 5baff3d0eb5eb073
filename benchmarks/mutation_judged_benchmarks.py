"""Surviving mutants of the benchmark renderers and studies (``benchmarks/*_block.py``,
``doc_blocks.py``, ``capacity.py``, ``dilution.py``, ``robustness.py``) judged equivalent or not
checked (read by ``mutation_judged.py``): each entry is ``(function, before, after, reason)``
or ``(function, before, after, reason, category)``, as ``mutation_judged.Judged`` takes them.

Not checked: the functions that run a study (train, sample and verify models for minutes to
hours: the committed results are their output, re-run by hand). Every function that turns
those results into a published table, sentence, figure or estimate is tested instead
(tests/experiments/test_capacity_*.py, tests/test_published_studies.py,
tests/test_rendered_blocks.py)."""

from __future__ import annotations

NOT_CHECKED = "not checked"


def _study(module: str, function: str, what: str) -> tuple[str | None, ...]:
    """Every mutant of ``benchmarks.<module>.<function>``: a study's run, not checked."""
    return (f"benchmarks.{module}.{function}", None, None, what, NOT_CHECKED)


_TRAINS = "the gate's fast tests cannot run it"

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
)
