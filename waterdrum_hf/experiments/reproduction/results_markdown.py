"""``results.md`` of a reproduction run: the paper's tables with our numbers (mean [t interval] over
seeds) and its numbers beside them, section by section."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from waterdrum_hf.experiments.reproduction.config import BUILT_IN, QA_DATASETS
from waterdrum_hf.experiments.reproduction.markdown_parts import number, reproduction_cells
from waterdrum_hf.report import typed
from waterdrum_hf.report.formatting import table_head

LABELS = {
    "waterdrum": "WaterDrum",
    "waterdrum_null_corrected": "WaterDrum (null-corrected)",
    "rouge_l": "ROUGE-L",
    "rouge_l_unwatermarked": "ROUGE-L, unwatermarked data",
    "mia": "MIA",
    "mia_unwatermarked": "MIA, unwatermarked data",
    "extraction": "Extraction strength",
    "extraction_unwatermarked": "Extraction strength, unwatermarked data",
    "mia_loss": "MIA (LOSS)",
    "mia_loss_unwatermarked": "MIA (LOSS), unwatermarked data",
    "mia_zlib": "MIA (zlib)",
    "mia_zlib_unwatermarked": "MIA (zlib), unwatermarked data",
    "mia_min_k_plus_plus": "MIA (Min-k%++)",
    "mia_min_k_plus_plus_unwatermarked": "MIA (Min-k%++), unwatermarked data",
    "truth_ratio": "Truth Ratio",
    "truth_ratio_unwatermarked": "Truth Ratio, unwatermarked data",
    "knowmem": "KnowMem",
    "knowmem_unwatermarked": "KnowMem, unwatermarked data",
}

D1_METRICS = (
    "waterdrum", "waterdrum_null_corrected", "rouge_l", "truth_ratio", "rouge_l_unwatermarked",
    "truth_ratio_unwatermarked",
)  # fmt: skip
"""D1's columns, where measured (no unwatermarked twin: no unwatermarked ROUGE-L; Truth Ratio
on questions only)."""
D2_METRICS = (
    "waterdrum", "waterdrum_null_corrected", "rouge_l", "truth_ratio", "mia",
    "rouge_l_unwatermarked", "truth_ratio_unwatermarked", "mia_unwatermarked",
)  # fmt: skip
"""D2's columns, where measured."""

EVERY_METRIC = (
    "waterdrum", "rouge_l", "truth_ratio", "knowmem", "extraction", "mia", "mia_loss",
    "mia_zlib", "mia_min_k_plus_plus", "rouge_l_unwatermarked", "truth_ratio_unwatermarked",
    "knowmem_unwatermarked", "extraction_unwatermarked", "mia_unwatermarked",
    "mia_loss_unwatermarked", "mia_zlib_unwatermarked", "mia_min_k_plus_plus_unwatermarked",
)  # fmt: skip
"""The rows of the every-baseline tables, where measured: WaterDrum and each baseline on the
watermarked data, then the baselines on the unwatermarked twin."""

PAPER: dict[str, Any] = {
    # WaterDrum-Ax, Llama-2-7B. WaterDrum: Table 1 (AUROC +- 3 seeds), Table 2 and the offset
    # table of the appendix (R^2). The baselines on the watermarked data ("rouge_l", "mia"): the
    # appendix's tables of baselines on models fine-tuned on watermarked text (AUROC, R^2; no
    # offset table); on the unwatermarked data ("..._unwatermarked"): Table 1, Table 2 and the
    # offset table, whose baselines are measured on models fine-tuned on the unwatermarked text.
    "auroc": {
        "exact_duplicate": {
            "waterdrum": "0.957 ± 0.008",
            "rouge_l": "0.979 ± 0.004",
            "rouge_l_unwatermarked": "0.334 ± 0.005",
        },
        "semantic_duplicate": {
            "waterdrum": "0.963 ± 0.001",
            "rouge_l": "0.979 ± 0.000",
            "rouge_l_unwatermarked": "0.960 ± 0.002",
        },
        "no_duplicate": {
            "waterdrum": "0.965 ± 0.002",
            "rouge_l": "0.983 ± 0.000",
            "rouge_l_unwatermarked": "0.974 ± 0.001",
        },
    },
    "r2": {
        "exact_duplicate": {
            "waterdrum": "0.987",
            "rouge_l": "0.774",
            "mia": "-5.375",
            "rouge_l_unwatermarked": "-37.47",
            "mia_unwatermarked": "-285.6",
        },
        "semantic_duplicate": {
            "waterdrum": "0.991",
            "rouge_l": "0.677",
            "mia": "-6.629",
            "rouge_l_unwatermarked": "0.693",
            "mia_unwatermarked": "-14.52",
        },
        "no_duplicate": {
            "waterdrum": "0.963",
            "rouge_l": "0.758",
            "mia": "-0.437",
            "rouge_l_unwatermarked": "0.650",
            "mia_unwatermarked": "0.677",
        },
    },
    "r2_offset": {
        "exact_duplicate": {
            "waterdrum": "0.994",
            "rouge_l_unwatermarked": "0.923",
            "mia_unwatermarked": "0.273",
        },
        "semantic_duplicate": {
            "waterdrum": "0.995",
            "rouge_l_unwatermarked": "0.997",
            "mia_unwatermarked": "-0.011",
        },
        "no_duplicate": {
            "waterdrum": "0.957",
            "rouge_l_unwatermarked": "0.998",
            "mia_unwatermarked": "0.990",
        },
    },
    "dilution": {"none": ("0.964", "0.963"), "waterfall": ("0.923", "0.936")},
}

