"""The paper reproduction: its statistics against hand computations, its watermarking stand-in,
and `waterdrum reproduce --quick` end to end (every experiment, results files, resumable)."""

from __future__ import annotations

import dataclasses
import json
import math
import shlex
import time

import numpy as np
import pytest
from matplotlib.colors import to_hex

from waterdrum_hf.experiments.reproduction import ReproductionConfig
from waterdrum_hf.experiments.reproduction import results as results_module
from waterdrum_hf.experiments.reproduction.experiment import (
    bag_of_words_cosine,
    calibration_curves,
    d1,
    d2,
    decoy_curve,
    mia_summary,
    summarise,
)
from waterdrum_hf.experiments.reproduction.meta_evaluation import META_METRICS
from waterdrum_hf.experiments.reproduction.results_markdown import markdown
from waterdrum_hf.statistics import calibration_r2, separability_auroc


def fake_model(share: float, rng: np.random.Generator) -> dict:
    """A measured model whose forget values grow with the share trained on."""
    forget = np.arange(20) < 8
    waterdrum = np.where(forget, 0.8 * share, 0.7) + rng.normal(0, 0.05, 20)
    rouge = np.where(forget, 0.5 + 0.2 * share, 0.9) + rng.normal(0, 0.02, 20)
    return {
        "share": share,
        "is_forget": forget,
        "waterdrum": waterdrum,
        "waterdrum_null_corrected": waterdrum - 0.01,
        "rouge_l": rouge,
        "mia": 0.9 * share - 0.1,
        "kept": round(share * 8),
    }


@pytest.fixture
def per_seed():
    rng = np.random.default_rng(0)
    return {seed: {f: fake_model(f, rng) for f in (0.0, 0.5, 1.0)} for seed in (0, 1)}


def test_statistics_equal_a_hand_computation(per_seed):
    calibration = per_seed[0]
    model = calibration[0.0]
    forget = model["is_forget"]
    assert d1(model, "waterdrum") == pytest.approx(
        separability_auroc(model["waterdrum"][~forget], model["waterdrum"][forget])
    )
    shares = [0.0, 0.5, 1.0]
    values = [calibration[s]["rouge_l"][forget].mean() for s in shares]
    fits = d2(calibration, "rouge_l")
    assert fits["r2"] == pytest.approx(calibration_r2(shares, values).r2)
    assert fits["r2_offset"] == pytest.approx(
        calibration_r2(shares, np.array(values) - values[0]).r2
    )
    mia = [calibration[s]["mia"] for s in shares]
    assert d2(calibration, "mia")["r2"] == pytest.approx(calibration_r2(shares, mia).r2)
    summary = summarise(per_seed)
    per_seed_r2 = [d2(c, "waterdrum")["r2"] for c in per_seed.values()]
    assert summary["r2"]["waterdrum"] == pytest.approx(np.mean(per_seed_r2))
    assert summary["r2_std"]["waterdrum"] == pytest.approx(np.std(per_seed_r2))
    assert summary["r2"]["waterdrum"] > 0.9 > summary["r2"]["rouge_l"]  # the fake mirrors the paper


def carried_over(share: float, seed: int) -> dict:
    """A measured model that reads 0.8 on the 10 forget queries it was trained on and 0.3 on
    the others once it was trained on any (0 at k = 0); one query unscored (NaN)."""
    kept = round(share * 10)
    forget = np.where(np.arange(10) < kept, 0.8, 0.3 if kept else 0.0) + 0.01 * seed
    waterdrum = np.concatenate([forget, np.full(10, 0.7)])
    waterdrum[9] = np.nan
    is_forget = np.arange(20) < 10
    return {
        "share": kept / 10,
        "kept": kept,
        "is_forget": is_forget,
        "waterdrum": waterdrum,
        "waterdrum_null_corrected": waterdrum,
        "rouge_l": waterdrum,
        "mia": share,
    }


