"""Reproduce the WaterDrum paper's claims at small scale (``waterdrum reproduce``).

Separability (D1) and calibration (D2) of WaterDrum, its null-corrected variant, ROUGE-L and the
Min-k% Prob MIA under the three similarity settings; the benchmark of unlearning methods; the
resilience experiments (a decoy model, a diluting watermark of the model owner); or, with
``schemes``, D1 and D2 of several watermark schemes side by side (the paper's Table 5). On the
built-in corpus and small model by default (a CPU suffices); on WaterDrum-Ax with a given model
and watermarking tokenizer on a GPU. Every model and generation set is cached under
``<output_dir>/cache``, so runs resume.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from waterdrum_hf.experiments.reproduction.config import SETTINGS, TEXT_METHODS, ReproductionConfig

__all__ = ["SETTINGS", "TEXT_METHODS", "ReproductionConfig", "run_reproduction"]


def run_reproduction(
    config: ReproductionConfig,
    *,
    log: Callable[[str], None] = print,
    command: str = "waterdrum reproduce",
) -> dict[str, Any]:
    """Run every experiment (with ``config.schemes``: the comparison of those schemes
    instead), write ``results.json``, ``results.md`` and the plots into ``config.output_dir``;
    return the results. torch runs on one thread meanwhile (the small model gains nothing from
    more; restored after)."""
    from waterdrum_hf.experiments.reproduction.comparison import compare_schemes, write_comparison
    from waterdrum_hf.experiments.reproduction.experiment import Reproduction
    from waterdrum_hf.experiments.reproduction.results import write_results
    from waterdrum_hf.utils.torch_plumbing import torch_threads

    threads = 1 if config.model_name_or_path is None else None
    if config.schemes:
        with torch_threads(threads):
            results = compare_schemes(config, log)
        write_comparison(results, config.output_dir, command=command)
    else:
        with torch_threads(threads):
            results = Reproduction(config, log).run()
        write_results(results, config.output_dir, command=command)
    return results