PAPER_TOFU: dict[str, Any] = {
    # WaterDrum-TOFU, Llama-2-7B, for the QA datasets. AUROC: Table 1 (WaterDrum, and ROUGE-L
    # and Truth Ratio on the unwatermarked data) and the appendix's table on watermarked text;
    # R^2: the appendix's tables on unwatermarked text (TOFU calibration, and its offset
    # relaxation) and on watermarked text. The dilution study is the paper's on WaterDrum-Ax.
    "auroc": {
        "exact_duplicate": {
            "waterdrum": "0.926 ± 0.027",
            "rouge_l": "0.926 ± 0.051",
            "truth_ratio": "0.509 ± 0.002",
            "rouge_l_unwatermarked": "0.510 ± 0.007",
            "truth_ratio_unwatermarked": "0.508 ± 0.008",
        },
        "semantic_duplicate": {
            "waterdrum": "0.954 ± 0.001",
            "rouge_l": "0.977 ± 0.001",
            "truth_ratio": "0.515 ± 0.003",
            "rouge_l_unwatermarked": "0.798 ± 0.001",
            "truth_ratio_unwatermarked": "0.472 ± 0.054",
        },
        "no_duplicate": {
            "waterdrum": "0.928 ± 0.026",
            "rouge_l": "0.980 ± 0.005",
            "truth_ratio": "0.727 ± 0.000",
            "rouge_l_unwatermarked": "0.908 ± 0.005",
            "truth_ratio_unwatermarked": "0.747 ± 0.011",
        },
    },
    "r2": {
        "exact_duplicate": {
            "waterdrum": "0.889",
            "rouge_l": "-7.624",
            "truth_ratio": "-261.2",
            "mia": "-1.005",
            "rouge_l_unwatermarked": "-1263.951",
            "truth_ratio_unwatermarked": "-6444.874",
            "mia_unwatermarked": "-6.201",
        },
        "semantic_duplicate": {
            "waterdrum": "0.947",
            "rouge_l": "-16.31",
            "truth_ratio": "-229.2",
            "mia": "0.541",
            "rouge_l_unwatermarked": "-20.560",
            "truth_ratio_unwatermarked": "-1416.284",
            "mia_unwatermarked": "-0.813",
        },
        "no_duplicate": {
            "waterdrum": "0.923",
            "rouge_l": "0.511",
            "truth_ratio": "-13.71",
            "mia": "-1.277",
            "rouge_l_unwatermarked": "-0.287",
            "truth_ratio_unwatermarked": "-11.741",
            "mia_unwatermarked": "-1.059",
        },
    },
    "r2_offset": {
        "exact_duplicate": {
            "waterdrum": "0.997",
            "rouge_l_unwatermarked": "0.991",
            "truth_ratio_unwatermarked": "-0.586",
            "mia_unwatermarked": "-0.018",
        },
        "semantic_duplicate": {
            "waterdrum": "0.996",
            "rouge_l_unwatermarked": "0.998",
            "truth_ratio_unwatermarked": "0.854",
            "mia_unwatermarked": "-0.435",
        },
        "no_duplicate": {
            "waterdrum": "0.997",
            "rouge_l_unwatermarked": "0.999",
            "truth_ratio_unwatermarked": "0.995",
            "mia_unwatermarked": "0.608",
        },
    },
    "dilution": PAPER["dilution"],
}


