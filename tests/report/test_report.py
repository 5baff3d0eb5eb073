"""Report rendering: strict JSON, a summary that explains itself, honest plots."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_hex
from matplotlib.text import Text
from matplotlib.transforms import Bbox
from scipy import stats
from tokenizer_builders import word_texts, word_tokenizer

from waterdrum_hf import OwnerValue, WaterDrumResult, report, trainers, waterdrum_metrics
from waterdrum_hf.config import WaterDrumConfig
from waterdrum_hf.report import findings, formatting, verdict
from waterdrum_hf.scoring import SetValue
from waterdrum_hf.scoring.seed_comparison import compare_seeds


@pytest.fixture(scope="module")
def models():
    tok = word_tokenizer(512)
    owners = [11, 22, 33]
    texts = [word_texts(512, 3, 30, seed=i) for i in range(6)]

    def scored(shift):
        predictions = texts[shift:] + texts[:shift]
        return waterdrum_metrics(
            predictions,
            [owners[i % 3] for i in range(6)],
            tok,
            config=WaterDrumConfig.from_keywords(dict(null_keys=9)),
            forget_ids=[33],
            owner_names={11: "alice", 22: "bob", 33: "carol"},
            return_details=True,
        )

    results = {"original": scored(0), "retrained": scored(1), "kl": scored(2), "npo": scored(3)}
    results["npo"]["per_owner"]["carol"].pop("value")  # an owner with nothing scored
    results["npo"]["query_values"][2] = math.nan
    return results


def test_write_report_files_json_and_markdown(models, tmp_path):
    curves = {
        "kl": [{"step": 0, "forget": 0.5, "retain": 0.6}, {"step": 4, "forget": 0.1, "retain": 0.5}]
    }
    written = report.write_report(
        {"models": models, "curves": curves, "timings": {"a": 1.5}}, tmp_path
    )
    names = {p.name for p in written}
    assert names == {
        "report.json",
        "report.md",
        "benchmark.png",
        "curves.png",
        "per_owner.png",
        "roc.png",
    }
    text = (tmp_path / "report.json").read_text()
    assert "NaN" not in text and json.loads(text)["models"]["npo"]["query_values"][2] is None
    markdown = (tmp_path / "report.md").read_text()
    assert report.Q_DEFINITION in markdown and "standard deviation" in markdown
    assert "samples scored / skipped" in markdown and "18 / 0" in markdown
    best, _ = report.closest_to_retrained(models)
    assert f"**Closest to retraining (1 run):** `{best}`" in markdown  # one run: no winner
    assert "training runs:" not in markdown
    assert "![roc](roc.png)" in markdown and "Time: 2 s" in markdown


def test_closest_to_retrained_is_the_nearest_point(models):
    best, distance = report.closest_to_retrained(models)
    target = models["retrained"]
    distances = {
        n: math.hypot(m["forget"] - target["forget"], m["retain"] - target["retain"])
        for n, m in models.items()
        if n in ("kl", "npo")
    }
    assert best == min(distances, key=distances.get) and distance == pytest.approx(
        min(distances.values())
    )


def test_an_owner_without_scored_queries_gets_no_bar(models, tmp_path, monkeypatch):
    saved = []
    monkeypatch.setattr(report.plots, "save_figure", lambda fig, path: saved.append(fig) or path)
    report.plot_per_owner(models, tmp_path / "p.png")
    (ax,) = saved[0].axes
    bars = [p for p in ax.patches if p.get_width() < 0.5]  # bars, not null bands
    values = sum("value" in e for m in models.values() for e in m["per_owner"].values())
    assert len(bars) == values == 11
    assert any(t.get_text() == "n/a" for t in ax.texts)
    assert {t.get_text() for t in ax.get_xticklabels()} == {"alice", "bob", "carol\n(forget)"}


def test_typed_flat_and_saved_results_make_the_same_report(models, tmp_path):
    """A report reads results as WaterDrumResult: typed ones, flat dicts and a report.json read
    back (NaN saved as null) give the same files."""
    typed = {name: WaterDrumResult.from_dict(m) for name, m in models.items()}
    report.write_report({"models": typed}, tmp_path / "typed")
    report.write_report({"models": models}, tmp_path / "flat")
    saved = json.loads((tmp_path / "flat" / "report.json").read_text())
    report.write_report(saved, tmp_path / "saved")
    for name in ("report.json", "report.md", "per_owner.png"):
        files = {(tmp_path / run / name).read_bytes() for run in ("typed", "flat", "saved")}
        assert len(files) == 1, name
    assert report.closest_to_retrained(typed) == report.closest_to_retrained(saved["models"])
    with pytest.raises(ValueError, match=r"\['forget_pvalue'\] are not keys"):
        report.write_report(
            {"models": {"x": {**saved["models"]["kl"], "forget_pvalue": 0.1}}}, tmp_path
        )


# A demo-like benchmark: (forget, retain, forget p-value, forget z) per model. original/scrub and
# kl/npo nearly coincide (their names used to overprint), the ideal point sits next to retrained.
NULL_KEYS = 200
FLOOR = 1 / (1 + NULL_KEYS)  # the smallest p-value 200 null keys can give
BENCHMARK = {
    "original": (0.642, 0.695, FLOOR, 9.1),
    "retrained": (0.033, 0.685, 0.4, 0.7),
    "kl": (0.236, 0.509, FLOOR, 3.1),
    "scrub": (0.663, 0.699, FLOOR, 7.0),
    "graddiff": (0.297, 0.637, FLOOR, 4.3),
    "npo": (0.247, 0.505, FLOOR, 2.8),
    "taskvector": (0.093, 0.239, 0.3, 1.5),
}


def moved(models, points=BENCHMARK):
    """The fixture's results (owners alice, bob and carol, carol forgotten) moved to ``points``;
    the null levels stay the fixture's."""
    base = report.typed(models)
    out = {}
    for name, (forget, retain, p, z) in points.items():
        m = base.get(name, base["kl"])
        out[name] = dataclasses.replace(
            m,
            forget=dataclasses.replace(m.forget, value=forget, p_value=p, z=z),
            retain=dataclasses.replace(m.retain, value=retain),
        )
    return out


CURVE = [{"step": 0, "forget": 0.8, "retain": 0.7}, {"step": 30, "forget": 0.3, "retain": 0.6}]


def demo_like_report(models, **points):
    return {
        "models": moved(models, {**BENCHMARK, **points}),
        "curves": {m: CURVE for m in ("kl", "scrub", "graddiff", "npo")},
        "curve_sampling": {
            "queries": 18,
            "num_samples": 1,
            "max_new_tokens": 48,
            "no_curve": {"taskvector": "it edits the weights once, at the end"},
        },
        "methods": {m: trainers.DESCRIPTIONS[m] for m in BENCHMARK if m in trainers.available()},
        "settings": {"null_keys": NULL_KEYS, "num_samples": 4, "max_new_tokens": 96},
        "setting_help": {"null_keys": "Random keys of the null reference."},
    }


@pytest.fixture
def figures(monkeypatch):
    """Every figure the report saves (saved for real: the layout is the final one)."""
    saved = {}
    save = report.save_figure

    def keep(fig, path):
        saved[Path(path).stem] = fig
        return save(fig, path)

    monkeypatch.setattr(report.plots, "save_figure", keep)
    return saved


def test_each_model_has_one_colour_in_every_plot(models, tmp_path, figures):
    report.write_report(demo_like_report(models), tmp_path)
    assert set(figures) == {"benchmark", "curves", "per_owner", "roc"}
    seen = {}  # (plot, model) -> colour
    (benchmark,) = figures["benchmark"].axes
    for artist in benchmark.collections:
        if artist.get_label() in BENCHMARK or artist.get_label() == "ideal":
            colors = artist.get_facecolor() if len(artist.get_facecolor()) else None
            if artist.get_label() == "ideal":  # hollow: its colour is the edge's
                colors = artist.get_edgecolor()
            seen["benchmark", artist.get_label()] = to_hex(colors[0])
    for ax in figures["curves"].axes:
        for line in ax.get_lines():
            if line.get_label() in BENCHMARK:
                seen["curves " + ax.get_title(), line.get_label()] = to_hex(line.get_color())
    (per_owner,) = figures["per_owner"].axes
    for container in per_owner.containers:
        if container.get_label() in BENCHMARK:
            seen["per_owner", container.get_label()] = to_hex(container.patches[0].get_facecolor())
    (roc,) = figures["roc"].axes
    seen["roc", "retrained"] = to_hex(roc.get_lines()[0].get_color())

    assert {name for _, name in seen} == {*BENCHMARK, "ideal"}
    for (plot, name), color in seen.items():
        expected = report.IDEAL_COLOR if name == "ideal" else report.model_color(name)
        assert color == to_hex(expected), (plot, name)
    assert len({to_hex(report.model_color(n)) for n in trainers.available()}) == len(
        trainers.available()
    )  # every method its own colour ...
    assert to_hex(report.IDEAL_COLOR) not in {
        to_hex(report.model_color(n)) for n in [*trainers.available(), "original", "retrained"]
    }  # ... and the ideal point none of theirs
    assert report.model_color("Grad_Diff") == report.model_color("graddiff")
    assert report.model_color("my-method") == report.model_color("my-method")  # stable
    legend = {t.get_text() for t in benchmark.get_legend().get_texts()}
    assert legend >= {*BENCHMARK, "ideal"}


def test_benchmark_names_do_not_overprint(models, tmp_path, figures):
    report.plot_benchmark(moved(models), tmp_path / "b.png")
    fig = figures["b"]
    (ax,) = fig.axes
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    for text in ax.texts:
        text.get_window_extent(renderer)  # places each name for the current dpi
    names = {t.get_text(): Text.get_window_extent(t, renderer) for t in ax.texts}  # names alone
    assert set(names) == {*BENCHMARK, "ideal"}  # this layout has room for every name
    boxes = list(names.items())
    for i, (a, box) in enumerate(boxes):
        assert frame.contains(box.x0, box.y0) and frame.contains(box.x1, box.y1), a
        for b, other in boxes[i + 1 :]:
            assert not box.overlaps(other), (a, b)
    markers = [
        ax.transData.transform(point)
        for artist in ax.collections
        if artist.get_label() in names
        for point in artist.get_offsets()
    ]
    assert len(markers) == len(names)
    for name, box in names.items():
        for x, y in markers:
            assert not box.overlaps(Bbox.from_extents(x - 3, y - 3, x + 3, y + 3)), name


def test_report_explains_itself_to_a_newcomer(models, tmp_path):
    report.write_report(demo_like_report(models), tmp_path)
    text = (tmp_path / "report.md").read_text()
    # The first paragraph says what was done, in words; the maths comes later.
    first = text.split("\n\n")[1]
    assert "secret key" in first and "carol asked to be forgotten" in first
    assert "q(" not in first and "cos" not in first
    assert text.index(first) < text.index(report.Q_DEFINITION)
    assert "z = (value - null mean) / null standard deviation" in text
    assert "z: how many standard deviations of the null level" in text
    # The p-value floor, and who sits on it (original, kl, scrub, graddiff, npo).
    assert (
        "p = 0.005 is the smallest p-value 200 null keys can give, 1 / (1 + 200): 5 models sit "
        "on it, so p cannot rank them; z can." in text
    )
    assert text.count("p = 0.005*") == 5
    for method, description in trainers.DESCRIPTIONS.items():
        assert "\n" not in description and len(description) < 200
        assert (f"- `{method}`: {description}" in text) == (method in BENCHMARK)
    assert set(trainers.DESCRIPTIONS) == set(trainers.available())
    assert "| null_keys | 200 | Random keys of the null reference. |" in text
    assert (
        "18 queries x 1 sample x 48 tokens (the table: 6 queries x 4 samples x 96 tokens)" in text
    )
    assert "at step 0 (the original model) forget reads 0.80 here and 0.642 in the table" in text
    assert "taskvector has no curve: it edits the weights once, at the end." in text