def test_calibration_splits_trained_from_untrained_forget_queries():
    fractions = [0.0, 0.2, 1.0]
    per_seed = {seed: {f: carried_over(f, seed) for f in fractions} for seed in (0, 1)}
    split = calibration_curves(per_seed, fractions)["waterdrum_split"]
    assert split["trained"][1:] == pytest.approx([0.805, 0.805])  # seeds add 0 and 0.01
    assert split["untrained"][:2] == pytest.approx([0.005, 0.305])  # the NaN query left out
    assert split["untrained_at_k0"][:2] == pytest.approx([0.005, 0.005])  # the same queries
    assert math.isnan(split["trained"][0]) and math.isnan(split["untrained"][2])  # an empty side


def test_a_measure_defined_on_some_seeds_says_on_how_many():
    """An R² of values that do not vary is undefined on that seed: the cell is the mean over
    the seeds that gave one, named as such, never an interval of zero width."""
    from waterdrum_hf.experiments.reproduction.markdown_parts import summary_cell

    fractions = [0.0, 0.2, 1.0]
    per_seed = {seed: {f: carried_over(f, seed) for f in fractions} for seed in (0, 1, 2)}
    for seed in (1, 2):
        for model in per_seed[seed].values():
            model["mia"] = 0.5  # every model alike on this seed
    summary = summarise(per_seed)
    assert summary["r2_seeds"]["mia"] == 1 and summary["r2_seeds"]["waterdrum"] == 3
    assert summary["r2"]["mia"] == pytest.approx(d2(per_seed[0], "mia")["r2"])
    assert summary_cell(summary, "r2", "mia", 3) == f"{summary['r2']['mia']:.3f} (1 of 3 seeds)"
    both = summary_cell(summary, "r2", "waterdrum", 3)
    assert "seeds)" not in both and both.count("[") == 1
    for model in per_seed[0].values():
        model["mia"] = 0.5
    assert summary_cell(summarise(per_seed), "r2", "mia", 3) == "undefined"


def test_forget_quality_tests_each_models_forget_truth_ratios_against_retrainings():
    """The KS p-value of scipy on the forget questions' R of the model and of the retrained
    model of the same run (retain questions left out); no Truth Ratio read, no value."""
    from scipy.stats import ks_2samp

    from waterdrum_hf.experiments.reproduction.analysis import forget_quality_runs

    rng = np.random.default_rng(0)
    is_forget = np.arange(30) < 20

    def model(shift: float) -> dict:
        ratios = np.exp(rng.normal(shift, 0.3, 30))
        ratios[~is_forget] = 0.01  # retain questions: would dominate any test that read them
        return {"is_forget": is_forget, "truth_ratio_r": ratios}

    calibration = {0.0: model(0.0), 0.5: model(-0.5), 1.0: model(-1.0)}
    unlearned = {"kl": {"stage": "s", **model(-0.1)}, "npo": {"stage": "s", **model(-1.0)}}
    quality = forget_quality_runs(calibration, unlearned)
    reference = calibration[0.0]["truth_ratio_r"][:20]
    for name, measured in (("original", calibration[1.0]), *unlearned.items()):
        expected = ks_2samp(measured["truth_ratio_r"][:20], reference).pvalue
        assert quality[name] == pytest.approx(expected), name
    assert list(quality) == ["original", "kl", "npo"]
    assert quality["kl"] > 0.05 > quality["original"]  # near retraining, far from it
    del unlearned["npo"]["truth_ratio_r"]  # measured without the baselines
    assert forget_quality_runs(calibration, unlearned) == {}


def test_forget_quality_table_gives_each_model_over_seeds():
    results = {
        **rendered_results(seeds=(0, 1)),
        "forget_quality": {"exact_duplicate": {"original": [0.01, 0.03], "kl": [0.9, 1.0]}},
    }
    text = markdown(results, command="waterdrum reproduce")
    assert "## Forget Quality" in text
    assert "| original | 0.020 [0.000, 0.147] |" in text  # t(1) interval, cut at 0
    assert "| kl | 0.950 [0.315, 1.000] |" in text
    assert "## Forget Quality" not in markdown(rendered_results(seeds=(0, 1)), command="c")