def paper_numbers(config: Mapping[str, Any]) -> dict[str, Any]:
    """The paper's numbers beside a run's: WaterDrum-TOFU's for questions, else WaterDrum-Ax's."""
    return PAPER_TOFU if config["dataset_name"] in QA_DATASETS else PAPER


TITLE = "Reproducing WaterDrum's claims at small scale"


def markdown(results: Mapping[str, Any], *, command: str) -> str:
    """The paper's tables with our numbers (mean [t interval] over seeds) and its numbers
    beside: every cell over seeds computed first (:func:`reproduction_cells`), then laid out
    section by section."""
    cells = reproduction_cells(results, title=TITLE, command=command)
    sections = (
        _introduction(results, cells),
        _separability(results, cells),
        _calibration(results, cells),
        _mia(results, cells),
        _every_baseline(results, cells),
        _meta_evaluation(results, cells),
        _plotted(
            f"The benchmark of unlearning methods ({cells['first_of']})",
            _benchmark_table(results["benchmark"]),
            "![benchmark](benchmark.png)",
        ),
        _benchmark_over_seeds(results.get("benchmark_runs") or {}),
        _forget_quality(results, cells),
        _plotted(
            f"Resilience ({cells['first_of']})",
            _resilience_tables(results["resilience"]),
            "![decoy curve](resilience.png)",
        ),
        ["## Expected outcome, checked", "", *_checks(results, cells)],
    )
    return "\n".join(line for section in sections if section for line in (*section, ""))


def _introduction(results: Mapping[str, Any], cells: Mapping[str, Any]) -> list[str]:
    """The title, the run's heading and what was run, in one paragraph."""
    config = results["config"]
    paper_dataset, queries, reference = _protocol(config)
    return [
        *cells["heading"],
        f"Data: {_data(config)}. Model: {config['model_name_or_path'] or 'the built-in small model'}, fine-tuned "
        f"{config['epochs']} epochs. Queries: {queries}; {config['num_samples']} samples of "
        f"{config['max_new_tokens']} tokens each, pooled per query; ROUGE-L: the greedy continuation "
        f"({config['rouge_new_tokens']} tokens) against {reference}; MIA: Min-k% Prob "
        f"(k = {config['mia_k']:g}), reported as 2 AUROC - 1 (forget vs holdout; the paper's "
        f"1 - 2 AUROC with holdout positive). "
        + cells["seeds_sentence"]
        + f"The paper's numbers are {paper_dataset} on Llama-2-7B. The paper measures WaterDrum on "
        "the watermarked data and, in its main tables, the baselines on models fine-tuned on the "
        "unwatermarked data, where an exact duplicate is a literal copy of its forget text; its "
        "appendix measures them on the watermarked data too, where each duplicate carries "
        "another owner's watermark and is no longer a copy. Our baselines are read on the "
        "watermarked data"
        + (
            ", and also on models retrained on the unwatermarked twin of each setting (the "
            "owners' original texts, the duplicates literal copies or the paraphrases before "
            "watermarking)"
            if _twin(results)
            else " only"
        )
        + "; each of our columns is compared with the paper's under the same protocol.",
    ]


def _twin(results: Mapping[str, Any]) -> bool:
    """Whether the run read the baselines on the unwatermarked twin too (the built-in corpus)."""
    return "rouge_l_unwatermarked" in _present(results, "auroc", D1_METRICS)


def _separability(results: Mapping[str, Any], cells: Mapping[str, Any]) -> list[str]:
    """D1's table, and how close the duplicates are to what they duplicate."""
    return [
        "## Separability (D1): AUROC of per-query values on the retrained model",
        "",
        *_table(results, cells, "auroc", _present(results, "auroc", D1_METRICS)),
        "",
        *_duplicate_table(
            results.get("duplicate_similarity", {}),
            results.get("duplicate_similarity_unwatermarked", {}),
        ),
    ]


def _present(results: Mapping[str, Any], name: str, metrics: tuple[str, ...]) -> tuple[str, ...]:
    """Those of ``metrics`` that some setting has a ``name`` value of (a run without the
    unwatermarked twin, on a published dataset, has no unwatermarked ROUGE-L)."""
    return tuple(m for m in metrics if any(m in s[name] for s in results["settings"].values()))