def test_an_analytic_null_report_has_no_p_value_floor_and_says_how_p_was_made(models, tmp_path):
    data = demo_like_report(models)
    data["settings"] = {**data["settings"], "null": "analytic"}
    assert report.p_value_floor(data["settings"]) is None
    assert report.p_value_floor({"null_keys": 200}) == pytest.approx(1 / 201)
    report.write_report(data, tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "computed exactly from their token-pair counts" in text
    assert "P(N(0, 1) >= z)" in text and "smallest p-value" not in text
    assert "p = (1 + the number of those keys" not in text


@pytest.mark.parametrize("closest_p", [FLOOR, 0.3])
def test_verdict_agrees_with_the_numbers(models, tmp_path, closest_p):
    """graddiff is closest to retraining; whether it is close enough depends on its p-value."""
    graddiff = (*BENCHMARK["graddiff"][:2], closest_p, BENCHMARK["graddiff"][3])
    report.write_report(demo_like_report(models, graddiff=graddiff), tmp_path)
    text = (tmp_path / "report.md").read_text()
    (closest,) = [line for line in text.splitlines() if line.startswith("**Closest to retraining")]
    assert "`graddiff`" in closest
    if closest_p <= report.DETECTION_LEVEL:
        assert "Closest is not close enough" in closest and "**still detected**" in closest
        assert "where the retrained model's is not (forget +0.033, p = 0.400)" in closest
        assert "In short, no method matched retraining here" in text
    else:
        assert (
            "no longer show the forgotten owner's watermark (p = 0.300); it kept 92% of the "
            "original's retain value (retrained: 99%)." in closest
        )  # carol is the one forgotten owner
        assert "In short" not in text
    assert "no longer detected in `taskvector`'s answers (p = 0.300); it kept 34% of the " in text
    points = {**BENCHMARK, "graddiff": graddiff}
    for name, (_, _, p, _) in points.items():
        (line,) = [line for line in text.splitlines() if line.startswith(f"- `{name}`: the")]
        assert ("**still detected**" in line) == (p <= report.DETECTION_LEVEL), line


def holm_verdict(models, owners, settings, forget_p=0.01):
    """The verdict's lines on the fixture's kl model (its forget p-value ``forget_p``) whose
    owners are ``owners``: name -> (forgotten, p-value, Holm-adjusted p-value)."""
    from waterdrum_hf.report.verdict import verdict

    kl = report.typed(models)["kl"]
    per_owner = {
        name: OwnerValue(2, 2, forget=forget, value=0.1, p_value=p, adjusted_p_value=adjusted)
        for name, (forget, p, adjusted) in owners.items()
    }
    forget = dataclasses.replace(kl.forget, p_value=forget_p)
    return "\n".join(
        verdict({"kl": dataclasses.replace(kl, forget=forget, per_owner=per_owner)}, settings)
    )


FOUR_OWNERS = {  # bob, carol and dan forgotten; carol detected only without the adjustment
    "alice": (False, 0.001, 0.002),
    "bob": (True, 0.004, 0.012),
    "carol": (True, 0.03, 0.06),
    "dan": (True, 0.2, 0.2),
}


def test_owner_by_owner_verdicts_read_holm_adjusted_p_values(models):
    text = holm_verdict(models, FOUR_OWNERS, {"null_keys": 999})
    assert (
        "; owner by owner (Holm-adjusted p-values over the 3 forgotten owners): still detected "
        "for bob, gone for carol and dan." in text
    )
    assert "each forgotten owner's p-value is Holm-adjusted over the model's forgotten" in text
    assert "at most 5% of the time (the family-wise error)" in text
    assert report.detected(OwnerValue(1, 1, p_value=0.03, adjusted_p_value=0.06)) is False
    assert report.detected(OwnerValue(1, 1, p_value=0.03)) is True  # saved before Holm


def test_a_detected_set_with_no_owner_detected_on_its_own_says_so(models):
    owners = {"bob": (True, 0.03, 0.06), "carol": (True, 0.04, 0.06)}
    text = holm_verdict(models, owners, {"null": "analytic"})
    assert "over the 2 forgotten owners): detected for none of them on its own." in text
    assert "owner by owner" not in holm_verdict(models, owners, {"null": "analytic"}, forget_p=0.3)


def test_too_few_null_keys_for_holm_are_named_not_read_as_not_detected(models):
    """20 keys: p >= 1 / 21 > 0.05 / 3, so Holm over 3 owners can declare none detected."""
    text = holm_verdict(models, FOUR_OWNERS, {"null_keys": 20})
    assert (
        "; owner by owner it cannot be detected with 20 null keys: Holm over the 3 forgotten "
        "owners needs p ≤ 0.05 / 3 at its first step, below the smallest p-value 1 / (1 + 20), "
        "so it needs at least 59 keys." in text
    )
    assert "cannot be detected" not in holm_verdict(models, FOUR_OWNERS, {"null_keys": 59})
    assert "cannot be detected" not in holm_verdict(models, FOUR_OWNERS, {"null": "analytic"})


def test_results_saved_before_holm_say_their_owner_verdicts_are_unadjusted(models):
    owners = {name: (forget, p, None) for name, (forget, p, _) in FOUR_OWNERS.items()}
    text = holm_verdict(models, owners, {"null_keys": 20})
    assert (
        "; owner by owner (unadjusted p-values: a result saved before the Holm adjustment): "
        "still detected for bob and carol, gone for dan." in text
    )
    assert "Holm-adjusted" not in text


def audit_result(forget, retain, **interval):
    return WaterDrumResult.from_dict(
        {"forget": forget, "retain": retain, "num_queries": 6, "num_scored": 6, "num_skipped": 0}
        | interval
    )


def test_the_audit_section_compares_every_model_with_the_retrained_one(models, tmp_path):
    from waterdrum_hf.audits import AuditResults

    audits = AuditResults(
        models={
            "retrained": {"before": audit_result(0.05, 0.6), "relearned": audit_result(0.25, 0.6),
                          "int4": audit_result(0.06, 0.5)},
            "npo": {"before": audit_result(0.10, 0.4), "relearned": audit_result(0.55, 0.5, forget_ci_low=0.4, forget_ci_high=0.7),
                    "int4": audit_result(0.30, 0.3)},
        },  # fmt: skip
        retrained="retrained",
        settings={"relearn_steps": 10, "relearn_texts": 5, "relearn_share": 0.25,
                  "quantization_checks": {"int4": {
                      "quantized_layers": 7, "linear_layers": 8, "levels": 16,
                      "weight_bytes_before": 4_000_000, "weight_bytes_after": 1_100_000}}},
    )  # fmt: skip
    assert audits.excess("npo", "relearned") == pytest.approx(0.30)
    assert audits.excess("npo", "int4") == pytest.approx(0.24)
    written = report.write_report({"models": models, "audits": audits}, tmp_path)
    assert {"audits.json", "audits.png"} <= {p.name for p in written}
    saved = json.loads((tmp_path / "audits.json").read_text())
    assert AuditResults.from_dict(saved).scalars() == audits.scalars()
    assert json.loads((tmp_path / "report.json").read_text())["audits"] == saved
    text = (tmp_path / "report.md").read_text()
    section = text.split("## Audits: does the unlearning hold?")[1].split("\n## ")[0]
    assert "training runs" not in section  # one run: no word of which run the audits read
    forget_table = section.split("Retain values before")[0]
    rows = {
        line.split(" | ")[0].strip("| "): line for line in forget_table.splitlines() if "|" in line
    }
    assert rows["npo"] == "| npo | +0.100 | +0.550 [+0.400, +0.700] | +0.300 | +0.300 | +0.240 |"
    assert "(yardstick)" in rows["retrained"]
    assert "21 %" in section and "83 %" in section and "on 5 texts of the forget set" in section
    assert "7 of 8 Linear layers quantized, at most 16 distinct" in section
    # Read back from report.json, the report renders the same section.
    again = report.read_report(tmp_path)
    assert report.typed_audits(again).scalars() == audits.scalars()


def test_intervals_show_as_a_column_and_as_error_bars(tmp_path, figures):
    tok = word_tokenizer(512)
    owners = [11, 22, 33] * 4
    texts = [word_texts(512, 2, 30, seed=i) for i in range(12)]
    models = {
        name: waterdrum_metrics(
            texts[shift:] + texts[:shift],
            owners,
            tok,
            config=WaterDrumConfig.from_keywords(dict(confidence=0.9)),
            forget_ids=[33],
            owner_names={11: "alice", 22: "bob", 33: "carol"},
            return_details=True,
        )
        for name, shift in (("original", 0), ("retrained", 1), ("kl", 2))
    }
    report.write_report({"models": models}, tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "| forget 90% CI | retain 90% CI | AUROC 90% CI |" in text
    kl = models["kl"]
    row = next(line for line in text.splitlines() if line.startswith("| kl |"))
    assert f"[{kl['forget_ci_low']:+.3f}, {kl['forget_ci_high']:+.3f}]" in row
    assert f"[{kl['separability_auroc_ci_low']:.3f}, {kl['separability_auroc_ci_high']:.3f}]" in row
    assert "CI: a 90% confidence interval (percentile bootstrap over queries" in text
    assert "Bars: 90% confidence intervals of both values." in text

    (benchmark,) = figures["benchmark"].axes
    assert len(benchmark.containers) == 3  # one cross of error bars per model, at its point
    crosses = {}
    for container in benchmark.containers:
        x_bar, y_bar = container.lines[2]
        (x_ends,), (y_ends,) = x_bar.get_segments(), y_bar.get_segments()
        crosses[x_ends[0][1], y_ends[0][0]] = ([p[0] for p in x_ends], [p[1] for p in y_ends])
    for result in models.values():
        x_ends, y_ends = crosses[result["retain"], result["forget"]]
        assert x_ends == pytest.approx([result["forget_ci_low"], result["forget_ci_high"]])
        assert y_ends == pytest.approx([result["retain_ci_low"], result["retain_ci_high"]])
    (per_owner,) = figures["per_owner"].axes
    assert per_owner.get_title() == "Per-owner WaterDrum values (90% CI)"
    first = next(c for c in per_owner.containers if c.get_label() == "kl")  # kl's alice bar
    ((_, low), (_, high)) = first.errorbar.lines[2][0].get_segments()[0]
    alice = kl["per_owner"]["alice"]
    assert (low, high) == pytest.approx((alice["ci_low"], alice["ci_high"]))


def test_without_intervals_there_are_no_interval_columns_or_bars(models, tmp_path, figures):
    report.write_report({"models": models}, tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert " CI" not in text and "Bars:" not in text
    (benchmark,) = figures["benchmark"].axes
    assert not benchmark.containers


def runs_of(models, shifts):
    """Each model's runs: the demo-like points moved by ``shifts[run][model]`` (forget, retain)."""
    runs = {name: [] for name in BENCHMARK}
    for shift in shifts:
        points = {
            name: (f + shift.get(name, (0, 0))[0], r + shift.get(name, (0, 0))[1], p, z)
            for name, (f, r, p, z) in BENCHMARK.items()
        }
        for name, result in moved(models, points).items():
            runs[name].append(result)
    return runs


@pytest.mark.parametrize("tie", [False, True])
def test_several_runs_give_means_with_intervals_over_runs_and_a_verdict_that_says_tie(
    models, tmp_path, tie
):
    """graddiff is closest in every run; when npo's point jumps between runs, its mean point
    lies close to the retrained model's but the runs cannot place it (then the verdict names
    a tie, both among it)."""
    farther = {"kl": (0.1, -0.1), "npo": (0.1, -0.1)}  # both well behind graddiff
    shifts = [farther, {**farther, "graddiff": (0.02, 0.0)}, {**farther, "graddiff": (-0.01, 0.01)}]
    if tie:
        shifts[1] = {**shifts[1], "npo": (-0.2, 0.17)}  # npo lands next to retrained in one run
    report_dict = {**demo_like_report(models), "runs": runs_of(models, shifts), "seeds": [0, 1, 2]}
    report.write_report(report_dict, tmp_path)
    text = (tmp_path / "report.md").read_text()
    (closest,) = [line for line in text.splitlines() if line.startswith("**Closest to retraining")]
    if tie:
        assert closest.startswith("**Closest to retraining: a tie** between ")
        named = re.findall(r"`(\w+)`", closest.split(" (distance")[0])
        assert {"graddiff", "npo"} <= set(named)
    else:
        assert closest.startswith("**Closest to retraining:** `graddiff` (distance ")
    assert "over 3 runs" in closest and "## The first run in detail (seed 0)" in text
    assert "Still detected? In the first of the 3 training runs:" in text  # says its run
    forget = [0.297, 0.317, 0.287]  # graddiff's forget value in the three runs
    low, high = stats.t.interval(0.95, 2, loc=np.mean(forget), scale=stats.sem(forget))
    row = next(line for line in text.splitlines() if line.startswith("| graddiff | +0.300 ["))
    assert f"+0.300 [{low:+.3f}, {high:+.3f}]" in row and row.endswith("| 3 |")
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["comparison"]["graddiff/forget"] == pytest.approx(np.mean(forget))
    assert saved["comparison"]["closest_separated"] is not tie


# --- formatting and findings: exact answers ------------------------------------------------


def test_format_interval_needs_both_ends():
    """An interval missing either end prints as ``–``; with both ends it is ``[low, high]``."""
    assert formatting.format_interval(None, 0.5, ".2f") == "–"
    assert formatting.format_interval(0.25, None, ".2f") == "–"
    assert formatting.format_interval(None, None, ".2f") == "–"
    assert formatting.format_interval(0.1234, 0.5, ".2f") == "[0.12, 0.50]"


def test_join_names_lists_every_name_in_order():
    """Names join as ``a``, ``a and b``, ``a, b and c``, ``a, b, c and d``."""
    assert formatting.join_names(["a"]) == "a"
    assert formatting.join_names(["a", "b"]) == "a and b"
    assert formatting.join_names(["a", "b", "c"]) == "a, b and c"
    assert formatting.join_names(["a", "b", "c", "d"]) == "a, b, c and d"


def test_the_null_floor_is_one_over_one_plus_the_keys_within_rounding():
    """``1 / (1 + K)`` and anything within 1e-9 of it (relative) is the floor of an empirical
    null of K keys; the next p-value up is not, and the analytic null (0 or no keys) has none."""
    for keys in (1, 99, 1000):
        assert formatting.on_null_floor(1 / (1 + keys), keys)
        assert not formatting.on_null_floor(2 / (1 + keys), keys)
    assert formatting.on_null_floor((1 + 1e-9) / 2, 1)  # the tolerance's edge is on the floor
    assert not formatting.on_null_floor((1 + 2e-9) / 2, 1)
    assert not formatting.on_null_floor(1e-6, 0) and not formatting.on_null_floor(1e-6, None)


def test_count_phrase_plural():
    """One noun is singular, any other count plural."""
    assert formatting.count_phrase(1, "text") == "1 text"
    assert formatting.count_phrase(0, "text") == "0 texts"
    assert formatting.count_phrase(2, "text") == "2 texts"


def _result(forget=None, retain=None, confidence=None):
    forget = None if forget is None else SetValue(value=forget)
    return _model(forget, retain, confidence=confidence)


def test_closest_to_retrained_needs_a_retrained_model_with_both_sets():
    """Without a retrained model, or one missing a set, there is no closest method."""
    assert findings.closest_to_retrained({"kl": _result(0.1, 0.2)}) is None
    for target in (_result(0.1, None), _result(None, 0.2)):
        assert findings.closest_to_retrained({"retrained": target, "kl": _result(0.1, 0.2)}) is None
    best = findings.closest_to_retrained(
        {"retrained": _result(0.0, 0.0), "kl": _result(3.0, 4.0), "npo": _result(6.0, 8.0)}
    )
    assert best == ("kl", 5.0)


def test_detected_at_the_level_and_without_a_value():
    """A p-value equal to the detection level counts as detected; no value gives ``None``."""
    assert findings.detected(None) is None
    assert findings.detected(SetValue(value=0.1)) is None
    assert findings.detected(SetValue(value=0.1, p_value=findings.DETECTION_LEVEL)) is True
    assert findings.detected(SetValue(value=0.1, p_value=0.0500001)) is False


def test_interval_level_names_mixed_levels():
    """Models at different levels read ``mixed-level``; at one level ``90%``; none ``""``."""
    assert findings.interval_level({"a": _result(confidence=0.9), "b": _result()}) == "90%"
    mixed = {"a": _result(confidence=0.9), "b": _result(confidence=0.95)}
    assert findings.interval_level(mixed) == "mixed-level"
    assert findings.interval_level({"a": _result()}) == ""


def test_p_value_floor_needs_at_least_one_key():
    """``1 / (1 + K)`` for K >= 1 null keys; no floor for 0 keys or the analytic null."""
    assert findings.p_value_floor({"null_keys": 1}) == 0.5
    assert findings.p_value_floor({"null_keys": 9}) == 0.1
    assert findings.p_value_floor({"null_keys": 0}) is None
    assert findings.p_value_floor({"null": "analytic", "null_keys": 9}) is None


def test_run_comparison_uses_the_level_asked_for():
    """The comparison's intervals are at the confidence passed, not the default 0.95."""
    report_ = {"runs": {"kl": [_result(0.1, 0.2), _result(0.3, 0.4)]}}
    comparison = findings.run_comparison(report_, confidence=0.8)
    assert comparison.confidence == 0.8
    forget = comparison.values["kl"]["forget"]
    half = stats.t.ppf(0.9, 1) * np.std([0.1, 0.3], ddof=1) / math.sqrt(2)
    assert forget.ci_low == pytest.approx(0.2 - half)
    assert forget.ci_high == pytest.approx(0.2 + half)


def test_mean_over_runs_replaces_value_and_interval_only():
    """Each set takes the mean and interval over runs; a model with no runs compared, and a
    set the first run lacks, stay as they were; the p-value stays the first run's."""
    first = dataclasses.replace(
        _result(0.1, None), forget=SetValue(value=0.1, p_value=0.02, ci_low=0.0, ci_high=0.2)
    )
    comparison = findings.run_comparison({"runs": {"kl": [_result(0.1, 0.5), _result(0.3, 0.7)]}})
    other = _result(0.9, 0.9)
    means = findings.mean_over_runs({"kl": first, "other": other}, comparison)
    want = comparison.values["kl"]["forget"]
    assert means["kl"].forget == SetValue(
        value=want.value, p_value=0.02, ci_low=want.ci_low, ci_high=want.ci_high
    )
    assert want.value == pytest.approx(0.2)
    assert want.ci_low is not None and want.ci_high is not None
    assert means["kl"].retain is None
    assert means["other"] == other


# --- the verdict, line by line ---------------------------------------------------------------

ONE_RUN = (
    "One run cannot say whether a rerun would name the same method: compare several training "
    "runs (the demo's `--num-seeds`, `waterdrum compare`)."
)
PLANE = "to the retrained model in the (forget, retain) plane"
EMPIRICAL_NOTE = (
    "z: how many standard deviations of the null level (what random keys that own nothing read "
    "on the same texts) the forget value lies above it. p = (1 + the number of those keys "
    "reading at least as high) / (1 + the number of keys): the chance that a key owning nothing "
    "reads this high; detected means p ≤ 0.05."
)
ANALYTIC_NOTE = (
    "z: how many standard deviations of the null level (what a key that owns nothing reads on "
    "the same texts, computed exactly from their token-pair counts: the analytic null) the "
    "forget value lies above it. p = P(N(0, 1) >= z): the chance that a key owning nothing reads "
    "this high, in the normal approximation; detected means p ≤ 0.05."
)
HOLM_NOTE = (
    " Owner by owner, each forgotten owner's p-value is Holm-adjusted over the model's forgotten "
    "owners: some owner whose watermark is gone still reads detected at most 5% of the time (the "
    "family-wise error), whatever the dependence between owners, who share the model and the "
    "null keys. Unadjusted, with 20 such owners some owner would read detected in about 64% of "
    "models (1 - 0.95^20)."
)


def _set(value, p=None, z=None):
    return SetValue(value=value, p_value=p, z=z, null_mean=0.0, null_std=0.1)


def _owner(p, adjusted=None):
    return OwnerValue(
        num_queries=2,
        num_scored_queries=2,
        forget=True,
        value=0.1,
        p_value=p,
        adjusted_p_value=adjusted,
    )


def _model(forget=None, retain=None, per_owner=None, confidence=None):
    return WaterDrumResult(
        forget=forget,
        retain=None if retain is None else SetValue(value=retain),
        num_queries=4,
        num_scored=4,
        num_skipped=0,
        per_owner=per_owner,
        confidence=confidence,
    )


def test_verdict_one_run_closest_still_detected():
    """One run, one forgotten owner: the closest method (z unknown: ``n/a``) still shows the
    watermark where retraining does not; each other method that hid it gets a line (with the
    retain share kept where both retain values are known); two models sit on the p floor."""
    models = {
        "original": _model(_set(0.5, 0.05, 3.0), 0.4),
        "retrained": _model(_set(0.0, 0.6, 0.2), 0.3),
        "kl": _model(_set(0.1, 0.05), 0.35, per_owner={"carol": _owner(0.04, 0.04)}),
        "npo": _model(_set(0.02, 0.3, 0.5), 0.1),
        "ga": _model(_set(0.9, 0.7, -0.4)),
    }
    whose = "forgotten owner's"
    assert verdict.verdict(models, {"null_keys": 19}) == [
        f"**Closest to retraining (1 run):** `kl` (distance 0.112 {PLANE}). {ONE_RUN} Closest is "
        f"not close enough: the {whose} watermark is **still detected** in its answers (forget "
        "+0.100 against a null level of +0.000 ± 0.100, z = n/a), where the retrained model's is "
        "not (forget +0.000, p = 0.600).",
        "",
        f"The {whose} watermark is no longer detected in `npo`'s answers (p = 0.300); it kept 25% "
        "of the original's retain value (retrained: 75%).",
        "",
        f"The {whose} watermark is no longer detected in `ga`'s answers (p = 0.700).",
        "",
        "In short, no method matched retraining here: even the closest one still shows the "
        f"{whose} watermark.",
        "",
        f"- `original`: the {whose} watermark is **still detected** (z = +3.0, p = 0.050*).",
        f"- `retrained`: the {whose} watermark is not detected (z = +0.2, p = 0.600).",
        f"- `kl`: the {whose} watermark is **still detected** (z = n/a, p = 0.050*).",
        f"- `npo`: the {whose} watermark is not detected (z = +0.5, p = 0.300).",
        f"- `ga`: the {whose} watermark is not detected (z = -0.4, p = 0.700).",
        "",
        EMPIRICAL_NOTE,
        "",
        "\\* p = 0.050 is the smallest p-value 19 null keys can give, 1 / (1 + 19): 2 models sit "
        "on it, so p cannot rank them; z can.",
    ]


def _two_run_models(d):
    owners = {"a": _owner(0.01, 0.02), "b": _owner(0.04, 0.08), "c": _owner(0.5, 0.5)}
    return {
        "original": _model(_set(0.5 + d, 0.01, 3.0), 0.4),
        "retrained": _model(_set(0.0 + d, 0.6, 0.2), 0.3 + d),
        "kl": _model(_set(0.02 + d, 0.3, 0.4), 0.3 + d, per_owner=owners),
        "npo": _model(_set(0.4 + d, 0.01, 2.5), 0.3 + d),
    }


def test_a_method_whose_pooled_watermark_is_gone_but_an_owners_is_not_says_both():
    """The set's verdict (pooled) and the owners' (Holm-adjusted) never read as a contradiction:
    "no longer detected" is said of the set, beside the owner still detected on its own."""
    models = _two_run_models(0.0)
    owners = {"a": _owner(0.01, 0.02), "b": _owner(0.5, 0.5)}
    models["npo"] = _model(_set(0.4, 0.3, 0.5), 0.3, per_owner=owners)
    text = "\n".join(verdict.verdict(models, {"null_keys": 99}))
    assert (
        "The forgotten owners' watermark is no longer detected in `npo`'s answers (p = 0.300), "
        "pooled over the set; a's alone still is (Holm-adjusted over the 2 forgotten owners); "
        "it kept 75% of the original's retain value" in text
    )
    assert (
        "- `npo`: the forgotten owners' watermark, pooled over the set, is not detected "
        "(z = +0.5, p = 0.300); owner by owner (Holm-adjusted p-values over the 2 forgotten "
        "owners): still detected for a, gone for b." in text
    )
    models["npo"] = _model(_set(0.4, 0.3, 0.5), 0.3, per_owner={**owners, "a": _owner(0.3, 0.6)})
    text = "\n".join(verdict.verdict(models, {"null_keys": 99}))
    assert "pooled" not in text.split("`npo`'s answers")[1].split("\n")[0]
    still = {"a": _owner(0.01, 0.02), "b": _owner(0.01, 0.02), "c": _owner(0.5, 0.5)}
    models["npo"] = _model(_set(0.4, 0.3, 0.5), 0.3, per_owner=still)
    text = "\n".join(verdict.verdict(models, {"null_keys": 99}))
    assert "a and b's alone still are (Holm-adjusted over the 3 forgotten owners)" in text


def test_detection_sentences_say_which_run_they_read():
    """Over several runs, the methods' detection sentences read the first run and say so; over
    one run they say nothing of runs."""
    models = _two_run_models(0.0)
    models["npo"] = _model(_set(0.4, 0.3, 0.5), 0.3)
    runs = {name: [m, m] for name, m in models.items()}
    text = "\n".join(verdict.verdict(models, {"null_keys": 99}, compare_seeds(runs)))
    assert "no longer detected in `npo`'s answers in the first of the 2 runs (p = 0.300)" in text
    assert "Still detected? In the first of the 2 training runs:" in text
    assert "its answers in the first of the 2 runs no longer show" in text  # the closest's line
    text = "\n".join(verdict.verdict(models, {"null_keys": 99}))
    assert "no longer detected in `npo`'s answers (p = 0.300)" in text
    models["npo"] = _model(_set(0.4, 0.01, 2.5), 0.3)
    models["kl"] = _model(_set(0.02, 0.01, 2.5), 0.3)
    runs = {name: [m, m] for name, m in models.items()}
    text = "\n".join(verdict.verdict(models, {"null_keys": 99}, compare_seeds(runs)))
    assert "it is still detected in every unlearned model in the first of the 2 runs." in text


def test_verdict_over_runs_names_a_winner_and_reads_owners_holm_adjusted():
    """Over three runs at 90%: the separated winner with its interval, detection read in the
    first run, owner by owner on Holm-adjusted p-values (with Holm's note), two models on the
    floor."""
    runs = {
        name: [_two_run_models(shift)[name] for shift in (0.0, 0.01, 0.02)]
        for name in _two_run_models(0.0)
    }
    comparison = compare_seeds(runs, confidence=0.9)
    whose = "forgotten owners'"
    plane = f"of the mean points over 3 runs {PLANE}, the runs' noise taken out"
    assert verdict.verdict(_two_run_models(0.0), {"null_keys": 99}, comparison) == [
        "**Closest to retraining:** `kl` (distance 0.020, 90% interval [0.020, 0.020], "
        f"{plane}); every other method's squared distance exceeds its own by more than the "
        "runs' 90% interval. Like the retrained model's, its answers in the first of the 3 runs "
        "no longer show the "
        f"{whose} watermark (p = 0.300), pooled over the set; a's alone still is (Holm-adjusted "
        "over the 3 forgotten owners); it kept 75% of the original's retain value (retrained: "
        "75%).",
        "",
        "Still detected? In the first of the 3 training runs:",
        "",
        f"- `original`: the {whose} watermark is **still detected** (z = +3.0, p = 0.010*).",
        f"- `retrained`: the {whose} watermark is not detected (z = +0.2, p = 0.600).",
        f"- `kl`: the {whose} watermark, pooled over the set, is not detected (z = +0.4, "
        "p = 0.300); owner by owner "
        "(Holm-adjusted p-values over the 3 forgotten owners): still detected for a, gone for b "
        "and c.",
        f"- `npo`: the {whose} watermark is **still detected** (z = +2.5, p = 0.010*).",
        "",
        EMPIRICAL_NOTE + HOLM_NOTE,
        "",
        "\\* p = 0.010 is the smallest p-value 99 null keys can give, 1 / (1 + 99): 2 models sit "
        "on it, so p cannot rank them; z can.",
    ]


def test_closest_line_names_a_tie_with_every_distance():
    """Methods the runs cannot separate: all named, closest first, with their distances (of
    the mean points, less the runs' noise); with two runs, that they cannot tell."""

    def models(d):
        return {
            "original": _model(_set(0.5, 0.01, 3.0), 0.4),
            "retrained": _model(_set(0.0, 0.6, 0.2), 0.3),
            "kl": _model(_set(0.1 + d, 0.6, 0.2), 0.3),
            "npo": _model(_set(0.1 - d, 0.6, 0.2), 0.3),
        }

    def distance(points):  # offsets from the retrained model's (0.0, 0.6), noise taken out
        mean = np.mean(points)
        return math.sqrt(mean**2 - np.var(points, ddof=1) / len(points))

    comparison = compare_seeds({n: [models(0.0)[n], models(0.05)[n]] for n in models(0.0)})
    kl, npo = distance([0.1, 0.15]), distance([0.1, 0.05])
    assert verdict.closest_line(comparison) == (
        "**Closest to retraining: 2 runs cannot tell** between `npo` and `kl` (distance of the "
        f"mean points over 2 runs {PLANE}, the runs' noise taken out: `npo` {npo:.3f}, `kl` "
        f"{kl:.3f}). A distance's interval needs 3 runs or more (the demo's `--num-seeds`)."
    )
    three = [models(d) for d in (0.0, 0.05, 0.02)]
    comparison = compare_seeds({n: [m[n] for m in three] for n in three[0]})
    assert verdict.closest_line(comparison).startswith(
        "**Closest to retraining: a tie** between `npo` and `kl` (distance of the mean points "
        f"over 3 runs {PLANE}, the runs' noise taken out: `npo` "
    )
    assert verdict.closest_line(comparison).endswith(
        "The runs cannot tell them apart: the 95% interval of each one's squared distance "
        "minus `npo`'s includes 0."
    )


def test_verdict_when_every_method_keeps_the_watermark():
    """Every unlearned model still detected (and the retrained one too): said once, with no
    claim that the retrained model's watermark is gone."""
    models = {
        "original": _model(_set(0.5, 0.01, 3.0), 0.4),
        "retrained": _model(_set(0.1, 0.04, 2.0), 0.3),
        "kl": _model(_set(0.2, 0.02, 2.2), 0.3),
    }
    whose = "forgotten owners'"
    assert verdict.verdict(models, {"null_keys": 999}) == [
        f"**Closest to retraining (1 run):** `kl` (distance 0.100 {PLANE}). {ONE_RUN} Closest is "
        f"not close enough: the {whose} watermark is **still detected** in its answers (forget "
        "+0.200 against a null level of +0.000 ± 0.100, z = +2.2).",
        "",
        f"No unlearning method removed the {whose} watermark at these settings: it is still "
        "detected in every unlearned model.",
        "",
        "In short, no method matched retraining here: even the closest one still shows the "
        f"{whose} watermark.",
        "",
        f"- `original`: the {whose} watermark is **still detected** (z = +3.0, p = 0.010).",
        f"- `retrained`: the {whose} watermark is **still detected** (z = +2.0, p = 0.040).",
        f"- `kl`: the {whose} watermark is **still detected** (z = +2.2, p = 0.020).",
        "",
        EMPIRICAL_NOTE,
    ]


def test_verdict_closest_without_a_p_value_and_without_methods():
    """A closest method with no p-value gets only its distance line; a benchmark of the
    original and the retrained model alone has no closest line and no method line."""
    base = {
        "original": _model(_set(0.5, 0.01, 3.0), 0.4),
        "retrained": _model(_set(0.1, 0.6, 0.2), 0.3),
    }
    detection = [
        "- `original`: the forgotten owners' watermark is **still detected** (z = +3.0, p = 0.010).",
        "- `retrained`: the forgotten owners' watermark is not detected (z = +0.2, p = 0.600).",
        "",
        EMPIRICAL_NOTE,
    ]
    with_kl = {**base, "kl": _model(SetValue(value=0.2), 0.3)}
    assert verdict.verdict(with_kl, {"null_keys": 999}) == [
        f"**Closest to retraining (1 run):** `kl` (distance 0.100 {PLANE}). {ONE_RUN}",
        "",
        *detection,
    ]
    assert verdict.verdict(base, {"null_keys": 999}) == detection


def test_verdict_ignores_a_closest_method_the_models_do_not_hold():
    """A comparison passed in may rank a method this report has no model for (runs of another
    benchmark): no closest line is written for it, and nothing fails looking it up."""
    models = {
        "original": _model(_set(0.5, 0.01, 3.0), 0.4),
        "retrained": _model(_set(0.1, 0.6, 0.2), 0.3),
        "kl": _model(_set(0.4, 0.01, 3.0), 0.3),
    }
    elsewhere = {**models, "kl": _model(_set(0.9, 0.01, 3.0), 0.3), "npo": _model(_set(0.1), 0.3)}
    comparison = compare_seeds({name: [m, m] for name, m in elsewhere.items()})
    assert comparison.closest is not None and comparison.closest.names[0] == "npo"
    lines = verdict.verdict(models, {"null_keys": 999}, comparison)
    assert not any("Closest" in line for line in lines)
    assert lines[0].startswith("No unlearning method removed")


def test_verdict_without_an_original_model_is_detection_only():
    """Without an ``original`` there is no benchmark verdict, even with a retrained model; owners
    read on unadjusted p-values say so, and the analytic note has no Holm note."""
    models = {
        "retrained": _model(_set(0.0, 0.6, 0.2), 0.3),
        "kl": _model(_set(0.3, 0.001, 4.0), 0.3, per_owner={"a": _owner(0.01), "b": _owner(0.02)}),
    }
    assert verdict.verdict(models, {"null": "analytic", "null_keys": 9}) == [
        "- `retrained`: the forgotten owners' watermark is not detected (z = +0.2, p = 0.600).",
        "- `kl`: the forgotten owners' watermark is **still detected** (z = +4.0, p = 0.001); "
        "owner by owner (unadjusted p-values: a result saved before the Holm adjustment): still "
        "detected for a and b.",
        "",
        ANALYTIC_NOTE,
    ]


def test_verdict_without_retain_watermark_and_one_model_on_the_floor():
    """An original with retain value 0 has no retain share to keep (no kept phrase); one model on
    the p floor ``sits`` on it; no owner and no set detected adds no owner phrase."""
    models = {
        "original": _model(_set(0.5, 0.01, 3.0), 0.0),
        "retrained": _model(_set(0.0, 0.6, 0.2), 0.3),
        "kl": _model(_set(0.02, 0.1, 0.2), 0.3),
    }
    lines = verdict.verdict(models, {"null_keys": 9})
    assert lines[0] == (
        f"**Closest to retraining (1 run):** `kl` (distance 0.020 {PLANE}). {ONE_RUN} Like the "
        "retrained model's, its answers no longer show the forgotten owners' watermark "
        "(p = 0.100)."
    )
    assert lines[-1] == (
        "\\* p = 0.100 is the smallest p-value 9 null keys can give, 1 / (1 + 9): 1 model sits "
        "on it."
    )
    owners = {"a": _owner(0.2, 0.3), "b": _owner(0.3, 0.3)}
    models["kl"] = _model(_set(0.02, 0.1, 0.2), 0.3, per_owner=owners)
    lines = verdict.verdict(models, {"null_keys": 99})
    assert "- `kl`: the forgotten owners' watermark is not detected (z = +0.2, p = 0.100)." in lines


# --- the per-owner table of `waterdrum score` / `verify` ---------------------------------------

OWNER_HEADER = "owner        set        value       p  Holm p  verdict"


def _owners_result(owners):
    """A result whose per-owner values are ``owners`` (name -> OwnerValue)."""
    return WaterDrumResult(num_queries=8, num_scored=8, num_skipped=0, per_owner=owners)


def _holm_owner(forget, value, p, adjusted):
    return OwnerValue(2, 2, forget=forget, value=value, p_value=p, adjusted_p_value=adjusted)


def test_owner_table_reads_each_verdict_off_the_holm_adjusted_p_value():
    """Columns in place (name, set, value, p, Holm p, verdict); a forgotten owner detected on
    its raw p-value but not after Holm reads "not detected"; an owner with nothing scored reads
    n/a; one saved before Holm (no adjusted p) is read on its raw p and counted in no set."""
    from waterdrum_hf.config import NullConfig
    from waterdrum_hf.report.owner_table import owner_table

    owners = {
        "alice": _holm_owner(False, 0.25, 0.01, 0.02),
        "bob": _holm_owner(True, 0.125, 0.03, 0.06),
        "carol": _holm_owner(True, -0.0625, 0.5, 0.5),
        "dan": OwnerValue(1, 0, forget=True),
        "eve": _holm_owner(True, 0.5, 0.001, None),
        "frank": _holm_owner(False, 0.0, 0.9, 0.9),
    }
    want = [
        "",
        OWNER_HEADER,
        "alice        retain   +0.2500  0.0100  0.0200  detected",
        "bob          forget   +0.1250  0.0300  0.0600  not detected",
        "carol        forget   -0.0625  0.5000  0.5000  not detected",
        "dan          forget       n/a       -       -  -",
        "eve          forget   +0.5000  0.0010       -  detected",
        "frank        retain   +0.0000  0.9000  0.9000  not detected",
        "retain owners detected: 1 of 2 (Holm-adjusted p <= 0.05 over the set's owners: "
        "family-wise error at most 0.05)",
        "forget owners detected: 0 of 2 (Holm-adjusted p <= 0.05 over the set's owners: "
        "family-wise error at most 0.05)",
    ]
    result = _owners_result(owners)
    assert owner_table(result, NullConfig("empirical", keys=39)) == want  # 39 keys: 2 owners ok
    assert owner_table(result, NullConfig("analytic")) == want
    assert owner_table(result, None) == want
    assert owner_table(_owners_result({}), None) == []
    assert owner_table(WaterDrumResult(num_queries=1, num_scored=1, num_skipped=0), None) == []


def test_owner_table_names_a_set_with_too_few_null_keys_for_holm():
    """Holm over m owners needs p <= 0.05 / m, and an empirical p-value is at least
    1 / (1 + K): with K = 38 keys two forgotten owners cannot be detected (39 needed), one
    retained owner can (19 needed); an owner of no set reads "overall"."""
    from waterdrum_hf.config import NullConfig
    from waterdrum_hf.report.owner_table import owner_table

    owners = {
        "alice": _holm_owner(True, 0.5, 1 / 39, 1 / 39),
        "bob": _holm_owner(True, 0.25, 1 / 39, 2 / 39),
        "carol": _holm_owner(False, 0.75, 1 / 39, 1 / 39),
        "dan": _holm_owner(None, 0.0, 0.5, 0.5),
    }
    lines = owner_table(_owners_result(owners), NullConfig("empirical", keys=38))
    assert lines == [
        "",
        OWNER_HEADER,
        "alice        forget   +0.5000  0.0256  0.0256  cannot tell: too few null keys",
        "bob          forget   +0.2500  0.0256  0.0513  cannot tell: too few null keys",
        "carol        retain   +0.7500  0.0256  0.0256  detected",
        "dan          overall  +0.0000  0.5000  0.5000  not detected",
        "forget owners: none can read detected with 38 null keys (Holm over 2 owners needs "
        "p <= 0.05 / 2, below 1 / (1 + 38)): use --null-keys 39 or more",
        "retain owners detected: 1 of 1 (Holm-adjusted p <= 0.05 over the set's owners: "
        "family-wise error at most 0.05)",
        "overall owners detected: 0 of 1 (Holm-adjusted p <= 0.05 over the set's owners: "
        "family-wise error at most 0.05)",
    ]
    enough = owner_table(_owners_result(owners), NullConfig("empirical", keys=39))
    assert "cannot tell" not in "\n".join(enough)
    assert enough[2].endswith("  detected") and enough[3].endswith("  not detected")


def test_owner_table_lists_at_most_max_owners(monkeypatch):
    """Owners beyond MAX_OWNERS are counted, not listed; exactly MAX_OWNERS lists them all."""
    from waterdrum_hf.report import owner_table as module

    monkeypatch.setattr(module, "MAX_OWNERS", 2)
    owners = {f"o{i}": _holm_owner(False, 0.1, 0.5, 0.5) for i in range(4)}
    lines = module.owner_table(_owners_result(owners), None)
    assert [line.split()[0] for line in lines[2:5]] == ["o0", "o1", "..."]
    assert lines[4] == "... 2 more owners (all in the full result)"
    assert lines[5].startswith("retain owners detected: 0 of 4 ")
    three = module.owner_table(_owners_result(dict(list(owners.items())[:3])), None)
    assert three[4] == "... 1 more owner (all in the full result)"
    two = module.owner_table(_owners_result(dict(list(owners.items())[:2])), None)
    assert len(two) == 5 and two[4].startswith("retain owners detected: 0 of 2 ")
    assert module.MAX_OWNERS == 2


# --- the audit section, word for word, and its plot's data -----------------------------------


def _audited(forget, retain, *, forget_ci=(None, None), auroc=None, auroc_ci=(None, None)):
    """One audited model's result: forget and retain values, intervals where given."""
    return WaterDrumResult(
        forget=None
        if forget is None
        else SetValue(forget, ci_low=forget_ci[0], ci_high=forget_ci[1]),
        retain=None if retain is None else SetValue(retain),
        separability_auroc=auroc,
        separability_auroc_ci_low=auroc_ci[0],
        separability_auroc_ci_high=auroc_ci[1],
        num_queries=4,
        num_scored=4,
        num_skipped=0,
    )


def _audits(retrained="retrained"):
    """Three models through relearning and a deletion attack: retrained (the yardstick), npo
    (an interval after relearning, none after the attack), kl (no forget value before)."""
    from waterdrum_hf.audits import AuditResults

    return AuditResults(
        models={
            "retrained": {
                "before": _audited(0.0625, 0.625, auroc=0.5),
                "relearned": _audited(0.25, 0.5),
                "deletion:0.2": _audited(0.125, 0.375),
            },
            "npo": {
                "before": _audited(0.125, 0.5, auroc=0.75, auroc_ci=(0.625, 0.875)),
                "relearned": _audited(0.5, 0.25, forget_ci=(0.375, 0.625), auroc=0.25),
            },
            "kl": {
                "before": _audited(None, 0.75, auroc=0.5, auroc_ci=(0.25, None)),
                "relearned": _audited(0.375, None, forget_ci=(0.25, None)),
            },
        },
        retrained=retrained,
        settings={
            "relearn_steps": 10,
            "relearn_learning_rate": 0.0001,
            "relearn_batch_size": 2,
            "relearn_texts": 1,
            "relearn_share": 0.25,
            "attacks": ["swap:0.1", "deletion:0.2"],
            "attack_seed": 7,
            "quantization_checks": {
                "int8": {
                    "quantized_layers": 7,
                    "linear_layers": 8,
                    "levels": 256,
                    "weight_bytes_before": 4_125_001,  # 4.13 MB in MB of 10^6 bytes
                    "weight_bytes_after": 2_125_001,
                }
            },
        },
    )


def test_audit_section_word_for_word():
    """The forget table (excess = after minus the retrained model's after the same audit, the
    retrained row the yardstick, "–" where a value is missing, half intervals left out), the
    retain and AUROC tables, then one line per setting: relearning, the attacks that ran, each
    quantization's check."""
    assert report.audit_section(_audits()) == [
        report.AUDIT_EXPLANATION,
        "",
        "| model | forget before | forget after relearning | excess | forget under deletion:0.2 "
        "| excess |",
        "| --- | --- | --- | --- | --- | --- |",
        "| retrained | +0.062 | +0.250 | (yardstick) | +0.125 | (yardstick) |",
        "| npo | +0.125 | +0.500 [+0.375, +0.625] | +0.250 | – | – |",
        "| kl | – | +0.375 | +0.125 | – | – |",
        "",
        "Retain values before and after the same audits:",
        "",
        "| model | retain before | retain after relearning | retain under deletion:0.2 |",
        "| --- | --- | --- | --- |",
        "| retrained | +0.625 | +0.500 | +0.375 |",
        "| npo | +0.500 | +0.250 | – |",
        "| kl | +0.750 | – | – |",
        "",
        "Separability of forget and retain queries (D1 AUROC) before and after the same audits:",
        "",
        "| model | AUROC before | AUROC after relearning | AUROC under deletion:0.2 |",
        "| --- | --- | --- | --- |",
        "| retrained | 0.500 | – | – |",
        "| npo | 0.750 [0.625, 0.875] | 0.250 | – |",
        "| kl | 0.500 | – | – |",
        "",
        "Relearning: 10 steps at learning rate 0.0001 (batch 2) on 1 text of the forget set (the "
        "first 25%).",
        "Text attacks (seed 7): deletion:0.2, each applied to every model's completions before "
        "verification (the same completions as the before column); NAME:STRENGTH edits that "
        "share of each text's words (waterdrum_hf.attacks).",
        "8-bit weights (torchao): 7 of 8 Linear layers quantized, at most 256 distinct stored "
        "values per layer, their weights 4.13 MB -> 2.13 MB.",
    ]


def test_audit_section_without_a_yardstick_auroc_or_relearning():
    """No retrained model: no excess column; no AUROC anywhere: no AUROC table; no relearning,
    no attack run and no quantization: no settings lines."""
    from waterdrum_hf.audits import AuditResults

    audits = AuditResults(
        models={
            "kl": {"before": _audited(0.25, 0.5), "int4": _audited(0.5, 0.5)},
            "npo": {"before": _audited(0.125, 0.5)},
        },
        settings={"attacks": ["deletion:0.2"], "relearn_texts": 3},
    )
    assert report.audit_section(audits) == [
        report.AUDIT_EXPLANATION,
        "",
        "| model | forget before | forget 4-bit weights |",
        "| --- | --- | --- |",
        "| kl | +0.250 | +0.500 |",
        "| npo | +0.125 | – |",
        "",
        "Retain values before and after the same audits:",
        "",
        "| model | retain before | retain 4-bit weights |",
        "| --- | --- | --- |",
        "| kl | +0.500 | +0.500 |",
        "| npo | +0.500 | – |",
        "",
    ]
    attacked = AuditResults(
        models={"kl": {"deletion:0.2": _audited(0.25, 0.5), "swap:0.1": _audited(0.5, 0.5)}},
        settings={"attacks": ["swap:0.1", "deletion:0.2"], "attack_seed": 3},
    )
    assert report.audit_section(attacked)[-1].startswith(
        "Text attacks (seed 3): deletion:0.2, swap:0.1, each applied"
    )
    nan = AuditResults(
        models={"kl": {"int8": _audited(0.5, None, forget_ci=(math.nan,) * 2, auroc=0.5, auroc_ci=(math.nan,) * 2)}}
    )  # fmt: skip
    lines = report.audit_section(nan)
    assert "| kl | – | +0.500 [+nan, +nan] |" in lines and "| kl | – | 0.500 [nan, nan] |" in lines
    relearned = AuditResults(models={"kl": {"relearned": _audited(0.25, 0.5)}}, settings={})
    assert report.audit_section(relearned)[-1] == (
        "Relearning: None steps at learning rate None (batch None) on 0 texts of the forget set "
        "(the first 0%)."
    )


def _saved_audit_figure(monkeypatch, audits, tmp_path):
    module = sys.modules["waterdrum_hf.report.audit_section"]  # the package's name is the function
    saved = []
    real = module.save_figure
    monkeypatch.setattr(
        module, "save_figure", lambda fig, path: saved.append(fig) or real(fig, path)
    )
    assert module.plot_audits(audits, tmp_path / "audits.png") == tmp_path / "audits.png"
    assert (tmp_path / "audits.png").read_bytes()[:4] == b"\x89PNG"
    return saved[0]


def test_audit_plot_shows_each_value_where_it_belongs(monkeypatch, tmp_path):
    """Per audit a panel: each model's forget value before (hollow, left of its tick) and after
    (filled, right), in its colour, error bars from its interval, an arrow from before to after,
    the retrained model's value after the audit as the dashed line to beat."""
    audits = _audits()
    fig = _saved_audit_figure(monkeypatch, audits.to_dict(), tmp_path)  # the flat form too
    relearned, deletion = fig.axes
    assert fig.get_size_inches() == pytest.approx((2 * 4.0, 4.0))
    assert relearned.get_title() == "Forget value after relearning"
    assert deletion.get_title() == "Forget value under deletion:0.2"
    white = to_hex("white")
    expected = {  # panel -> [(x, y, filled colour or white, (low, high) or None)]
        relearned: [
            (-0.12, 0.0625, white, None),
            (0.12, 0.25, "tab:green", None),
            (0.88, 0.125, white, None),
            (1.12, 0.5, "tab:purple", (0.375, 0.625)),
            (2.12, 0.375, "tab:blue", None),
        ],
        deletion: [(-0.12, 0.0625, white, None), (0.12, 0.125, "tab:green", None),
                   (0.88, 0.125, white, None)],
    }  # fmt: skip
    colours = {0: "tab:green", 1: "tab:purple", 2: "tab:blue"}
    for ax, points in expected.items():
        drawn = []
        for container in ax.containers:
            line, _, bars = container.lines
            (x,), (y,) = line.get_xdata(), line.get_ydata()
            assert to_hex(line.get_color()) == to_hex(colours[round(x)])
            ends = None
            if bars:
                ((_, low), (_, high)) = bars[0].get_segments()[0]
                ends = (low, high)
            drawn.append((x, y, to_hex(line.get_markerfacecolor()), ends))
        want = [(x, y, to_hex(c), e) for x, y, c, e in points]
        assert drawn == [(pytest.approx(x), y, c, e and pytest.approx(e)) for x, y, c, e in want]
        assert [t.get_text() for t in ax.get_xticklabels()] == ["retrained", "npo", "kl"]
        assert list(ax.get_xticks()) == [0, 1, 2]
        for tick in ax.get_xticklabels():
            assert (tick.get_rotation(), tick.get_ha(), tick.get_fontsize()) == (30, "right", 8)
        assert ax.get_ylabel() == "forget WaterDrum value"
    arrows = [(a.xyann, a.xy, a.arrowprops) for a in relearned.texts]
    assert arrows == [  # from before to after ("->"), thin, in the model's colour
        ((-0.12, 0.0625), (0.12, 0.25), {"arrowstyle": "->", "color": "tab:green", "lw": 0.8}),
        ((0.88, 0.125), (1.12, 0.5), {"arrowstyle": "->", "color": "tab:purple", "lw": 0.8}),
    ]
    assert [t.get_text() for t in relearned.texts] == ["", ""]  # arrows, no words
    npo_after = relearned.containers[3]
    assert npo_after.lines[0].get_marker() == "o"
    assert [cap.get_markersize() for cap in npo_after.lines[1]] == [4, 4]  # capsize 2
    assert [(a.xyann, a.xy) for a in deletion.texts] == [((-0.12, 0.0625), (0.12, 0.125))]
    for ax, line_to_beat, label in (
        (relearned, 0.25, "retrained after relearning"),
        (deletion, 0.125, "retrained under deletion:0.2"),
    ):
        dashed, zero = ax.get_lines()[-2:]
        assert dashed.get_ydata() == [line_to_beat, line_to_beat]
        assert dashed.get_linestyle() == "--" and dashed.get_label() == label
        assert to_hex(dashed.get_color()) == to_hex("tab:green")
        assert dashed.get_linewidth() == 1.0 and zero.get_linewidth() == 0.5
        assert zero.get_ydata() == [0, 0] and to_hex(zero.get_color()) == "#000000"
        legend = ax.get_legend()
        assert [t.get_text() for t in legend.get_texts()] == [label]
        assert legend.get_texts()[0].get_fontsize() == 7 and legend._loc == 2  # upper left


def test_audit_plot_without_a_retrained_model_has_no_line_to_beat(monkeypatch, tmp_path):
    audits = dataclasses.replace(_audits(), retrained=None)
    fig = _saved_audit_figure(monkeypatch, audits, tmp_path)
    for ax in fig.axes:
        assert [line.get_ydata() for line in ax.get_lines() if line.get_linestyle() == "--"] == []
        assert ax.get_legend() is None
    one = dataclasses.replace(
        audits, models={"kl": {"before": _audited(0.1, 0.2), "int8": _audited(0.2, 0.2)}}
    )
    fig = _saved_audit_figure(monkeypatch, one, tmp_path)
    assert fig.get_size_inches() == pytest.approx((4.0, 4.0))  # at least 4 inches a panel
    assert fig.axes[0].get_title() == "Forget value 8-bit weights"
    six = {f"m{i}": {"before": _audited(0.1, 0.2), "int8": _audited(0.2, 0.2)} for i in range(6)}
    fig = _saved_audit_figure(monkeypatch, dataclasses.replace(audits, models=six), tmp_path)
    assert fig.get_size_inches() == pytest.approx((0.55 * 6 + 2.0, 4.0))  # 0.55 in a model


# --- report.md, section by section ------------------------------------------------------------

SUMMARY_START = (
    "Each data owner's text was reworded under the owner's own secret key: a watermark that a "
    "reader does not notice, but that text written by a model which learned from it still "
    "carries, detectably with the key. To see whose data a model still holds, the model "
    "continues short prompts cut from each owner's passages and the continuations are checked "
    "for that owner's watermark."
)
FORGET_MEANING = (
    "still shows: after good unlearning it falls to about 0, what text without the watermark "
    "reads, as on a model retrained without that data. The *retain* value says the same of the "
    "other owners and should stay where it was: the model should keep what it was not asked to "
    "forget."
)
ORIGINAL_AND_RETRAINED = (
    "`original` was trained on every owner's data; `retrained` on the other owners' data only "
    "(the gold standard of unlearning, too costly to do for every request); every other model is "
    "`original` after an unlearning method (see Methods)."
)
HOW_NUMBERS = (
    "A query is a prompt made from one owner's data; its value pools the q of its samples "
    "(token-weighted). A set's value is the mean over its queries. Null level: the set's value "
    "under random keys that own nothing (mean ± standard deviation over those keys), i.e. what "
    '"no watermark" reads on the same texts. z = (value - null mean) / null standard deviation. '
    "AUROC: how well per-query values separate retain (positive) from forget queries (1 = "
    "perfectly, 0.5 = not at all). A skipped sample had no countable token (too short)."
)
CI_MEANING = (
    "confidence interval (percentile bootstrap over queries: each owner's queries are resampled "
    "with replacement, so every owner keeps its number of queries; the owners are given). It "
    "says how far the value could move with other queries and samples of the same owners; two "
    "models whose intervals do not overlap differ by more than that noise."
)
CAPTIONS = {
    "benchmark": "Forget vs retain value per model (the paper's benchmark plot). The ideal "
    "unlearned model sits at the forget null level with the original's retain value.",
    "curves": "Forget and retain values during unlearning, logged by WaterDrumCallback.",
    "per_owner": "Each owner's value per model (mean with {bars}, n = scored queries), with "
    "that owner's null band (mean ± 2 sd over random keys).",
    "roc": "ROC of per-query values, retain positive, forget negative.",
    "audits": "Forget value of each model before (hollow) and after (filled) each audit; the "
    "dashed line is the retrained model after the same audit: the line to beat.",
    "watermark_view": "One forget and one retain completion of the same queries, before "
    "unlearning (the original model) and after (the method closest to retraining), each token "
    "coloured by its term of its owner's watermark function: blue for the watermark, red "
    "against, with each text's score, null level and p-value (watermark_view.html: the same as "
    "a page).",
}


def _owners_of(carol):
    return {
        "alice": OwnerValue(2, 2, forget=False, value=0.5),
        "carol": OwnerValue(2, 2, forget=True, value=carol),
    }


def _one_run_models():
    """original and retrained with every column a table can have (retrained without
    intervals), kl with a forget value and its interval only."""
    return {
        "original": WaterDrumResult(
            forget=SetValue(0.5, null_mean=0.0, null_std=0.125, z=4.0, p_value=0.01, ci_low=0.375, ci_high=0.625),
            retain=SetValue(0.75, null_mean=0.25, null_std=0.5, ci_low=0.625, ci_high=0.875),
            separability_auroc=0.125, separability_auroc_ci_low=0.0, separability_auroc_ci_high=0.25,
            confidence=0.9, num_queries=6, num_scored=18, num_skipped=2, per_owner=_owners_of(0.5),
        ),
        "retrained": WaterDrumResult(
            forget=SetValue(0.25, null_mean=-0.125, null_std=0.125, z=0.5, p_value=0.5),
            retain=SetValue(0.625), separability_auroc=0.875,
            confidence=0.9, num_queries=5, num_scored=17, num_skipped=3, per_owner=_owners_of(0.25),
        ),
        "kl": WaterDrumResult(
            forget=SetValue(-0.125, ci_low=-0.25, ci_high=0.0),
            confidence=0.9, num_queries=4, num_scored=12, num_skipped=0,
        ),
    }  # fmt: skip


def _one_run_report():
    return {
        "models": _one_run_models(),
        "settings": {
            "null_keys": 99,
            "num_samples": 3,
            "max_new_tokens": 32,
            "lr": 0.000123456,
            "forget_owners": ["zed"],  # the per-owner values name carol: they win
            "unset": None,
            "methods": ("kl", "npo"),
        },
        "setting_help": {"null_keys": "Random keys.", "lr": "Learning rate."},
        "methods": {"kl": "KL to the original.", "npo": "Not one of the models."},
        "curves": {"kl": [{"step": 5, "forget": 0.0}, {"step": 0, "forget": 0.4, "retain": 0.5}]},
        "curve_sampling": {
            "queries": 2,
            "num_samples": 1,
            "max_new_tokens": 16,
            "no_curve": {"ga": "no callback", "idk": "it never trained"},
        },
        "timings": {"train": 10.4, "score": 2.2},
    }


PLOT_NAMES = ("benchmark", "curves", "per_owner", "roc", "audits", "watermark_view")


def test_markdown_of_one_run_word_for_word():
    """Title, summary naming the forgotten owner, the verdict, the table (every column with its
    model's value, "–" where a model lacks it), how the numbers are made with the CI's level,
    the methods shown, the settings with their meaning, every plot with its caption, the time."""
    data = _one_run_report()
    plots = {key: Path("/elsewhere") / f"{key}.png" for key in PLOT_NAMES}
    found = verdict.verdict(data["models"], data["settings"], findings.run_comparison(data))
    ci = "90% confidence interval"
    captions = {
        **CAPTIONS,
        "benchmark": CAPTIONS["benchmark"] + " Bars: 90% confidence intervals of both values.",
        "curves": CAPTIONS["curves"]
        + " Each point scores a subsample: 2 queries x 1 sample x 16 tokens (the table: 6 "
        "queries x 3 samples x 32 tokens), so its values differ from the table's: at step 0 "
        "(the original model) forget reads 0.40 here and 0.500 in the table. ga has no curve: "
        "no callback. idk has no curve: it never trained.",
        "per_owner": CAPTIONS["per_owner"].format(bars=f"its {ci}"),
    }
    want = [
        "# Title",
        "",
        f"{SUMMARY_START} Owner carol asked to be forgotten. The *forget* value says how "
        f"strongly its watermark {FORGET_MEANING}",
        "",
        ORIGINAL_AND_RETRAINED,
        "",
        "## Verdict",
        "",
        *found,
        "",
        "## Results",
        "",
        "| model | forget | retain | AUROC | forget 90% CI | retain 90% CI | AUROC 90% CI | forget "
        "null (mean ± sd) | retain null (mean ± sd) | queries | samples scored / skipped |",
        "|" + " --- |" * 11,
        "| original | +0.500 | +0.750 | 0.125 | [+0.375, +0.625] | [+0.625, +0.875] | [0.000, "
        "0.250] | +0.000 ± 0.125 | +0.250 ± 0.500 | 6 | 18 / 2 |",
        "| retrained | +0.250 | +0.625 | 0.875 | – | – | – | -0.125 ± 0.125 | – | 5 | 17 / 3 |",
        "| kl | -0.125 | – | – | [-0.250, +0.000] | – | – | – | – | 4 | 12 / 0 |",
        "",
        "## How the numbers are made",
        "",
        report.Q_DEFINITION,
        "",
        HOW_NUMBERS,
        "",
        f"CI: a 90% {CI_MEANING}",
        "",
        "## Methods",
        "",
        "- `kl`: KL to the original.",
        "",
        "## Settings",
        "",
        "| setting | value | meaning |",
        "| --- | --- | --- |",
        "| null_keys | 99 | Random keys. |",
        "| num_samples | 3 |  |",
        "| max_new_tokens | 32 |  |",
        "| lr | 0.000123 | Learning rate. |",
        "| forget_owners | zed |  |",
        "| methods | kl, npo |  |",
        "",
        "## Plots",
        "",
    ]
    for key in PLOT_NAMES:
        want += [f"![{key}]({key}.png)", "", captions[key], ""]
    want += ["Time: 13 s (train 10 s, score 2 s).", ""]
    assert found[0].startswith("- `original`: the forgotten owner's watermark is **still")
    assert report.markdown(data, plots, title="Title").split("\n") == want


def test_markdown_without_intervals_plots_settings_or_forgotten_owners():
    """No interval: no CI column, paragraph or bars, per-owner bars are standard errors; no
    forgotten owner anywhere: what a value means; no plots, methods, settings, time: no
    sections for them; without original and retrained: no paragraph on them."""
    kl = WaterDrumResult(overall=SetValue(0.5), num_queries=2, num_scored=2, num_skipped=0)
    text = report.markdown({"models": {"kl": kl}}, {}, title="T")
    assert text.split("\n") == [
        "# T",
        "",
        f"{SUMMARY_START} A value of about 0 means the owner's watermark does not show at all; "
        "close to 1, strongly.",
        "",
        "## Results",
        "",
        "| model | overall | queries | samples scored / skipped |",
        "| --- | --- | --- | --- |",
        "| kl | +0.500 | 2 | 2 / 0 |",
        "",
        "## How the numbers are made",
        "",
        report.Q_DEFINITION,
        "",
        HOW_NUMBERS,
        "",
    ]
    plots = {"per_owner": Path("p.png"), "benchmark": Path("b.png"), "curves": Path("c.png")}
    named = {"models": {"kl": kl}, "settings": {"forget_owners": ["x", "y"]}, "timings": {}}
    text = report.markdown(named, plots, title="T")
    assert (
        f"{SUMMARY_START} Owners x and y asked to be forgotten. The *forget* value says how "
        f"strongly their watermark {FORGET_MEANING}\n\n## Results"
    ) in text
    assert text.endswith(
        "## Settings\n\n| setting | value |\n| --- | --- |\n| forget_owners | x, y |\n\n## Plots\n\n"
        f"![per_owner](p.png)\n\n{CAPTIONS['per_owner'].format(bars='standard error over its queries')}"
        f"\n\n![benchmark](b.png)\n\n{CAPTIONS['benchmark']}\n\n![curves](c.png)\n\n"
        f"{CAPTIONS['curves']}\n"
    )
    assert "Time:" not in text and "CI" not in text and "## Methods" not in text


def test_curve_note_says_what_the_curves_are_computed_on():
    """The subsample alone without the run's settings or models; no step-0 comparison without
    a step 0, an original, or its forget value; ``None`` without curve sampling."""
    sampling = {"queries": 3, "num_samples": 2, "max_new_tokens": 8}
    models = _one_run_models()
    base = "Each point scores a subsample: 3 queries x 2 samples x 8 tokens"
    later = {"kl": [{"step": 1, "forget": 0.2}]}
    assert report.curve_note({"models": models}) is None
    assert report.curve_note({"models": models, "curve_sampling": {}}) is None
    assert report.curve_note({"models": models, "curve_sampling": sampling, "curves": later}) == (
        f"{base}, so its values differ from the table's."
    )
    settings = {"num_samples": 1, "max_new_tokens": 4}
    for partial in ({"num_samples": 1}, {"max_new_tokens": 4}):
        note = report.curve_note(
            {"models": models, "curve_sampling": sampling, "settings": partial}
        )
        assert note == f"{base}, so its values differ from the table's."
    assert report.curve_note({"models": {}, "curve_sampling": sampling, "settings": settings}) == (
        f"{base}, so its values differ from the table's."
    )
    start = {"kl": [{"step": 0, "forget": 0.25}]}
    table = f"{base} (the table: 6 queries x 1 sample x 4 tokens), so its values differ"
    with_start = {
        "models": models,
        "curve_sampling": sampling,
        "settings": settings,
        "curves": start,
    }
    assert report.curve_note(with_start) == (
        f"{table} from the table's: at step 0 (the original model) forget reads 0.25 here and "
        "0.500 in the table."
    )
    no_forget = {"kl": [{"step": 0, "retain": 0.25}]}
    assert report.curve_note({**with_start, "curves": no_forget}) == f"{table} from the table's."
    without_original = {n: m for n, m in models.items() if n != "original"}
    assert report.curve_note({**with_start, "models": without_original}) == (
        f"{base} (the table: 5 queries x 1 sample x 4 tokens), so its values differ from the "
        "table's."
    )
    blank = dataclasses.replace(models["original"], forget=None)
    assert report.curve_note({**with_start, "models": {**models, "original": blank}}) == (
        f"{table} from the table's."
    )


def test_runs_table_places_each_mean_interval_and_distance():
    """One row per model: each set's mean with its interval over runs, "–" for a set it lacks,
    its distance to the retrained model with its interval, and its runs (each set's where
    they differ); without distances, no distance column."""
    from waterdrum_hf.report import text as text_module
    from waterdrum_hf.scoring.seed_comparison import SeedComparison, SeedValue

    values = {
        "retrained": {"forget": SeedValue(0.25, 0.125, 0.375, 3), "retain": SeedValue(0.5, None, None, 2)},
        "kl": {"forget": SeedValue(-0.5, -0.75, -0.25, 2)},
    }  # fmt: skip
    distances = {"kl": SeedValue(0.75, 0.5, 1.0, 2)}
    comparison = SeedComparison(0.8, values, {}, distances, None, True)
    level = "80% CI over runs"
    assert text_module._runs_table(comparison) == [
        f"| model | forget ({level}) | retain ({level}) | distance to retrained ({level}) | runs |",
        "| --- | --- | --- | --- | --- |",
        "| retrained | +0.250 [+0.125, +0.375] | +0.500 – | – | forget 3, retain 2 |",
        "| kl | -0.500 [-0.750, -0.250] | – | 0.750 [0.500, 1.000] | 2 |",
    ]
    no_distances = SeedComparison(0.95, {"kl": values["kl"]}, {}, {}, None, True)
    assert text_module._runs_table(no_distances) == [
        "| model | forget (95% CI over runs) | runs |",
        "| --- | --- | --- |",
        "| kl | -0.500 [-0.750, -0.250] | 2 |",
    ]
    nan = math.nan  # runs that agree exactly: Student's t gives no interval, written as nan
    overall = {"kl": {"overall": SeedValue(0.5, nan, nan, 2)}}
    flat = SeedComparison(0.95, overall, {}, {"kl": SeedValue(0.25, nan, nan, 2)}, None, True)
    assert text_module._runs_table(flat)[0] == (
        "| model | overall (95% CI over runs) | distance to retrained (95% CI over runs) | runs |"
    )
    assert text_module._runs_table(flat)[2] == "| kl | +0.500 [+nan, +nan] | 0.250 [nan, nan] | 2 |"


def test_markdown_of_several_runs_says_so_in_every_caption():
    """Several runs: the runs table, the first run's table under its seed, the runs'
    explanation, the benchmark caption's means over runs, every other caption the first run's."""
    data = {**_one_run_report(), "runs": {n: [m, m] for n, m in _one_run_models().items()}}
    plots = {key: Path(f"{key}.png") for key in PLOT_NAMES}
    comparison = findings.run_comparison(data)
    text = report.markdown({**data, "seeds": [7, 8]}, plots, title="T")
    from waterdrum_hf.report import text as text_module

    runs_table = "\n".join(text_module._runs_table(comparison))
    first_table = text.split("## The first run in detail (seed 7)\n\n")[1].split("\n\n")[0]
    one_run = report.markdown(_one_run_report(), plots, title="T")
    assert first_table == one_run.split("## Results\n\n")[1].split("\n\n")[0]
    assert f"## Results\n\n{runs_table}\n\n## The first run in detail (seed 7)\n\n" in text
    assert f"\n\n{report.text.RUNS_EXPLANATION}\n\n## Methods" in text
    assert (
        CAPTIONS["benchmark"] + " Each point is the mean over 2 training runs; bars: its 95% "
        "interval over runs.\n"
    ) in text
    for key in ("curves", "per_owner", "roc", "audits", "watermark_view"):
        caption = text.split(f"![{key}]({key}.png)\n\n")[1].split("\n")[0]
        assert caption.endswith(". The first training run's."), key
    unseeded = report.markdown(data, plots, title="T")
    assert "## The first run in detail\n\n" in unseeded


# --- the plots' data ---------------------------------------------------------------------------


def _marker_vertices(marker):
    from matplotlib.markers import MarkerStyle

    style = MarkerStyle(marker)
    return style.get_path().transformed(style.get_transform()).vertices


def _bench_models():
    """original (forget interval only), retrained (retain interval only, the null level), kl (no
    interval), My_Method (an interval above its value: no bar below), ga (no retain: no point)."""

    def model(forget, retain):
        return WaterDrumResult(
            forget=forget, retain=retain, num_queries=2, num_scored=2, num_skipped=0
        )

    return {
        "original": model(
            SetValue(0.5, null_mean=0.25, null_std=0.5, ci_low=0.25, ci_high=0.625), SetValue(0.75)
        ),
        "retrained": model(
            SetValue(0.125, null_mean=0.0, null_std=0.0625), SetValue(0.625, ci_low=0.5, ci_high=0.875)
        ),
        "kl": model(SetValue(0.25), SetValue(0.5)),
        "My_Method": model(SetValue(0.375, ci_low=0.4375, ci_high=0.5), SetValue(0.25)),
        "ga": model(SetValue(0.0), None),
    }  # fmt: skip


def test_benchmark_plot_puts_each_model_at_its_values(tmp_path, figures):
    """Each model with both values a marker at (forget, retain) in its colour (square original,
    big star retrained), error bars from its intervals (none below a value its interval lies
    above), the ideal point at (retrained's forget null mean, original's retain value) and the
    retrained model's forget null band (mean ± 2 sd)."""
    report.plot_benchmark(_bench_models(), tmp_path / "b.png")
    fig = figures["b"]
    (ax,) = fig.axes
    assert fig.get_size_inches() == pytest.approx((6.6, 4.6))
    assert ax.get_title() == "Unlearning benchmark"
    assert ax.get_xlabel() == "forget WaterDrum value (lower is better)"
    assert ax.get_ylabel() == "retain WaterDrum value (higher is better)"
    assert ax.margins() == (0.12, 0.12)
    scatter = {c.get_label(): c for c in ax.collections if c.get_label()[0] != "_"}
    want = {  # name: (point, marker, size, colour)
        "original": ((0.5, 0.75), "s", 50, "#333333"),
        "retrained": ((0.125, 0.625), "*", 120, "tab:green"),
        "kl": ((0.25, 0.5), "o", 50, "tab:blue"),
        "My_Method": ((0.375, 0.25), "o", 50, report.model_color("My_Method")),
    }
    assert set(scatter) == {*want, "ideal"}
    for name, (point, marker, size, colour) in want.items():
        artist = scatter[name]
        assert artist.get_offsets().tolist() == [list(point)], name
        assert artist.get_sizes().tolist() == [size], name
        assert to_hex(artist.get_facecolor()[0]) == to_hex(colour), name
        assert artist.get_zorder() == 3
        assert np.allclose(artist.get_paths()[0].vertices, _marker_vertices(marker)), name
    ideal = scatter["ideal"]
    assert ideal.get_offsets().tolist() == [[0.0, 0.75]]
    assert len(ideal.get_facecolor()) == 0 and to_hex(ideal.get_edgecolor()[0]) == "#000000"
    assert ideal.get_sizes().tolist() == [90] and ideal.get_zorder() == 2
    assert np.allclose(ideal.get_paths()[0].vertices, _marker_vertices("P"))
    (band,) = ax.patches
    assert band.get_label() == "forget null ±2 sd"
    x0, _, x1, _ = band.get_path().get_extents(band.get_patch_transform()).extents
    assert (x0, x1) == pytest.approx((-0.125, 0.125))  # retrained's 0 ± 2 x 0.0625
    assert band.get_facecolor() == pytest.approx((*matplotlib_rgb("grey"), 0.15))
    bars = {}
    for container in ax.containers:
        _, caps, lines = container.lines
        assert all(cap.get_markersize() == 4 for cap in caps)  # capsize 2
        for line in lines:
            assert line.get_zorder() == 2 and list(line.get_linewidths()) == [1]
            (colour,) = line.get_colors()
            assert colour[3] == pytest.approx(0.7)
            (segment,) = line.get_segments()
            horizontal = segment[0][1] == segment[1][1]
            key = (segment[0][1] if horizontal else segment[0][0], "x" if horizontal else "y")
            bars[key] = ([p[0] if horizontal else p[1] for p in segment], to_hex(colour[:3]))
    assert bars == {
        (0.75, "x"): ([0.25, 0.625], "#333333"),  # original: forget interval only
        (0.125, "y"): ([0.5, 0.875], to_hex("tab:green")),  # retrained: retain interval only
        (0.25, "x"): ([0.375, 0.5], to_hex(report.model_color("My_Method"))),  # none below
    }


def matplotlib_rgb(name):
    from matplotlib.colors import to_rgb

    return to_rgb(name)


def test_benchmark_null_band_without_a_retrained_model_is_the_originals(tmp_path, figures):
    """No retrained model: the ideal point and the band read the original's forget null; no
    null spread or no original's retain: neither is drawn."""
    models = _bench_models()
    del models["retrained"]
    report.plot_benchmark(models, tmp_path / "b.png")
    (ax,) = figures["b"].axes
    ideal = next(c for c in ax.collections if c.get_label() == "ideal")
    assert ideal.get_offsets().tolist() == [[0.25, 0.75]]
    (band,) = ax.patches
    x0, _, x1, _ = band.get_path().get_extents(band.get_patch_transform()).extents
    assert (x0, x1) == pytest.approx((-0.75, 1.25))
    original = models["original"]
    for changed in (
        dataclasses.replace(original, forget=dataclasses.replace(original.forget, null_std=None)),
        dataclasses.replace(original, forget=dataclasses.replace(original.forget, null_mean=None)),
    ):
        report.plot_benchmark({**models, "original": changed}, tmp_path / "c.png")
        (ax,) = figures["c"].axes
        assert not ax.patches and "ideal" not in [c.get_label() for c in ax.collections]
    report.plot_benchmark({"kl": models["kl"]}, tmp_path / "d.png")
    (ax,) = figures["d"].axes
    assert not ax.patches and [c.get_label() for c in ax.collections] == ["kl"]


def test_benchmark_figure_has_one_legend_for_every_panel(tmp_path, figures):
    """Three panels, one legend beside the last, each name once, in the order first drawn."""
    models = _bench_models()
    panels = {
        "A": {"original": models["original"]},
        "B": {"kl": models["kl"], "original": models["original"]},
        "C": {"retrained": models["retrained"]},
    }
    report.benchmark_figure(panels, tmp_path / "three.png")
    fig = figures["three"]
    assert fig.get_size_inches() == pytest.approx((5.0 * 3 + 1.6, 4.6))
    assert [ax.get_title() for ax in fig.axes] == ["A", "B", "C"]
    assert [ax.get_legend() is None for ax in fig.axes] == [True, True, False]
    legend = fig.axes[2].get_legend()
    labels = ["original", "ideal", "forget null ±2 sd", "kl", "retrained"]  # no ideal in C
    assert [t.get_text() for t in legend.get_texts()] == labels
    assert legend.get_texts()[0].get_fontsize() == 8 and legend._loc == 6  # center left
    anchor = legend.get_bbox_to_anchor().transformed(fig.axes[2].transAxes.inverted())
    assert (anchor.x0, anchor.y0) == pytest.approx((1.02, 0.5))
    named = [sorted(t.get_text() for t in ax.texts) for ax in fig.axes]
    assert named == [["ideal", "original"], ["ideal", "kl", "original"], ["retrained"]]


def test_label_points_places_names_nearest_first():
    """A lone point's name sits right of it (left-aligned, no leader line); points that
    coincide take the places in LABEL_OFFSETS' order, each aligned away from the point; far
    places get a grey leader line; a point at the right edge has its name on the left."""
    fig, ax = report.new_figure(6.0, 6.0)
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    report.label_points(ax, {"lone": (2.0, 2.0)})
    (text,) = ax.texts
    assert (text.get_text(), text.xyann, text.xy) == ("lone", (8, 0), (2.0, 2.0))
    assert (text.get_ha(), text.get_va(), text.get_fontsize()) == ("left", "center", 8)
    assert text.arrowprops is None and text.anncoords == "offset points"
    assert (ax.get_xlim(), ax.get_ylim()) == ((0, 10), (0, 10))

    fig, ax = report.new_figure(6.0, 6.0)
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    same = {f"p{i}": (5.0, 5.0) for i in range(12)}
    report.label_points(ax, same)
    placed = [(t.get_text(), t.xyann, t.get_ha(), t.get_va()) for t in ax.texts]
    align = {1: "left", -1: "right", 0: "center"}
    valign = {1: "bottom", -1: "top", 0: "center"}
    assert placed[:2] == [("p0", (8, 0), "left", "center"), ("p1", (-8, 0), "right", "center")]
    used = [report.LABEL_OFFSETS.index(xy) for _, xy, _, _ in placed]
    assert used == sorted(used) and len(set(used)) == len(used)  # nearest free place first
    for _, (dx, dy), ha, va in placed:
        assert (ha, va) == (align[np.sign(dx)], valign[np.sign(dy)])
    assert report.LABEL_OFFSETS[:8] == (
        (8, 0), (-8, 0), (6, 6), (-6, 6), (6, -6), (-6, -6), (0, 8), (0, -8)
    )  # fmt: skip
    for text in ax.texts:
        dx, dy = text.xyann
        if max(abs(dx), abs(dy)) < 10:
            assert text.arrowprops is None
        else:
            assert text.arrowprops == {"arrowstyle": "-", "lw": 0.5, "color": "grey"}
    assert len(ax.texts) > 8  # the second ring has room for more

    fig, ax = report.new_figure(6.0, 6.0)
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    report.label_points(ax, {"edge": (10.0, 5.0), "corner": (10.0, 10.0)})
    edge, corner = ax.texts
    assert (edge.xyann, edge.get_ha()) == ((-8, 0), "right")
    (dx, dy), ha, va = corner.xyann, corner.get_ha(), corner.get_va()
    assert dx < 0 and dy < 0 and (ha, va) == ("right", "top")  # left of and below the corner


def test_curves_plot_draws_each_methods_values_against_the_step(tmp_path, figures):
    """Forget and retain panels: each method's points that have the value, at their steps, in
    its colour; a zero line; one legend beside the retain panel; the note under the plots."""
    curves = {
        "kl": [{"step": 0, "forget": 0.5, "retain": 0.75}, {"step": 10, "forget": 0.25}],
        "My_Method": [{"step": 2, "retain": 0.5}, {"step": 4, "forget": 0.125, "retain": 0.25}],
    }
    report.plot_curves(curves, tmp_path / "c.png", note="The note.")
    fig = figures["c"]
    assert fig.get_size_inches() == pytest.approx((9.0, 3.6))
    forget, retain = fig.axes
    want = {
        forget: {"kl": ([0, 10], [0.5, 0.25]), "My_Method": ([4], [0.125])},
        retain: {"kl": ([0], [0.75]), "My_Method": ([2, 4], [0.5, 0.25])},
    }
    for ax, key in ((forget, "forget"), (retain, "retain")):
        assert ax.get_title() == f"{key.capitalize()} WaterDrum during unlearning"
        assert (ax.get_xlabel(), ax.get_ylabel()) == ("optimizer step", f"{key} value")
        *lines, zero = ax.get_lines()
        drawn = {
            line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in lines
        }
        assert drawn == want[ax]
        for line in lines:
            assert to_hex(line.get_color()) == to_hex(report.model_color(line.get_label()))
            assert (line.get_marker(), line.get_markersize()) == ("o", 3)
        assert list(zero.get_ydata()) == [0, 0] and zero.get_linewidth() == 0.5
        assert to_hex(zero.get_color()) == "#000000"
    assert forget.get_legend() is None
    legend = retain.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["kl", "My_Method"]
    assert legend.get_texts()[0].get_fontsize() == 8 and legend._loc == 6
    anchor = legend.get_bbox_to_anchor().transformed(retain.transAxes.inverted())
    assert (anchor.x0, anchor.y0) == pytest.approx((1.02, 0.5))
    (note,) = fig.texts
    assert (note.get_text(), note.get_position()) == ("The note.", (0.02, 0.0))
    assert (note.get_ha(), note.get_va(), note.get_fontsize(), note.get_wrap()) == (
        "left",
        "top",
        7.5,
        True,
    )
    report.plot_curves(curves, tmp_path / "d.png")
    assert not figures["d"].texts


def _owner_entry(value, n, forget=False, std=None, ci=(None, None), null=(None, None)):
    return OwnerValue(
        n, n, forget=forget, value=value, std=std, ci_low=ci[0], ci_high=ci[1],
        null_mean=null[0], null_std=null[1],
    )  # fmt: skip


def test_per_owner_plot_bars_errors_counts_and_null_bands(tmp_path, figures):
    """Per owner a group of bars, one per model (0.8 wide in all), each at its value with its
    interval or else its standard error, its count above; "n/a" where nothing was scored; the
    owners' null bands (mean ± 2 sd of the models' null levels); forgotten owners marked."""

    def model(per_owner):
        return WaterDrumResult(num_queries=4, num_scored=4, num_skipped=0, per_owner=per_owner)

    models = {
        "original": model({
            "alice": _owner_entry(0.5, 4, std=0.25, null=(0.0, 0.125)),
            "carol": _owner_entry(0.25, 2, forget=True, ci=(0.125, 0.5), null=(0.25, 0.0625)),
        }),
        "retrained": model(None),
        "kl": model({
            "alice": _owner_entry(-0.25, 1, null=(0.125, 0.25)),
            "carol": _owner_entry(None, 0, forget=True),
            "bob": _owner_entry(0.125, 4, std=0.5),
        }),
    }  # fmt: skip
    report.plot_per_owner(models, tmp_path / "p.png")
    fig = figures["p"]
    (ax,) = fig.axes
    assert fig.get_size_inches() == pytest.approx((6.0, 4.4))
    bars = {}
    for container in ax.containers:
        if not hasattr(container, "errorbar"):
            continue
        (patch,) = container.patches
        x = patch.get_x() + patch.get_width() / 2
        ((_, low), (_, high)) = container.errorbar.lines[2][0].get_segments()[0]
        caps = [c.get_markersize() for c in container.errorbar.lines[1]]
        bars[round(x, 6)] = (
            patch.get_height(), round(patch.get_width(), 9), to_hex(patch.get_facecolor()),
            round(low, 9), round(high, 9), caps,
        )  # fmt: skip
    purple, blue = "#333333", to_hex("tab:blue")
    assert bars == {
        -0.2: (0.5, 0.4, purple, 0.375, 0.625, [4, 4]),  # 0.25 / sqrt(4) either side
        0.8: (0.25, 0.4, purple, 0.125, 0.5, [4, 4]),  # its interval
        0.2: (-0.25, 0.4, blue, -0.25, -0.25, [4, 4]),  # one query: no spread
        2.2: (0.125, 0.4, blue, -0.125, 0.375, [4, 4]),
    }
    texts = {(round(t.get_position()[0], 6), round(t.get_position()[1], 6)): t for t in ax.texts}
    counts = {xy: t.get_text() for xy, t in texts.items() if t.get_text() != "n/a"}
    assert counts == {
        (-0.2, 0.645): "n=4",
        (0.8, 0.52): "n=2",
        (0.2, 0.02): "n=1",
        (2.2, 0.395): "n=4",
    }
    missing = sorted(xy for xy, t in texts.items() if t.get_text() == "n/a")
    assert missing == [(1.2, 0.0), (1.8, 0.0)]  # kl's carol, original's bob
    for t in ax.texts:
        assert t.get_ha() == "center" and t.get_fontsize() == 6
        if t.get_text() == "n/a":
            assert (t.get_va(), t.get_rotation()) == ("bottom", 90)
    bands = []
    for band in ax.collections:
        if not isinstance(band, PolyCollection):
            continue  # the error bars
        x0, y0, x1, y1 = band.get_paths()[0].get_extents().extents
        bands.append((round(x0, 6), round(x1, 6), round(y0, 6), round(y1, 6)))
        assert band.get_zorder() == 0 and band.get_alpha() == 0.2
        assert to_hex(band.get_facecolor()[0]) == to_hex("grey")
    assert bands == [
        (-0.45, 0.45, -0.3125, 0.4375),  # alice: means 0.0625 ± 2 x 0.1875
        (0.55, 1.45, 0.125, 0.375),  # carol: the original's alone
    ]
    assert list(ax.get_xticks()) == [0, 1, 2]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["alice", "carol\n(forget)", "bob"]
    assert ax.get_xticklabels()[0].get_fontsize() == 8
    assert ax.get_ylabel() == "WaterDrum value (mean q)"
    assert ax.get_title() == "Per-owner WaterDrum values (± standard error)"
    zero = ax.get_lines()[-1]
    assert list(zero.get_ydata()) == [0, 0] and zero.get_linewidth() == 0.5
    assert to_hex(zero.get_color()) == "#000000"
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["null ±2 sd", "original", "kl"]
    assert legend.get_texts()[0].get_fontsize() == 8 and legend._loc == 6
    anchor = legend.get_bbox_to_anchor().transformed(ax.transAxes.inverted())
    assert (anchor.x0, anchor.y0) == pytest.approx((1.01, 0.5))


def test_per_owner_plot_widens_with_owners_and_models(tmp_path, figures):
    """1.1 inch per owner per three models (at least one), plus 2.5, at least 6 inches."""

    def model(level):
        owners = {f"o{j}": _owner_entry(0.1, 2, ci=(0.0, 0.2)) for j in range(4)}
        return WaterDrumResult(
            num_queries=8, num_scored=8, num_skipped=0, per_owner=owners, confidence=level
        )

    report.plot_per_owner({f"m{i}": model(0.9) for i in range(6)}, tmp_path / "six.png")
    assert figures["six"].get_size_inches() == pytest.approx((1.1 * 4 * 2 + 2.5, 4.4))
    (ax,) = figures["six"].axes
    assert ax.get_title() == "Per-owner WaterDrum values (90% CI)"
    widths = {round(p.get_width(), 6) for p in ax.patches}
    assert widths == {round(0.8 / 6, 6)}
    centres = sorted(p.get_x() + p.get_width() / 2 for p in ax.patches)[:6]
    assert centres == pytest.approx([(i - 2.5) * 0.8 / 6 for i in range(6)], abs=1e-9)
    report.plot_per_owner({"m": model(None)}, tmp_path / "one.png")
    assert figures["one"].get_size_inches() == pytest.approx((1.1 * 4 + 2.5, 4.4))
    (ax,) = figures["one"].axes
    assert [round(p.get_x(), 6) for p in ax.patches] == [-0.4, 0.6, 1.6, 2.6]  # one 0.8 bar each


def test_per_owner_null_bands_are_in_the_legend_when_the_first_owner_has_none(tmp_path, figures):
    """The legend names the null bands whichever owner has the first one; the bands lie
    under the bars (drawn after them, they would grey them over)."""
    owners = {
        "alice": _owner_entry(0.5, 2),
        "bob": _owner_entry(0.25, 2, null=(0.0, 0.125)),
        "carol": _owner_entry(0.125, 2, null=(0.0, 0.25)),
    }
    kl = WaterDrumResult(num_queries=6, num_scored=6, num_skipped=0, per_owner=owners)
    report.plot_per_owner({"kl": kl}, tmp_path / "p.png")
    (ax,) = figures["p"].axes
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    extents = [tuple(round(v, 6) for v in b.get_paths()[0].get_extents().extents) for b in bands]
    assert extents == [(0.55, -0.25, 1.45, 0.25), (1.55, -0.5, 2.45, 0.5)]  # bob's, carol's
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["null ±2 sd", "kl"]
    assert [b.get_label() == "null ±2 sd" for b in bands] == [True, False]  # named once
    bars = [patch for container in ax.containers for patch in getattr(container, "patches", ())]
    assert bars and all(b.get_zorder() == 0 < bar.get_zorder() for b in bands for bar in bars)


def test_roc_curves_are_the_true_and_false_positive_rates(tmp_path, figures):
    """Per curve: at each threshold (from above every value down to the lowest), the share of
    positive and of negative values at or above it, NaN left out; the first curve wide and
    pale, the next dashed then dotted over it; the chance diagonal; a legend that says so."""
    fig, ax = report.new_figure(4.0, 4.0)
    positive = [True, False, True, False, True]
    report.draw_roc(
        ax,
        {"a": [0.9, 0.7, 0.5, 0.3, math.nan], "b": [0.2, 0.4, 0.6, 0.8, 0.1], "c": [1, 2, 3, 4, 5]},
        positive,
        colors={"a": "red", "b": "blue"},
    )
    a, b, c, diagonal = ax.get_lines()
    assert list(a.get_xdata()) == [0, 0, 0.5, 0.5, 1] and list(a.get_ydata()) == [0, 0.5, 0.5, 1, 1]
    assert list(b.get_xdata()) == [0, 0.5, 0.5, 1, 1, 1]
    assert list(b.get_ydata()) == pytest.approx([0, 0, 1 / 3, 1 / 3, 2 / 3, 1])
    assert all(line.get_drawstyle() == "steps-post" for line in (a, b, c))
    assert (a.get_linewidth(), a.get_alpha(), a.get_zorder(), a.get_linestyle()) == (
        4.0,
        0.45,
        2,
        "-",
    )
    assert (b.get_linewidth(), b.get_zorder(), b.get_linestyle()) == (1.4, 3, "--")
    assert (c.get_linewidth(), c.get_zorder(), c.get_linestyle()) == (1.4, 4, ":")
    assert to_hex(a.get_color()) == to_hex("red") and to_hex(b.get_color()) == to_hex("blue")
    assert list(diagonal.get_xdata()) == [0, 1] and list(diagonal.get_ydata()) == [0, 1]
    assert diagonal.get_linestyle() == "--" and diagonal.get_linewidth() == 0.8
    assert to_hex(diagonal.get_color()) == to_hex("grey")
    assert ax.get_xlabel() == "false positive rate (forget queries)"
    assert ax.get_ylabel() == "true positive rate (retain queries)"
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["a", "b", "c"]
    assert (
        legend.get_title().get_text()
        == "where lines coincide, the dashed\none lies on the wide one"
    )
    assert legend.get_title().get_fontsize() == 7 and legend.get_texts()[0].get_fontsize() == 8
    assert legend._loc == 4  # lower right

    fig, ax = report.new_figure(4.0, 4.0)
    report.draw_roc(ax, {"only": [0.1, 0.2]}, np.array([False, True]))
    only = ax.get_lines()[0]
    assert only.get_linestyle() == "-" and only.get_linewidth() == 1.5  # a plain line
    assert list(only.get_xdata()) == [0, 0, 1] and list(only.get_ydata()) == [0, 1, 1]
    assert ax.get_legend().get_title().get_text() == ""


def test_plot_roc_reads_retain_queries_as_positive(tmp_path, figures):
    owners = {"alice": OwnerValue(2, 2, forget=False), "carol": OwnerValue(2, 2, forget=True)}
    model = WaterDrumResult(
        num_queries=4, num_scored=4, num_skipped=0, separability_auroc=0.75, per_owner=owners,
        query_values=(0.9, 0.2, 0.5, 0.7), query_owners=("alice", "carol", "alice", "carol"),
    )  # fmt: skip
    assert report.plot_roc(model.to_dict(), tmp_path / "roc.png", label="retrained") == (
        tmp_path / "roc.png"
    )
    fig = figures["roc"]
    (ax,) = fig.axes
    assert fig.get_size_inches() == pytest.approx((4.4, 4.2))
    assert ax.get_title() == "Separability (D1)"
    line = ax.get_lines()[0]
    assert line.get_label() == "retrained (AUROC 0.750)"
    assert to_hex(line.get_color()) == to_hex("tab:green")
    # thresholds inf, 0.9, 0.7, 0.5, 0.2: alice's 0.9 and 0.5 positive, carol's 0.7, 0.2 not
    assert list(line.get_xdata()) == [0, 0, 0.5, 0.5, 1] and list(line.get_ydata()) == [
        0,
        0.5,
        0.5,
        1,
        1,
    ]
    for missing in ("per_owner", "query_owners", "query_values"):
        with pytest.raises(ValueError, match="plot_roc needs 'retrained'"):
            report.plot_roc(
                dataclasses.replace(model, **{missing: None}), tmp_path / "x.png", label="retrained"
            )


def test_new_and_saved_figures(tmp_path):
    """A figure of one axes, or of ncols side by side, measurable before it is drawn; saved as
    a 120-dpi PNG cropped to what it holds."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    fig, ax = report.new_figure(3.0, 2.0)
    assert fig.get_size_inches() == pytest.approx((3.0, 2.0)) and fig.axes == [ax]
    assert isinstance(fig.canvas, FigureCanvasAgg)
    fig, axes = report.new_figure(3.0, 2.0, ncols=2)
    left, right = axes
    assert left.get_position().x1 < right.get_position().x0
    assert left.get_position().y0 == right.get_position().y0
    ax.plot([0, 1], [0, 1])
    path = report.save_figure(ax.figure, str(tmp_path / "f.png"))
    assert path == tmp_path / "f.png" and isinstance(path, Path)
    with Image.open(path) as image:
        assert image.info["dpi"] == pytest.approx((120, 120), abs=0.02)
        assert image.size != (360, 240)  # cropped


def test_model_colours_are_fixed_or_stable():
    assert report.model_color("Grad-Diff") == report.model_color("GRAD_DIFF") == "tab:red"
    assert report.model_color("original") == "#333333"
    other = report.model_color("My-Method")
    assert other in report.OTHER_COLORS and other == report.model_color("my_method")
    assert {report.model_color(f"method{i}") for i in range(40)} == set(report.OTHER_COLORS)


# --- write_report: what it writes and draws ----------------------------------------------------


@pytest.fixture
def drawn(monkeypatch):
    """write_report's plots and token views, recorded instead of drawn: ``{plot: (args,
    kwargs)}``; each returns the path it was given (the views: ``<stem>.html`` and ``.png``)."""
    calls = {}

    def stub(key):
        def draw(*args, **kwargs):
            calls[key] = (args, kwargs)
            return Path(args[1])

        return draw

    for key in ("benchmark", "curves", "per_owner", "roc", "audits"):
        monkeypatch.setattr(report.files, f"plot_{key}", stub(key))

    def views(views, out, **kwargs):
        calls["watermark_view"] = ((views, out), kwargs)
        return Path(out) / f"{kwargs['stem']}.html", Path(out) / f"{kwargs['stem']}.png"

    monkeypatch.setattr(report.files, "write_token_views", views)
    return calls


def _roc_ready(forget, retain, auroc=0.75, values=(0.9, 0.2)):
    """A model with both sets (the forget value's interval ± 0.125) and the details of a ROC."""
    return WaterDrumResult(
        forget=SetValue(forget, ci_low=forget - 0.125, ci_high=forget + 0.125),
        retain=SetValue(retain),
        separability_auroc=auroc,
        confidence=0.9, num_queries=len(values), num_scored=len(values), num_skipped=0,
        per_owner={"alice": OwnerValue(1, 1, forget=False, value=0.5), "carol": OwnerValue(1, 1, forget=True, value=0.25)},
        query_values=values, query_owners=("alice", "carol")[: len(values)],
    )  # fmt: skip


def _view(label):
    from waterdrum_hf.report.token_view import TokenView

    return TokenView(tokens=("a", "b"), terms=(math.nan, 0.5), score=0.5, scale=1.0, owner="carol", label=label)  # fmt: skip


def test_write_report_writes_each_file_and_draws_what_applies(tmp_path, drawn):
    """Two runs, audits and token views into a folder not yet made: report.json (everything but
    the token views, every run flat, their comparison), audits.json, the views (one column per
    model), report.md (the default title, every plot), and their paths in that order; the
    benchmark shows the means over the runs, the per-owner plot the first run, the ROC the
    retrained model though it comes second; a second write into the same folder works."""
    from waterdrum_hf.audits import AuditResults

    kl, retrained, original = (
        _roc_ready(0.25, 0.5),
        _roc_ready(0.125, 0.625, auroc=0.5),
        _roc_ready(0.5, 0.75),
    )
    kl_again = dataclasses.replace(kl, forget=dataclasses.replace(kl.forget, value=0.5))
    audits = AuditResults(models={"kl": {"before": kl, "int8": retrained}})
    views = [_view(f"{s} set, {m} model") for m in ("original", "kl") for s in ("forget", "retain")]
    data = {
        "models": {"kl": kl, "retrained": retrained, "original": original},
        "runs": {"kl": [kl.to_dict(), kl_again.to_dict()], "retrained": [retrained] * 2, "original": [original] * 2},
        "curves": {"kl": [{"step": 2, "forget": 0.25}]},
        "curve_sampling": {"queries": 2, "num_samples": 1, "max_new_tokens": 8},
        "audits": audits,
        "token_views": views,
    }  # fmt: skip
    out = tmp_path / "new" / "folder"
    written = report.write_report(data, out)
    names = ["report.json", "audits.json", "watermark_view.html", "report.md", "benchmark.png"]
    names += ["curves.png", "per_owner.png", "roc.png", "audits.png", "watermark_view.png"]
    assert written == [out / name for name in names]

    saved = json.loads((out / "report.json").read_text())
    assert set(saved) == {"models", "runs", "curves", "curve_sampling", "audits", "comparison"}
    assert saved["models"]["kl"] == json.loads(report.json_text(kl.to_dict()))
    assert [r["forget"] for r in saved["runs"]["kl"]] == [0.25, 0.5]
    assert [r["forget"] for r in saved["runs"]["retrained"]] == [0.125, 0.125]
    assert saved["comparison"]["kl/forget"] == 0.375
    assert json.loads((out / "audits.json").read_text()) == saved["audits"]
    assert saved["audits"]["models"]["kl"]["int8"]["forget"] == 0.125

    (shown, path), _ = drawn["benchmark"]
    assert path == out / "benchmark.png"
    low, high = stats.t.interval(0.95, 1, loc=0.375, scale=0.125)  # two runs: 0.25 and 0.5
    low, high = max(low, -1.0), min(high, 1.0)  # cut to the range a value can take
    assert (shown["kl"].forget.value, shown["kl"].forget.ci_low) == (0.375, pytest.approx(low))
    assert shown["kl"].forget.ci_high == pytest.approx(high)
    assert drawn["curves"] == (
        (data["curves"], out / "curves.png"),
        {"note": "Each point scores a subsample: 2 queries x 1 sample x 8 tokens, so its values "
         "differ from the table's."},
    )  # fmt: skip
    (first_run, path), _ = drawn["per_owner"]
    assert path == out / "per_owner.png" and first_run["kl"] == kl
    assert drawn["roc"] == ((retrained, out / "roc.png"), {"label": "retrained"})
    (drawn_audits, path), _ = drawn["audits"]
    assert path == out / "audits.png" and drawn_audits.audits() == ["int8"]
    (drawn_views, path), options = drawn["watermark_view"]
    assert drawn_views == views and path == out
    assert options == {
        "stem": "watermark_view",
        "title": "The watermark, token by token",
        "columns": 2,
    }
    assert type(options["columns"]) is int  # check_positive_int refuses 2.0
    text = (out / "report.md").read_text()
    assert text.startswith("# WaterDrum report\n\n")
    for key in ("benchmark", "curves", "per_owner", "roc", "audits", "watermark_view"):
        assert f"\n![{key}]({key}.png)\n" in text
    section = "\n".join(report.audit_section(audits))
    first = "The audits ran on the first of the 2 training runs."  # the report holds 2 runs
    assert f"\n\n## Audits: does the unlearning hold?\n\n{first}\n\n{section}\n\n## How the" in text

    report.write_report({"models": {"kl": kl}}, out, title="Again")  # the folder exists
    assert (out / "report.md").read_text().startswith("# Again\n\n")


def test_write_report_draws_only_what_the_results_hold(tmp_path, drawn):
    """One run: the benchmark shows the models as they are (intervals kept); no retrained
    model: the ROC is the first model's, and none when that one lacks an AUROC or per-query
    values; no model with both sets: no benchmark; no per-owner values: no per-owner plot;
    audits without a perturbation: audits.json but no audit plot."""
    from waterdrum_hf.audits import AuditResults

    npo, kl = _roc_ready(0.25, 0.5), _roc_ready(0.5, 0.75)
    written = report.write_report({"models": {"npo": npo, "kl": kl}}, tmp_path)
    assert [p.name for p in written] == ["report.json", "report.md", "benchmark.png", "per_owner.png", "roc.png"]  # fmt: skip
    (shown, _), _ = drawn["benchmark"]
    assert (shown["npo"].forget.ci_low, shown["npo"].forget.ci_high) == (0.125, 0.375)
    assert drawn.pop("roc") == ((npo, tmp_path / "roc.png"), {"label": "npo"})
    no_auroc = dataclasses.replace(npo, separability_auroc=None)
    no_values = _roc_ready(0.25, 0.5, values=())
    for first in (no_auroc, no_values):
        report.write_report({"models": {"npo": first, "kl": kl}}, tmp_path / "no_roc")
        assert "roc" not in drawn
    assert report.read_report(tmp_path / "no_roc" / "report.json")["models"]["kl"] == kl

    drawn.clear()
    forget_only = WaterDrumResult(forget=SetValue(0.5), num_queries=1, num_scored=1, num_skipped=0)
    before = AuditResults(models={"x": {"before": forget_only}})
    written = report.write_report(
        {"models": {"x": forget_only}, "audits": before}, tmp_path / "bare"
    )
    assert [p.name for p in written] == ["report.json", "audits.json", "report.md"]
    assert not drawn
    assert json.loads((tmp_path / "bare" / "audits.json").read_text())["models"]["x"]["before"]["forget"] == 0.5  # fmt: skip


def test_json_text_is_strict_indented_json():
    """NaN and infinities become null at any depth (in lists, tuples and mappings), numpy
    scalars plain numbers, keys strings; two spaces of indent."""
    value = {
        "a": np.float32(0.5),
        1: [np.int64(3), math.nan, (-math.inf, "s")],
        "b": {"c": math.inf},
    }
    assert report.json_text(value) == (
        '{\n  "a": 0.5,\n  "1": [\n    3,\n    null,\n    [\n      null,\n      "s"\n    ]\n  ],\n'
        '  "b": {\n    "c": null\n  }\n}'
    )
    assert report.json_text(np.float64("nan")) == "null"


def test_markdown_of_an_original_alone_with_nan_intervals():
    """Without a retrained model no paragraph on original and retrained; an interval whose ends
    are NaN is written as nan (lower case, like every other number of the table)."""
    nan = math.nan
    original = WaterDrumResult(
        forget=SetValue(0.5, ci_low=nan, ci_high=nan), separability_auroc=0.5,
        separability_auroc_ci_low=nan, separability_auroc_ci_high=nan,
        confidence=0.9, num_queries=2, num_scored=2, num_skipped=0,
    )  # fmt: skip
    lines = report.markdown({"models": {"original": original}}, {}, title="T").split("\n")
    assert lines[2:6] == [
        f"{SUMMARY_START} A value of about 0 means the owner's watermark does not show at all; "
        "close to 1, strongly.",
        "",
        "## Results",
        "",
    ]
    assert lines[8] == "| original | +0.500 | 0.500 | [+nan, +nan] | [nan, nan] | 2 | 2 / 0 |"


# --- plots: the details the mutation gate asked about ------------------------------------------


def _pixel_axes():
    """An axes at 72 dpi (1 point = 1 pixel) whose data units are pixels: frame 108 to 324."""
    fig, ax = report.new_figure(6.0, 6.0)
    fig.set_dpi(72)
    ax.set_position([0.25, 0.25, 0.5, 0.5])
    ax.set_xlim(0, 216)
    ax.set_ylim(0, 216)
    return ax


def _placed(points):
    ax = _pixel_axes()
    report.label_points(ax, points)
    return {t.get_text(): t.xyann for t in ax.texts}


def test_label_points_keeps_names_off_each_markers_5_point_radius():
    """A name (padded 1.5 px) must not touch any marker's box (±5 points around it): a marker
    whose box edge reaches the first place sends the name to the next one; one just clear of
    it (by 0.5 px) leaves the name where it was."""
    ax = _pixel_axes()
    report.label_points(ax, {"name": (100.0, 100.0)})
    (text,) = ax.texts
    renderer = ax.figure.canvas.get_renderer()
    text.get_window_extent(renderer)
    box = Text.get_window_extent(text, renderer).transformed(ax.transData.inverted())
    assert (box.x0, box.y0 + box.y1) == (108.0, 200.0)  # 8 px right, centred on y = 100
    r, p = 5.0, (100.0, 100.0)
    mid_x = (box.x0 + box.x1) / 2
    moves = {  # marker: its box edge reaches the padded name by 0.5 px (right: by r / 146)
        "right": (box.x1 + 1.5 + r * (1 - 0.5 / 73), 100.0),
        "left": (box.x0 - 1.5 - r + 0.5, 100.0),
        "above": (mid_x, box.y1 + 1.5 + r - 0.5),
        "below": (mid_x, box.y0 - 1.5 - r + 0.5),
    }
    for where, q in moves.items():
        assert _placed({"name": p, "q": q})["name"] == (-8, 0), where
    stays = {"right": (box.x1 + 2 + r, 100.0), "above": (mid_x, box.y1 + 2 + r)}
    for where, q in stays.items():
        assert _placed({"name": p, "q": q})["name"] == (8, 0), where
    # a padded name exactly on the frame's edge is inside (the frame: 0 to 216 here)
    w, half = box.x1 - box.x0, (box.y1 - box.y0) / 2
    assert _placed({"name": (216 - 1.5 - w - 8, 100.0)})["name"] == (8, 0)  # right edge
    left = (1.5 + w + 8, 100.0)  # a marker 20 px right of it takes the first place
    assert _placed({"name": left, "q": (left[0] + 20, 100.0)})["name"] == (-8, 0)  # left edge
    assert _placed({"name": (100.0, 216 - 1.5 - half)})["name"] == (8, 0)  # top edge
    assert _placed({"name": (100.0, 1.5 + half)})["name"] == (8, 0)  # bottom edge


def test_error_bars_need_a_value_and_both_ends():
    error_bars = report.plots.error_bars
    assert error_bars(SetValue(0.5, ci_high=0.75)) is None
    assert error_bars(SetValue(0.5, ci_low=0.25)) is None
    assert error_bars(SetValue(None, ci_low=0.25, ci_high=0.75)) is None
    assert error_bars(SetValue(0.5, ci_low=0.25, ci_high=0.625)).tolist() == [[0.25], [0.125]]


def test_draw_benchmark_skips_a_model_without_both_values_and_caps_its_bars():
    """A model without a retain value is skipped, not the end of the list; the error bars have
    2-point caps at both ends and no data marker of their own (the scatter marks the point)."""
    models = _bench_models()
    fig, ax = report.new_figure(5.0, 4.0)
    drawn = {name: models[name] for name in ("ga", "kl", "original")}
    points = report.draw_benchmark(ax, drawn, "T")
    assert points == {"kl": (0.25, 0.5), "original": (0.5, 0.75), "ideal": (0.25, 0.75)}
    (container,) = ax.containers  # the original's forget interval
    data_line, caps, _ = container.lines
    assert data_line is None
    ends = sorted(x for cap in caps for x in cap.get_xdata())
    assert ends == [0.25, 0.625] and all(cap.get_markersize() == 4 for cap in caps)
    assert len(ax.get_lines()) == 2  # the two caps: no line of data markers


def test_draw_roc_styles_two_and_four_curves_and_reads_labels_and_missing_values():
    """Two curves are already several (wide first, dashed second, legend title); the fourth
    is dash-dotted; 0/1 labels read as booleans; None (strict JSON's NaN) is left out."""
    fig, ax = report.new_figure(4.0, 4.0)
    report.draw_roc(ax, {"a": [0.9, 0.2], "b": [0.8, 0.1]}, [True, False])
    a, b, _ = ax.get_lines()
    assert (a.get_linewidth(), a.get_alpha(), a.get_zorder()) == (4.0, 0.45, 2)
    assert (b.get_linewidth(), b.get_linestyle(), b.get_zorder()) == (1.4, "--", 3)
    assert ax.get_legend().get_title().get_text().startswith("where lines coincide")

    fig, ax = report.new_figure(4.0, 4.0)
    report.draw_roc(ax, {k: [0.9, 0.2] for k in "abcd"}, [True, False])
    assert [line.get_linestyle() for line in ax.get_lines()[:4]] == ["-", "--", ":", "-."]

    fig, ax = report.new_figure(4.0, 4.0)
    report.draw_roc(ax, {"a": [0.9, 0.7, 0.5, 0.3]}, np.array([1, 0, 1, 0]))
    line = ax.get_lines()[0]
    assert list(line.get_xdata()) == [0, 0, 0.5, 0.5, 1]
    assert list(line.get_ydata()) == [0, 0.5, 0.5, 1, 1]

    fig, ax = report.new_figure(4.0, 4.0)
    report.draw_roc(ax, {"a": [0.9, None, 0.5, 0.3]}, [True, False, True, False])
    line = ax.get_lines()[0]  # thresholds inf, 0.9, 0.5, 0.3 over 0.9+, 0.5+ and 0.3-
    assert list(line.get_xdata()) == [0, 0, 0, 1] and list(line.get_ydata()) == [0, 0.5, 1, 1]


def test_a_method_is_a_circle_whatever_the_default_scatter_marker():
    """A method's point is an "o" even where matplotlib is set to draw scatter points with
    another marker by default (``rcParams["scatter.marker"]``)."""
    import matplotlib
    from matplotlib.markers import MarkerStyle

    with matplotlib.rc_context({"scatter.marker": "x"}):
        fig, ax = report.new_figure(5.0, 4.0)
        report.draw_benchmark(ax, {"kl": _bench_models()["kl"]}, "T")
    (points,) = [c for c in ax.collections if c.get_label() == "kl"]
    circle = MarkerStyle("o")
    expected = circle.get_path().transformed(circle.get_transform())
    np.testing.assert_allclose(points.get_paths()[0].vertices, expected.vertices)


def test_the_ideal_point_is_drawn_over_the_null_band_and_under_the_models():
    """The layers, bottom to top: the forget null band, the error bars and the ideal point, the
    models' points (a point hidden under the band would read as missing)."""
    from matplotlib.patches import Rectangle

    fig, ax = report.new_figure(5.0, 4.0)
    drawn = {name: _bench_models()[name] for name in ("original", "retrained", "kl")}
    report.draw_benchmark(ax, drawn, "T")
    (band,) = [p for p in ax.patches if isinstance(p, Rectangle)]
    (ideal,) = [c for c in ax.collections if c.get_label() == "ideal"]
    models = [c for c in ax.collections if c.get_label() in drawn]
    bars = [line for container in ax.containers for line in container.lines[2]]
    assert band.get_zorder() < ideal.get_zorder() == 2
    assert bars and all(bar.get_zorder() == 2 for bar in bars)
    assert len(models) == 3 and all(m.get_zorder() == 3 for m in models)


@pytest.mark.parametrize(
    ("p_value", "null_keys", "shown"),
    [
        (1 / 200, 199, "<= 0.005 (the smallest 199 null keys can give)"),
        (1 / 21, 20, "<= 0.048 (the smallest 20 null keys can give)"),
        (2 / 21, 20, "0.095"),
        (3.2e-08, None, "3.2e-08"),
        (0.214285, None, "0.21"),
        (0.00004, 0, "4e-05"),
    ],
)
def test_a_p_value_is_shown_at_its_precision_or_as_its_floor(p_value, null_keys, shown):
    """Never "0.0000": two significant digits, or the floor 1/(1 + K) an empirical null of K
    keys sets, named as such."""
    from waterdrum_hf.report.formatting import p_value_text

    assert p_value_text(p_value, null_keys) == shown