def rendered_results(seeds: tuple[int, ...]) -> dict:
    """What ``markdown`` renders, from hand-made models (the bent curve of ``carried_over``)."""
    fractions = [0.0, 0.2, 1.0]
    per_seed = {seed: {f: carried_over(f, seed) for f in fractions} for seed in seeds}
    config = ReproductionConfig.quick(
        fractions=tuple(fractions), settings=("no_duplicate",), seeds=seeds
    )
    return {
        "settings": {"no_duplicate": summarise(per_seed)},
        "curves": {"no_duplicate": calibration_curves(per_seed, fractions)},
        "mia": {"no_duplicate": mia_summary(per_seed)},
        "benchmark": {},
        "resilience": {
            "decoy": decoy_curve(np.array([0.8, 0.4]), np.zeros(2), np.array([1.0, 0.0]), steps=2),
            "dilution": {
                "kappa": 2.0,
                "auroc": {"none": 1.0, "waterfall": 0.9},
                "r2": {"none": 0.9, "waterfall": 0.8},
            },
        },
        "duplicate_similarity": {},
        "config": dataclasses.asdict(config),
        "seconds": {"total": 60.0},
        "stages": {"built": 2, "reused": 5, "reused_build_seconds": 540.0},
    }


def test_results_markdown_states_carry_over_and_a_resumed_runs_cost():
    results = rendered_results(seeds=(0, 1))
    assert results["settings"]["no_duplicate"]["r2"]["waterdrum"] < 0.9  # the bent curve
    text = markdown(results, command="waterdrum reproduce")
    assert (
        "- no_duplicate: R² not above 0.9. At k = 20% the forget queries not trained on read +0.305; the same queries read +0.005 at k = 0."
        in text
    )
    assert "1.0 minutes in this run, which reused 5 stages" in text and "about 10 minutes" in text
    assert "| no duplicate | not trained on, at k = 0 | +0.005 | +0.005 | – |" in text
    results["stages"] = {"built": 7, "reused": 0, "reused_build_seconds": 0.0}
    assert "Time: 1.0 minutes." in markdown(results, command="waterdrum reproduce")


def test_results_markdown_says_one_seed_instead_of_a_zero_spread():
    one = markdown(rendered_results(seeds=(0,)), command="waterdrum reproduce")
    ours = one.replace("0.983 ± 0.000", "").replace("0.979 ± 0.000", "")  # the paper's spreads
    assert "One seed: no spread over seeds to report." in one and "± 0.000" not in ours
    assert "| setting | WaterDrum (ours, one seed) |" in one
    (mia,) = [line for line in one.splitlines() if line.startswith("| no_duplicate |")]
    assert "±" not in mia
    two = markdown(rendered_results(seeds=(0, 1)), command="waterdrum reproduce")
    assert "2 seeds; each of our values is the mean over the seeds [its 95 %" in two
    assert "One seed" not in two
    assert "| setting | WaterDrum (ours) |" in two


def test_roc_plot_keeps_waterdrum_in_sight_under_a_perfect_rouge_l(tmp_path, monkeypatch):
    """Both metrics perfect: the two ROC curves coincide; WaterDrum is a wide line underneath,
    ROUGE-L a thin dashed one on top, each in its colour of the calibration plot."""
    saved = []
    monkeypatch.setattr(results_module, "save_figure", lambda fig, path: saved.append(fig) or path)
    perfect = [0.1, 0.2, 0.8, 0.9]
    roc = {"no_duplicate": {"is_forget": [True, True, False, False]}}
    roc["no_duplicate"] |= {"waterdrum": perfect, "rouge_l": perfect}
    results_module.plot_separability(roc, tmp_path / "roc.png")
    (ax,) = saved[0].axes
    lines = {line.get_label(): line for line in ax.get_lines()}
    waterdrum, rouge = lines["WaterDrum"], lines["ROUGE-L"]
    assert list(waterdrum.get_xdata()) == list(rouge.get_xdata())  # the same curve
    assert rouge.get_zorder() > waterdrum.get_zorder()
    assert waterdrum.get_linewidth() > 2 * rouge.get_linewidth()
    assert waterdrum.get_linestyle() == "-" and rouge.get_linestyle() == "--"
    assert "dashed" in ax.get_legend().get_title().get_text()
    for metric, line in (("waterdrum", waterdrum), ("rouge_l", rouge)):
        assert to_hex(line.get_color()) == to_hex(results_module.METRIC_COLORS[metric])


