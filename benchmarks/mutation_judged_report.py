"""Surviving mutants of ``waterdrum_hf/report/`` (all but the token view) judged
equivalent (read by ``mutation_judged.py``): each entry is ``(function, before, after, reason)``, as
``mutation_judged.Judged`` takes them."""

from __future__ import annotations

_VERDICT = "waterdrum_hf.report.verdict."
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
)
