"""Probes of the audits' uncounted mutants (``waterdrum_hf/audits/``): each refusal whose
message a mutant changes, reached with the inputs that raise it; see ``probes.py``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from probe_kit import each

_CONFIG = "waterdrum_hf.audits.config."
_QUANTIZATION = "waterdrum_hf.audits.quantization."
_RELEARNING = "waterdrum_hf.audits.relearning."
_RUN = "waterdrum_hf.audits.run."


def config_refusals(tmp: Path) -> Any:
    """Every refusal of AuditConfig (attacks, audits, share, rate, widths), and a valid one."""
    from waterdrum_hf.audits import AuditConfig

    return each(
        lambda: AuditConfig(attacks="deletion:0.2"),
        lambda: AuditConfig(audits=(), attacks=()),
        lambda: AuditConfig(audits=("pruning",)),
        lambda: AuditConfig(relearn_share=0.0),
        lambda: AuditConfig(relearn_learning_rate=0.0),
        lambda: AuditConfig(quantization_bits=()),
        lambda: AuditConfig(quantization_bits=(2,)),
        lambda: AuditConfig(attacks=("deletion:0.2",), attack_seed=3),
    )


def _tiny() -> Any:
    from waterdrum_hf import tiny

    return tiny.load(show_progress=False)


def checked(tmp: Path) -> Any:
    """int8 weights checked as 4-bit ones, a model with no quantized layer, and a good check."""
    import torch

    from waterdrum_hf.audits import quantize
    from waterdrum_hf.audits.quantization import _checked

    model, _ = _tiny()
    int8, check = quantize(model, 8)
    return each(
        lambda: _checked(int8, 4),
        lambda: _checked(torch.nn.Sequential(torch.nn.Linear(4, 4)), 8),
        lambda: check,
    )


def backend(tmp: Path) -> Any:
    """An unknown width, then torchao missing (as if not installed)."""
    from waterdrum_hf.audits import check_backend

    unknown = each(lambda: check_backend(3))
    sys.modules["torchao"] = None  # type: ignore[assignment]  # a forked process: no undo
    return [unknown, each(lambda: check_backend(8))]


def relearning_slice(tmp: Path) -> Any:
    """No forget texts, a share outside (0, 1], and a slice."""
    from waterdrum_hf.audits import relearning_slice

    return each(
        lambda: relearning_slice([], 0.5),
        lambda: relearning_slice(["a", "b"], 0.0),
        lambda: relearning_slice(["a", "b", "c"], 0.5),
    )


def relearn(tmp: Path) -> Any:
    """No text to fine-tune on, then a fine-tune of two steps: the weights it gives and the
    scratch folders left (none)."""
    import tempfile

    import torch

    from waterdrum_hf.audits import AuditConfig, relearn

    model, tokenizer = _tiny()
    tempfile.tempdir = str(tmp)
    config = AuditConfig(relearn_steps=2, relearn_batch_size=1)

    def trained() -> Any:
        weights = relearn(model, tokenizer, ["A list is a mutable sequence."], config)
        total = sum(p.detach().double().sum() for p in weights.parameters())
        return [float(torch.as_tensor(total)), sorted(p.name for p in tmp.iterdir())]

    return each(lambda: relearn(model, tokenizer, [], config), trained)


def check_audits(tmp: Path) -> Any:
    """A copy_paste attack without attack_source, then with it."""
    from waterdrum_hf.audits import AuditConfig, check_audits

    config = AuditConfig(audits=(), attacks=("copy_paste:0.2",))
    return each(lambda: check_audits(config, [], []), lambda: check_audits(config, [], ["pasted"]))


def run_audits(tmp: Path) -> Any:
    """No model to audit, then an audit given the unperturbed model's results (its other
    stage's completions from a cache that never loads the model): the results it returns."""
    from waterdrum_hf.audits import AuditConfig, AuditQueries, run_audits
    from waterdrum_hf.config import NullConfig, WaterDrumConfig

    _, tokenizer = _tiny()
    data = AuditQueries(["q1", "q2"], [1, 2], [1])
    options = {
        "config": AuditConfig(audits=(), attacks=("deletion:0.5",)),
        "scoring": WaterDrumConfig(null=NullConfig("analytic")),
        "cache": lambda model, audit, settings, compute: {
            "completions": [["one two three four"], ["five six seven eight"]]
        },
        "show_progress": False,
    }

    def audited() -> Any:
        first = run_audits({"m": "never loaded"}, tokenizer, data, **options)
        given = {"m": first.models["m"]["before"]}
        return run_audits({"m": "never loaded"}, tokenizer, data, before=given, **options)

    return each(lambda: run_audits({}, None, AuditQueries(["q"], [1], [1])), audited)


def queries(tmp: Path) -> Any:
    """No forget owners, lengths that differ, and good queries."""
    from waterdrum_hf.audits import AuditQueries

    return each(
        lambda: AuditQueries(["q"], [1], []),
        lambda: AuditQueries(["q", "r"], [1], [1]),
        lambda: AuditQueries(["q"], [1], [1]).queries,
    )


def attack_stage(tmp: Path) -> Any:
    """A truncation audit of the tiny model (no paraphraser read): its scores and the
    completions the stage gives."""
    from waterdrum_hf import completion_queries
    from waterdrum_hf.audits import AuditConfig, AuditQueries, run_audits
    from waterdrum_hf.config import NullConfig, WaterDrumConfig
    from waterdrum_hf.data import toy_corpus

    model, tokenizer = _tiny()
    queries = completion_queries(toy_corpus()["text"][:2], tokenizer, prefix_tokens=6)
    kept = []

    def cache(name: str, audit: str, settings: Any, compute: Any) -> Any:
        kept.append([name, audit, settings, compute()])
        return kept[-1][-1]

    config = AuditConfig(audits=(), attacks=("truncation:0.5",), num_samples=1, max_new_tokens=6)
    results = run_audits(
        {"m": model}, tokenizer, AuditQueries(queries, [1, 2], [1]), config=config,
        scoring=WaterDrumConfig(null=NullConfig("analytic")), cache=cache, show_progress=False,
    )  # fmt: skip
    return [results.scalars(), kept]


PROBES = {
    _CONFIG + "x__checked_attacks": config_refusals,
    _CONFIG + "xǁAuditConfigǁ__post_init__": config_refusals,
    _QUANTIZATION + "x__checked": checked,
    _QUANTIZATION + "x_check_backend": backend,
    _RELEARNING + "x_relearning_slice": relearning_slice,
    _RELEARNING + "x_relearn": relearn,
    _RUN + "x__attack_stage": attack_stage,
    _RUN + "x_check_audits": check_audits,
    _RUN + "x_run_audits": run_audits,
    _RUN + "xǁAuditQueriesǁ__post_init__": queries,
}