def test_duplicate_similarity_compares_each_duplicate_with_its_forget_text():
    from waterdrum_hf.experiments.reproduction.data import SettingData
    from waterdrum_hf.experiments.reproduction.experiment import duplicate_similarity

    forget = ["the cat sat on the mat", "a dog ran in the park"]
    retain = [
        "rain fell all day long",
        "birds sing at dawn",
        "the cat sat on a mat",
        "a dog ran in the park",
    ]
    data = SettingData(
        "exact_duplicate", forget, [1, 1], retain, [2, 3, 2, 2], [], [], [], duplicates=2
    )
    assert data.duplicate_pairs() == (retain[2:], forget, retain[:2])
    similarity = duplicate_similarity(data)
    assert similarity["forget_text"] == pytest.approx(
        (5 / 6 + 1) / 2
    )  # ROUGE-L recall: LCS / length
    assert similarity["other_owner"] == 0.0
    assert (
        duplicate_similarity(
            SettingData("no_duplicate", forget, [1, 1], retain[:2], [2, 3], [], [], [])
        )
        == {}
    )


def test_decoy_curve_replaces_the_most_similar_queries_first():
    values = np.array([0.8, 0.6, 0.4, 0.2])
    replacement = np.zeros(4)
    similarity = np.array([0.1, 0.9, 0.5, 0.3])  # query 1 is intercepted first, then 2, 3, 0
    curve = decoy_curve(values, replacement, similarity, steps=4)
    assert curve["intercepted"] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert curve["forget_value"] == pytest.approx([0.5, 0.35, 0.25, 0.2, 0.0])
    assert curve["scaled"] == pytest.approx([1.0, 0.7, 0.5, 0.4, 0.0])


def test_bag_of_words_cosine():
    assert bag_of_words_cosine("The cat sat", "the CAT sat") == pytest.approx(1.0)
    assert bag_of_words_cosine("a b", "c d") == 0.0
    assert bag_of_words_cosine("a a b", "a b") == pytest.approx(3 / math.sqrt(10))


@pytest.mark.parametrize(
    ("settings", "match"),
    [
        ({"settings": ("no_duplicate", "near_duplicate")}, "`settings`"),
        ({"fractions": (0.0, 1.0)}, "`fractions`"),
        ({"fractions": (0.5, 0.0, 1.0)}, "`fractions`"),
        ({"seeds": (1, 1)}, "`seeds`"),
        ({"dataset_name": "waterdrum-ax"}, "watermark_tokenizer"),
        ({"methods": ("kl", "forgetall")}, "unknown unlearning method"),
        ({"forget": 5}, "`forget`"),
        ({"watermarking": "magic"}, "`watermarking`"),
        (
            {
                "dataset_name": "waterdrum-ax",
                "watermark_tokenizer": "t",
                "watermarking": "substitution",
            },
            "come watermarked",
        ),
        ({"max_rows_per_owner": 0}, "`max_rows_per_owner`"),
        ({"scheme": "kirchenbauer"}, "a scheme must be one of waterfall, kgw, synthid"),
        ({"scheme": "synthid", "watermarking": "substitution"}, "with the synthid scheme"),
        ({"schemes": ("waterfall", "exp-edit")}, "got 'exp-edit'"),
        ({"schemes": ("kgw",)}, "at least two distinct schemes"),
        ({"schemes": ("kgw", "kgw")}, "at least two distinct schemes"),
        ({"scheme": "kgw", "watermarking": "substitution"}, "Waterfall's watermark only"),
        (
            {"dataset_name": "waterdrum-ax", "watermark_tokenizer": "t", "scheme": "kgw"},
            "watermarked with Waterfall",
        ),
        ({"delta": 0.0}, "`delta` must be > 0"),
    ],
)
def test_config_rejects_impossible_settings(settings, match):
    with pytest.raises(ValueError, match=match):
        ReproductionConfig(**settings)