def _calibration(results: Mapping[str, Any], cells: Mapping[str, Any]) -> list[str]:
    """D2's tables (plain and offset), the curves, the forget value split by query, and the
    ROC plot."""
    metrics = _present(results, "r2", D2_METRICS)
    return [
        "## Calibration (D2): R² of the forget value against k/|D_F|, line through the origin",
        "",
        "Without referencing the retrained model (the paper's main table; its appendix's for "
        "the baselines on the watermarked data):",
        "",
        *_table(results, cells, "r2", metrics),
        "",
        "With the paper's offset relaxation (the retrained model's value subtracted first):",
        "",
        *_table(results, cells, "r2_offset", metrics),
        "",
        "![calibration curves](calibration.png)",
        "",
        "WaterDrum's forget value split by query: the queries made from the forget texts the "
        "model was trained on (the first k % of the forget set, in order), the rest, and the rest "
        "on the model retrained without the forget set (k = 0). Where the rest reads above its "
        "k = 0 value, the model carried the forget owners' watermark over from the texts it was "
        "trained on to the others, which bends the curve above the line:",
        "",
        *cells["split"],
        "",
        "![ROC curves](roc.png)",
    ]


def _mia(results: Mapping[str, Any], cells: Mapping[str, Any]) -> list[str]:
    """The MIA baseline on the original and the retrained model."""
    return [
        "## MIA baseline (Min-k% Prob)",
        "",
        "| setting | original model | retrained model |",
        "| --- | --- | --- |",
        *[f"| {s} | {m['original']} | {m['retrained']} |" for s, m in cells["mia"].items()],
    ]


def _every_baseline(results: Mapping[str, Any], cells: Mapping[str, Any]) -> list[str]:
    """D1 and D2 of WaterDrum and every baseline measured, a row each, a column per setting:
    the metrics users run today beside the paper's, on the same models."""
    d1_rows = _present(results, "auroc", EVERY_METRIC)
    d2_rows = _present(results, "r2", EVERY_METRIC)
    if not set(d2_rows) - set(D2_METRICS):  # a run from before these baselines were read
        return []
    return [
        "## Every baseline on the same models",
        "",
        "The paper's baselines are ROUGE-L and the MIA (Min-k% Prob), in the tables above. The "
        "ones unlearning benchmarks report today beside them: open-unlearning's extraction "
        "strength (per query: how short a prefix of the query's reference continuation the "
        "model needs to write the rest greedily) and the MIA's LOSS, zlib and Min-k%++ "
        "attacks (2 AUROC - 1, forget set vs holdout, as the paper's MIA). Each on the same "
        f"models; {_cell_words(results)}. {_qa_words(results)}",
        "",
        "D1, AUROC of per-query values on the retrained model (the set-level MIAs have none):",
        "",
        *_metric_rows(cells, "auroc", d1_rows),
        "",
        "D2, R² of the forget value against k/|D_F| through the origin:",
        "",
        *_metric_rows(cells, "r2", d2_rows),
        "",
        "D2 with the retrained model's value subtracted first:",
        "",
        *_metric_rows(cells, "r2_offset", d2_rows),
    ]


def _qa_words(results: Mapping[str, Any]) -> str:
    """What the QA baselines are, or why they are absent (a corpus of passages)."""
    if "truth_ratio" not in _present(results, "auroc", EVERY_METRIC):
        return (
            "TOFU's Truth Ratio and Forget Quality and MUSE's KnowMem (`waterdrum_hf.baselines`) "
            "read answers to questions, which this corpus of passages does not have; they are "
            "not measured here (`--dataset-name toy-qa` measures them)."
        )
    return (
        "On questions: TOFU's Truth Ratio per question as max(0, 1 - R), R the likelihood of "
        "wrong answers over a paraphrase of the right one (TOFU's aggregate for what a model "
        "should know: higher means more of the data, as every value here), and MUSE's "
        "KnowMem (ROUGE-L F1 of the greedy answer in MUSE's prompt against the correct "
        "answer)."
    )


META_MEASURES = {
    "faithfulness": "faithfulness (AUROC)",
    "relearning": "relearning R",
    "quantization": "quantization Q",
    "robustness": "robustness (harmonic mean)",
}
"""The meta-evaluation table's columns."""