def test_substitution_watermark_verifies_and_stays_close_to_the_source(tiny_model):
    from waterdrum_hf import verify_texts
    from waterdrum_hf.baselines import rouge_l_recall
    from waterdrum_hf.data import toy_corpus
    from waterdrum_hf.experiments.reproduction.substitution import substitution_watermark

    model, tokenizer = tiny_model
    texts = list(toy_corpus(3, max_passages_per_owner=2)["text"])
    marked = substitution_watermark(model, tokenizer, texts, [7] * 6, kappa=4.0, copy_bias=8.0)
    assert verify_texts(marked, 7, tokenizer).mean() > 0.15
    assert abs(verify_texts(marked, 8, tokenizer).mean()) < 0.1
    assert abs(verify_texts(texts, 7, tokenizer).mean()) < 0.1
    assert rouge_l_recall(marked, texts).mean() > 0.6  # few tokens changed


@pytest.mark.end_to_end
def test_quick_reproduction_runs_every_experiment_and_resumes(tiny_model, tmp_path, capsys):
    from waterdrum_hf.scripts import main

    out = tmp_path / "reproduction"
    argv = ["reproduce", "--quick", "--output-dir", str(out), "--show-progress", "false"]
    argv += ["--num-samples", "1", "--null-keys", "20"]  # smaller
    start = time.perf_counter()
    assert main(argv) == 0
    first = time.perf_counter() - start
    results = json.loads((out / "results.json").read_text())
    quick = ReproductionConfig.quick()
    assert set(results["settings"]) == {"no_duplicate", "exact_duplicate", "semantic_duplicate"}
    for summary in results["settings"].values():
        measures = ("auroc", "r2", "r2_offset")
        assert set(summary) == {f"{m}{part}" for m in measures for part in ("", "_std", "_seeds")}
        assert set(summary["r2_seeds"].values()) <= {0, 1}  # on how many seeds: one here
        mias = {"mia", "mia_loss", "mia_zlib", "mia_min_k_plus_plus"}
        baselines = {"rouge_l", "extraction", *mias}  # on the watermarked data and on its twin
        baselines |= {f"{b}_unwatermarked" for b in baselines}
        assert set(summary["r2"]) == {"waterdrum", "waterdrum_null_corrected", *baselines}
        set_level = mias | {f"{m}_unwatermarked" for m in mias}
        assert set(summary["auroc"]) == set(summary["r2"]) - set_level
    # The retrained model separates retain from forget queries without a duplicate.
    assert results["settings"]["no_duplicate"]["auroc"]["waterdrum"] > 0.9
    for models in results["benchmark"].values():
        assert list(models) == ["original", "retrained", *quick.methods]
        assert models["retrained"]["forget"] < models["original"]["forget"]
    for setting, runs in results["benchmark_runs"].items():  # every seed's run; the first above
        assert all(len(model_runs) == len(quick.seeds) for model_runs in runs.values())
        assert {m: r[0] for m, r in runs.items()} == results["benchmark"][setting]
    decoy = results["resilience"]["decoy"]
    assert decoy["scaled"][0] == pytest.approx(1.0) and decoy["intercepted"][-1] == 1.0
    assert decoy["scaled"][-1] < decoy["scaled"][0]
    assert set(results["resilience"]["dilution"]["auroc"]) == {"none", "waterfall"}
    assert set(results["mia"]) == set(results["settings"])
    assert "forget_quality" not in results  # passages have no Truth Ratio
    meta = results["meta_evaluation"]  # every metric, each measure on [0, 1]
    on_passages = [m for m in META_METRICS if m not in ("truth_ratio", "knowmem")]  # QA only
    assert list(meta["metrics"]) == on_passages and meta["methods"] == list(quick.methods)
    for metric, measures in meta["metrics"].items():
        assert set(measures) == {"faithfulness", "relearning", "quantization", "robustness"}
        assert all(0 <= m["mean"] <= 1 and len(m["per_seed"]) == 1 for m in measures.values()), (
            metric
        )
    for curve in results["curves"].values():
        assert set(curve["waterdrum_split"]) == {"trained", "untrained", "untrained_at_k0"}
    assert set(results["duplicate_similarity"]) == {"exact_duplicate", "semantic_duplicate"}
    twin = results["duplicate_similarity_unwatermarked"]  # exact duplicates: literal copies
    assert set(twin) == {"exact_duplicate", "semantic_duplicate"}
    assert twin["exact_duplicate"]["forget_text"] == 1.0
    assert twin["semantic_duplicate"]["forget_text"] < 1.0
    markdown = (out / "results.md").read_text()
    assert (
        "0.957 ± 0.008" in markdown
        and "## Calibration (D2)" in markdown
        and "| trained on |" in markdown
        and "## Every baseline on the same models" in markdown
        and "| MIA (Min-k%++), unwatermarked data |" in markdown
        and f"waterdrum reproduce --quick --output-dir {out} --num-samples 1 --null-keys 20"
        in markdown
    )
    for plot in ("calibration", "roc", "benchmark", "resilience", "meta_evaluation"):
        assert (out / f"{plot}.png").stat().st_size > 10_000
    # Every model and generation is cached: a second run recomputes nothing.
    start = time.perf_counter()
    assert main(argv) == 0
    assert time.perf_counter() - start < first / 3
    again = json.loads((out / "results.json").read_text())
    assert again["settings"] == results["settings"]
    assert results["stages"]["built"] > 0 == results["stages"]["reused"]  # a run from scratch
    assert (again["stages"]["built"], again["stages"]["reused"]) == (0, results["stages"]["built"])
    assert again["stages"]["reused_build_seconds"] > first / 2  # the reused stages' cost is kept
    assert "stages from the cache that took" in (out / "results.md").read_text()


def test_published_datasets_become_the_papers_settings(tiny_model, tmp_path):
    from hub_mirrors import write_ax_mirror, write_tofu_mirror

    from waterdrum_hf.experiments.reproduction.data import ax_settings, tofu_settings
    from waterdrum_hf.generation.prompting import completion_queries, qa_queries

    _, tokenizer = tiny_model
    ax = ReproductionConfig(
        dataset_name="waterdrum-ax",
        dataset_path=write_ax_mirror(tmp_path / "ax"),
        watermark_tokenizer="x",
        prefix_tokens=3,
        rouge_new_tokens=4,
    )
    no_dup, exact, semantic = ax_settings(ax, tokenizer)
    assert ax.dataset_config == "forget_01" and set(exact.forget_keys) == {19}
    assert exact.retain_keys == no_dup.retain_keys + [0, 0]  # duplicates of owner 19 owned by 0
    assert [t.split(" owner=")[1] for t in exact.holdout] == ["19", "19"]  # test rows of owner 19
    first = tokenizer(exact.forget[0], add_special_tokens=False)["input_ids"]
    assert exact.queries[0] == tokenizer.decode(first[:3]) and exact.references[
        0
    ] == tokenizer.decode(first[3:7])
    assert len(exact.queries) == len(exact.forget) + len(exact.retain) == len(exact.references)
    # The demo's queries (waterdrum demo) by the same rule: one prefix function for both.
    assert exact.queries == completion_queries(
        exact.forget + exact.retain, tokenizer, 3, max_fraction=0.5
    )

    tofu = ReproductionConfig(
        dataset_name="waterdrum-tofu",
        dataset_path=write_tofu_mirror(tmp_path / "tofu"),
        watermark_tokenizer="x",
        max_rows_per_owner=3,
        settings=("no_duplicate", "exact_duplicate"),
    )
    plain, duplicated = tofu_settings(tofu, tokenizer)
    assert tofu.dataset_config == "forget_10" and plain.holdout == []  # no held-out set: no MIA
    assert plain.forget_keys == [1, 1, 1] and duplicated.retain_keys == [0] * 6
    assert plain.queries[:3] == qa_queries(["q0 owner=1", "q1 owner=1", "q2 owner=1"], tokenizer)
    assert plain.references[:3] == ["a0", "a1", "a2"]
    assert plain.forget[0] == plain.queries[0] + "a0"