def _meta_evaluation(results: Mapping[str, Any], cells: Mapping[str, Any]) -> list[str]:
    """Each metric's faithfulness and robustness (OpenUnlearning's protocol), a row each."""
    meta = results.get("meta_evaluation")
    if not meta:
        return []
    relearning = meta["relearning"]
    rows = _rows(
        ["metric", *META_MEASURES.values()],
        {
            LABELS[metric]: [m[k] for k in META_MEASURES]
            for metric, m in cells["meta_evaluation"].items()
        },
    )
    return [
        "## The metrics' own meta-evaluation",
        "",
        "OpenUnlearning's protocol, on the models above (the watermarked data). Faithfulness: "
        "the AUROC with which a metric's forget value ranks the models trained on at least "
        f"{meta['holding_share']:.0%} of the forget set above the models retrained without "
        "it, over the settings of a seed. Robustness to relearning: R = min(dR / dU, 1), how much "
        "the forget value of the retrained model (dR) and of each unlearned model (dU) rise "
        f"when fine-tuned on the first {relearning['share']:.0%} of the forget set "
        f"({relearning['steps']} steps at lr {relearning['learning_rate']:g}); 1 where it "
        "does not rise. Robustness to quantization: Q = min(before / after, 1) on each "
        f"unlearned model quantized to {meta['quantization_bits']} bits. Robustness: their "
        "harmonic mean. Unlearned by "
        + ", ".join(meta["methods"])
        + "; values over [-1, 1] (WaterDrum, the MIAs) mapped to [0, 1] first. "
        + _cell_words(results).capitalize()
        + ".",
        "",
        *rows,
        "",
        "![faithfulness against robustness](meta_evaluation.png)",
    ]


def _cell_words(results: Mapping[str, Any]) -> str:
    """How a cell of the every-baseline tables reads."""
    seeds = len(results["config"]["seeds"])
    if seeds > 1:
        return f"each cell the mean [95 % t interval] over {seeds} seeds"
    return "each cell one seed's value"


def _metric_rows(cells: Mapping[str, Any], name: str, metrics: tuple[str, ...]) -> list[str]:
    """A row per metric, a column per setting: the ``name`` measure over seeds."""
    settings = list(cells["summaries"])
    return _rows(
        ["metric", *(s.replace("_", " ") for s in settings)],
        {LABELS[m]: [_cell(cells, setting, name, m) for setting in settings] for m in metrics},
    )


def _rows(header: list[str], rows: Mapping[str, list[str]]) -> list[str]:
    """A Markdown table: ``header``, then a row per name, its cells after it."""
    return [
        *table_head(header),
        *(f"| {name} | " + " | ".join(row) + " |" for name, row in rows.items()),
    ]


def _cell(cells: Mapping[str, Any], setting: str, name: str, metric: str) -> str:
    """A setting's ``name`` measure of ``metric`` over seeds; "undefined" where not measured."""
    return cells["summaries"][setting].get(name, {}).get(metric, "undefined")


def _plotted(title: str, tables: list[str], plot: str) -> list[str]:
    """A section of tables and their plot: the benchmark's methods (forget and retain values)
    and the resilience experiments (decoy and dilution)."""
    return [f"## {title}", "", *tables, "", plot]


def _table(
    results: Mapping[str, Any],
    cells: Mapping[str, Any],
    name: str,
    metrics: tuple[str, ...],
) -> list[str]:
    settings = list(results["settings"])
    seeds = len(results["config"]["seeds"])
    ours = "ours" if seeds > 1 else "ours, one seed"
    header = ["setting", *(f"{LABELS[m]} ({ours})" for m in metrics)]
    paper = paper_numbers(results["config"])[name]
    paper_metrics = [m for m in metrics if any(m in paper.get(s, {}) for s in settings)]
    header += [f"{LABELS[m]} (paper)" for m in paper_metrics]
    return _rows(
        header,
        {
            setting.replace("_", " "): [
                *(_cell(cells, setting, name, metric) for metric in metrics),
                *(paper.get(setting, {}).get(m, "–") for m in paper_metrics),
            ]
            for setting in settings
        },
    )