@pytest.mark.end_to_end
def test_a_published_qa_dataset_runs_end_to_end(tiny_model, tmp_path):
    """WaterDrum-TOFU's layout (a local mirror), the small model as the base: every experiment
    runs, MIA is reported as undefined (no held-out set)."""
    from hub_mirrors import write_tofu_mirror

    from waterdrum_hf import tiny
    from waterdrum_hf.experiments.reproduction import run_reproduction

    config = ReproductionConfig.quick(
        dataset_name="waterdrum-tofu",
        dataset_path=write_tofu_mirror(tmp_path / "tofu"),
        watermark_tokenizer=str(tiny.cache_path()),
        max_rows_per_owner=4,
        epochs=2,
        settings=("no_duplicate", "exact_duplicate"),
        methods=("kl",),
        null_keys=10,
        output_dir=str(tmp_path / "out"),
    )
    results = run_reproduction(config, log=lambda line: None)
    assert set(results["settings"]) == {"no_duplicate", "exact_duplicate"}
    assert math.isnan(results["mia"]["no_duplicate"]["original"])
    assert (
        json.loads((tmp_path / "out" / "results.json").read_text())["mia"]["no_duplicate"][
            "original"
        ]
        is None
    )
    assert "| no_duplicate | original |" in (tmp_path / "out" / "results.md").read_text()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], {"watermarking": "paraphrase", "seeds": (0, 1, 2)}),
        (
            ["--watermarking", "substitution", "--seeds", "0", "1"],
            {"watermarking": "substitution", "seeds": (0, 1)},
        ),
        (
            ["--quick", "--fractions", "0", "0.5", "1"],
            {"seeds": (0,), "fractions": (0.0, 0.5, 1.0)},
        ),
        (["--scheme", "kgw", "--delta", "3"], {"scheme": "kgw", "delta": 3.0, "schemes": ()}),
        (
            ["--schemes", "waterfall", "kgw"],
            {**ReproductionConfig.COMPARISON, "schemes": ("waterfall", "kgw"), "owners": 5},
        ),
        (
            ["--schemes", "waterfall", "kgw", "--quick", "--seeds", "0", "1"],
            {"settings": ("no_duplicate",), "fractions": (0.0, 0.5, 1.0), "seeds": (0, 1)},
        ),
        (
            ["--config", "{tmp}/schemes.yaml", "--quick"],  # --schemes from the file
            {"settings": ("no_duplicate",), "fractions": (0.0, 0.5, 1.0), "owners": 3},
        ),
        (
            ["--config", "{tmp}/schemes.yaml", "--settings", "no_duplicate", "exact_duplicate"],
            {"settings": ("no_duplicate", "exact_duplicate"), "seeds": (0, 1, 2), "owners": 3},
        ),
    ],
)
def test_reproduce_command_builds_the_config(monkeypatch, tmp_path, argv, expected):
    import waterdrum_hf.experiments.reproduction as reproduction
    from waterdrum_hf.scripts import main

    seen = {}

    def fake_run(config, *, log, command):  # records the config the command built
        seen["config"], seen["command"] = config, command
        return {"settings": {}, "seconds": {"total": 1.0}}

    monkeypatch.setattr(reproduction, "run_reproduction", fake_run)
    (tmp_path / "schemes.yaml").write_text("schemes: [waterfall, kgw]\nowners: 3\n")
    argv = [a.format(tmp=tmp_path) for a in argv]
    assert main(["reproduce", "--output-dir", str(tmp_path), *argv]) == 0
    config = seen["config"]
    for name, value in expected.items():
        assert getattr(config, name) == value
    # results.md names a command that builds the same config again, without the file.
    command = shlex.split(seen["command"])
    assert command[:2] == ["waterdrum", "reproduce"] and "--config" not in command
    assert main(command[1:]) == 0 and seen["config"] == config