def _duplicate_table(
    watermarked: Mapping[str, Mapping[str, float]],
    unwatermarked: Mapping[str, Mapping[str, float]],
) -> list[str]:
    rows = [
        f"| {setting.replace('_', ' ')} | {data} | {v['forget_text']:.3f} | "
        f"{v['other_owner']:.3f} |"
        for data, similarity in (("watermarked", watermarked), ("unwatermarked", unwatermarked))
        for setting, v in similarity.items()
        if v
    ]
    if not rows:
        return []
    return [
        "ROUGE-L recall of each duplicate against the forget text it duplicates and against a "
        "retain owner's text, in the data each model was fine-tuned on (the paper's, in the "
        "unwatermarked data of its main tables: exact duplicates 1.00 against their forget "
        "text, literal copies; semantic duplicates 0.69, GPT-4's paraphrases):",
        "",
        "| setting | data | against its forget text | against another owner's text |",
        "| --- | --- | --- | --- |",
        *rows,
    ]


def _benchmark_table(benchmark: Mapping[str, Mapping[str, Any]]) -> list[str]:
    rows = [
        "| setting | model | forget | retain | forget p-value |",
        "| --- | --- | --- | --- | --- |",
    ]
    for setting, models in benchmark.items():
        for name, m in typed(models).items():
            forget, retain = (s.value if s else math.nan for s in (m.forget, m.retain))
            p = f"{m.forget.p_value:.3f}" if m.forget and m.forget.p_value is not None else "–"
            rows.append(f"| {setting} | {name} | {forget:+.3f} | {retain:+.3f} | {p} |")
    return rows