def test_dilution_measures_every_model_under_each_processor(monkeypatch):
    from waterdrum_hf.experiments.reproduction.experiment import Reproduction
    from waterdrum_hf.experiments.reproduction.resilience import diluted_values

    rng = np.random.default_rng(0)
    calibration = {f: {**fake_model(f, rng), "stage": f"stage-{f}"} for f in (0.0, 0.5, 1.0)}
    seen = []

    def measure(self, stage, data, seed, *, dilution=None, baselines=True):
        seen.append((stage, dilution, seed, baselines))
        share = float(stage.split("-")[1])
        measured = fake_model(share, np.random.default_rng(len(dilution)))  # per processor
        del measured["share"]  # the dilution copies it from the calibration
        return measured

    monkeypatch.setattr(Reproduction, "measure", measure)
    out = diluted_values(
        Reproduction(ReproductionConfig.quick()),
        None,
        calibration,
        {"a": "processor-a", "bb": "processor-bb"},
        seed=3,
    )
    assert out["auroc"]["none"] == d1(calibration[0.0], "waterdrum")
    assert out["r2"]["none"] == d2(calibration, "waterdrum")["r2"]
    for name, processor in (("a", "processor-a"), ("bb", "processor-bb")):
        expected = {f: fake_model(f, np.random.default_rng(len(processor))) for f in calibration}
        assert out["auroc"][name] == d1(expected[0.0], "waterdrum")
        assert out["r2"][name] == d2(expected, "waterdrum")["r2"]
        assert [s for s, d, _, _ in seen if d == processor] == [f"stage-{f}" for f in calibration]
    assert {(seed, baselines) for *_, seed, baselines in seen} == {(3, False)}


def test_results_markdown_shows_the_benchmark_over_every_seed_with_the_verdict():
    """With several seeds the methods' values are means with Student's t interval over the
    runs, and the closest method is named only where the runs separate it; one seed adds
    nothing beyond the first-seed table."""
    from scipy import stats

    from waterdrum_hf import SetValue, WaterDrumResult

    def flat(forget, retain):
        return WaterDrumResult(
            forget=SetValue(forget), retain=SetValue(retain), num_queries=9, num_scored=9,
            num_skipped=0,
        ).to_dict()  # fmt: skip

    runs = {
        "original": [flat(0.70, 0.66), flat(0.74, 0.64), flat(0.72, 0.65)],
        "retrained": [flat(0.04, 0.69), flat(0.05, 0.70), flat(0.03, 0.68)],
        "kl": [flat(0.30, 0.40), flat(0.32, 0.41), flat(0.31, 0.39)],
        "npo": [flat(0.10, 0.62), flat(0.12, 0.63), flat(0.11, 0.61)],
    }
    results = {**rendered_results(seeds=(0, 1, 2)), "benchmark_runs": {"no_duplicate": runs}}
    text = markdown(results, command="waterdrum reproduce")
    low, high = stats.t.interval(0.95, 2, loc=0.31, scale=stats.sem([0.30, 0.32, 0.31]))
    assert f"| kl | +0.310 [{low:+.3f}, {high:+.3f}] |" in text
    assert "**Closest to retraining:** `npo`" in text and "over 3 runs" in text
    one = {**results, "benchmark_runs": {"no_duplicate": {m: r[:1] for m, r in runs.items()}}}
    assert "The benchmark over every seed" not in markdown(one, command="waterdrum reproduce")