def _benchmark_over_seeds(runs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Each setting's methods over every seed's training run: means with Student's t interval
    over the runs and the method closest to retraining, or the methods that tie (nothing with
    a single seed, whose first-seed table above says all there is)."""
    from waterdrum_hf.report.text import runs_cell, value_cell
    from waterdrum_hf.report.verdict import closest_line
    from waterdrum_hf.scoring.seed_comparison import compare_seeds

    if not runs or max(len(r) for models in runs.values() for r in models.values()) < 2:
        return []
    lines = ["## The benchmark over every seed", ""]
    for setting, models in runs.items():
        comparison = compare_seeds(models)
        lines += [
            f"{setting.replace('_', ' ')}:",
            "",
            "| model | forget (95% CI over runs) | retain (95% CI over runs) | runs |",
            "| --- | --- | --- | --- |",
        ]
        for name, sets in comparison.values.items():
            cells = [value_cell(sets[s], "+.3f") for s in ("forget", "retain")]
            lines.append(f"| {name} | {' | '.join(cells)} | {runs_cell(sets)} |")
        if comparison.closest is not None:
            lines += ["", closest_line(comparison)]
        lines.append("")
    return lines


def _forget_quality(results: Mapping[str, Any], cells: Mapping[str, Any]) -> list[str]:
    """TOFU's Forget Quality of the original and each unlearned model, a row each, a column
    per setting (QA runs with the baselines on the unlearned models)."""
    quality = results.get("forget_quality")
    if not quality:
        return []
    settings = list(quality)
    rows = _rows(
        ["model", *(s.replace("_", " ") for s in settings)],
        {m: [cells["forget_quality"][s][m] for s in settings] for m in quality[settings[0]]},
    )
    return [
        "## Forget Quality",
        "",
        "TOFU's Forget Quality (open-unlearning's default for TOFU) of each model of the benchmark: "
        "the p-value of a two-sample KS test between its Truth Ratios R on the forget questions "
        "and those of the model retrained without them (the same training run; 1 for that "
        "model itself). High: its Truth Ratios are distributed as retraining's. It reads the "
        "forget set only: a method that also destroys the retain set can score as high. "
        f"{_cell_words(results).capitalize()}, cut to [0, 1].",
        "",
        *rows,
    ]


def _resilience_tables(resilience: Mapping[str, Any]) -> list[str]:
    decoy, dilution = resilience["decoy"], resilience["dilution"]
    lines = [
        "(a) A decoy model answers the queries whose original output is most similar to the forget "
        "set (bag-of-words cosine, the model owner's stand-in for STS) with unwatermarked text (the "
        "base model's). Aggregate forget value, scaled to 1 with nothing intercepted; the ideal "
        "metric follows the diagonal 1 - share (the paper: about 70 % interception to reach 0.2):",
        "",
        "| intercepted | " + " | ".join(f"{s:.0%}" for s in decoy["intercepted"]) + " |",
        "|" + " --- |" * (len(decoy["intercepted"]) + 1),
        "| scaled forget value | " + " | ".join(f"{v:.2f}" for v in decoy["scaled"]) + " |",
        "",
        f"(b) The model owner samples through its own Waterfall watermark (another key, kappa "
        f"{dilution['kappa']:g}):",
        "",
        "| watermark of the model owner | AUROC (ours) | R² (ours) | AUROC (paper) | R² (paper) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, label in (("none", "none"), ("waterfall", "adapted Waterfall")):
        auroc, r2 = dilution["auroc"][name], dilution["r2"][name]
        paper = PAPER["dilution"][name]
        lines.append(f"| {label} | {auroc:.3f} | {number(r2)} | {paper[0]} | {paper[1]} |")
    return lines


def _checks(results: Mapping[str, Any], cells: Mapping[str, Any]) -> list[str]:
    """The expected outcome (WaterDrum's AUROC and R² above 0.9), each claim read from its
    interval over the seeds."""
    lines = []
    for setting, summary in results["settings"].items():
        claims = cells["claims"][setting]
        rouge = f"ROUGE-L AUROC {summary['auroc']['rouge_l']:.3f}"
        if "rouge_l_unwatermarked" in summary["auroc"]:
            rouge += f" ({summary['auroc']['rouge_l_unwatermarked']:.3f} on the unwatermarked data)"
        lines.append(f"- {setting}: {'; '.join(claims)}; {rouge}.")
    lines += _carry_over(results)
    decoy = results["resilience"]["decoy"]
    gap = max(abs(s - (1 - i)) for i, s in zip(decoy["intercepted"], decoy["scaled"], strict=True))
    lines.append(
        f"- Decoy curve ({cells['first_of']}): largest distance from the diagonal {gap:.2f} "
        "(scaled units)."
    )
    return lines


def _carry_over(results: Mapping[str, Any]) -> list[str]:
    """Where R² is not above 0.9: the first k between 0 and 100 % at which the untrained
    forget queries have a value, against the same queries at k = 0."""
    lines = []
    for setting, summary in results["settings"].items():
        if summary["r2"]["waterdrum"] > 0.9:
            continue
        curve = results["curves"][setting]
        split = curve["waterdrum_split"]
        for share, now, before in zip(
            curve["share"], split["untrained"], split["untrained_at_k0"], strict=True
        ):
            if 0 < share < 1 and math.isfinite(now) and math.isfinite(before):
                lines.append(
                    f"- {setting}: R² not above 0.9. At k = {share:.0%} the forget queries not trained "
                    f"on read {now:+.3f}; the same queries read {before:+.3f} at k = 0."
                )
                break
    return lines


def _data(config: Mapping[str, Any]) -> str:
    if config["dataset_name"] in BUILT_IN:
        how = (
            "paraphrasing with"
            if config["watermarking"] == "paraphrase"
            else "token substitutions chosen by"
        )
        scheme = config.get("scheme", "waterfall")  # results from before schemes: Waterfall
        strength = (
            f"Waterfall, kappa {config['kappa']:g}"
            if scheme == "waterfall"
            else f"adapted KGW, delta {config['delta']:g}"
        )
        if config["dataset_name"] == "toy-qa":
            return (
                f"the built-in QA corpus, {config['owners']} fictitious authors x "
                f"{config['passages_per_owner']} questions, the last {config['forget']} "
                f"forgotten, {config['holdout_per_owner']} questions about each of "
                f"{config['forget']} held-out authors, answers watermarked ({strength}) by "
                f"{how} the built-in small model"
            )
        return (
            f"the built-in corpus, {config['owners']} owners x {config['passages_per_owner']} "
            f"passages, the last {config['forget']} forgotten, {config['holdout_per_owner']} held-out "
            f"passages per forget owner, watermarked ({strength}) by {how} the "
            "built-in small model"
        )
    return f"{config['dataset_name']} ({config['dataset_config']})"


def _protocol(config: Mapping[str, Any]) -> tuple[str, str, str]:
    """The paper's dataset, the queries and ROUGE-L's reference: of questions (WaterDrum-TOFU)
    or of passages (WaterDrum-Ax)."""
    if config["dataset_name"] in QA_DATASETS:
        return "WaterDrum-TOFU", "each question in the model's chat format", "the answer"
    queries = f"the first {config['prefix_tokens']} tokens of each text (at most half)"
    return "WaterDrum-Ax", queries, "the text's next tokens"
