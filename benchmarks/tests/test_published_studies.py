"""The committed robustness, dilution and capacity studies are what their scripts write: each
``results.md`` is the script's own Markdown of the committed ``results.json``, and the summary
in that JSON is the script's summary of the per-seed rows beside it (no hand edits, no numbers
from another run)."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from saved_figures import drawn
from scipy import stats

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def as_json(value: object) -> str:
    """One spelling for comparing results (NaN equals NaN; tuples are lists)."""
    return json.dumps(value, sort_keys=True)


@pytest.mark.parametrize("name", ["capacity", "dilution", "robustness"])
def test_committed_study_is_the_scripts_output(name, request):
    folder = BENCHMARKS / "results" / name
    if not (folder / "results.json").exists():
        pytest.fail(f"{folder}/results.json is missing: run python benchmarks/{name}.py")
    module = request.getfixturevalue(name)
    results = json.loads((folder / "results.json").read_text())
    assert "--quick" not in results["command"]  # the full study, not its smoke test
    if name == "dilution":
        per_seed = {int(seed): values for seed, values in results["per_seed"].items()}
        assert len(per_seed) >= 3
        summary = module.summarise(per_seed)
    else:
        assert len(results["plan"]["seeds"]) >= 3
        summary = module.summarise(results["rows"])
    assert as_json(summary) == as_json(results["summary"])
    assert (folder / "results.md").read_text() == module.markdown(results)


# ---------------------------------------------------------------------------------------------
# The studies' pure parts: what turns their rows into the committed summaries, tables and plots


def t_interval(values: list[float]) -> tuple[float, float, float]:
    """Mean and scipy's 95 % Student's t interval."""
    from scipy import stats

    array = np.asarray(values, dtype=float)
    low, high = stats.t.interval(0.95, len(array) - 1, loc=array.mean(), scale=stats.sem(array))
    return float(array.mean()), float(low), float(high)


def test_robustness_plans(robustness):
    """--quick: one seed, strengths 0 and 0.5; the full run: seeds 0..N-1, every strength."""
    assert robustness.Plan.of(True, 3) == robustness.Plan(True, (0,), (0.0, 0.5))
    full = robustness.Plan.of(False, 2)
    assert full == robustness.Plan(False, (0, 1), (0.0, 0.1, 0.2, 0.3, 0.5))
    assert full.schemes == ("waterfall", "kgw") and full.quick is False


def test_robustness_attack_grid_has_the_unedited_text_once(robustness):
    from waterdrum_hf import attacks

    names = attacks.names()
    assert robustness.attack_grid((0.0, 0.2, 0.5)) == [("none", 0.0)] + [
        (a, s) for a in names for s in (0.2, 0.5)
    ]
    assert robustness.attack_grid((0.3,)) == [(a, 0.3) for a in names]


def test_robustness_attacks_every_sample_and_keeps_each_querys_samples(robustness):
    """All samples edited in one call (one seed over the flat list), then regrouped by query:
    a query with no samples stays empty."""
    from waterdrum_hf import attacks

    samples = [["one two three four", "five six"], [], ["seven eight nine", "ten", "eleven"]]
    flat = [t for s in samples for t in s]
    edited = attacks.apply(flat, "deletion", 0.5, 3)
    got = robustness.attacked(samples, "deletion", 0.5, 3, {})
    assert got == [edited[:2], [], edited[2:]]
    assert robustness.attacked(samples, "none", 0.5, 3, {}) is samples
    source = ["pasted words from an owner", "another unwatermarked passage"]
    pasted = attacks.apply(flat, "copy_paste", 0.5, 3, source=source)
    got = robustness.attacked(samples, "copy_paste", 0.5, 3, {"source": source})
    assert got == [pasted[:2], [], pasted[2:]]  # the attack's inputs reach it


def test_robustness_detected_share_counts_p_below_alpha_on_the_named_side(robustness):
    from types import SimpleNamespace

    def owner(forget: bool, p: float | None) -> SimpleNamespace:
        return SimpleNamespace(forget=forget, p_value=p)

    alpha = robustness.ALPHA
    result = SimpleNamespace(
        per_owner={
            "a": owner(True, alpha / 2),
            "b": owner(True, alpha),  # not below alpha
            "c": owner(False, None),  # no p-value: not detected
            "d": owner(False, 0.0),
            "e": owner(False, 0.5),
        }
    )
    assert robustness.detected_share(result, None) == pytest.approx(2 / 5)
    assert robustness.detected_share(result, True) == pytest.approx(1 / 2)
    assert robustness.detected_share(result, False) == pytest.approx(1 / 3)
    assert math.isnan(robustness.detected_share(SimpleNamespace(per_owner={}), None))


def robustness_row(attack: str, strength: float, seed: int, value: float | None) -> dict:
    row = {column: value for column in ("original_forget", "original_retain",
                                        "retrained_forget", "retrained_retain")}  # fmt: skip
    row |= {"auroc": value, "detected_original": value, "detected_retain": value,
            "false_forget": value, "skipped": 2 * seed}  # fmt: skip
    return {"scheme": "kgw", "attack": attack, "strength": strength, "seed": seed, **row}


def test_robustness_summary_is_the_t_interval_over_seeds_clipped_to_its_scale(robustness):
    """Mean and 95 % t-interval (scipy) of each column per cell; shares and AUROCs clipped to
    [0, 1], counts at 0; a missing value (None, NaN) left out; one finite seed: no interval;
    none: NaN, without a warning."""
    rows = [
        robustness_row("none", 0.0, 0, 0.99),
        robustness_row("none", 0.0, 1, 0.7),
        robustness_row("none", 0.0, 2, None),  # an AUROC without both sides
        robustness_row("deletion", 0.5, 0, 0.4),
        robustness_row("deletion", 0.5, 1, math.nan),
        robustness_row("insertion", 0.5, 0, math.nan),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        summary = robustness.summarise(rows)
    assert [(e["scheme"], e["attack"], e["strength"]) for e in summary] == [
        ("kgw", "none", 0.0), ("kgw", "deletion", 0.5), ("kgw", "insertion", 0.5),
    ]  # fmt: skip
    none, deletion, insertion = summary
    mean, low, high = t_interval([0.99, 0.7])
    assert (none["original_forget"]["low"], none["original_forget"]["high"]) == (
        pytest.approx(low),
        pytest.approx(high),
    )
    assert none["original_forget"]["mean"] == pytest.approx(mean)
    assert none["auroc"] == {"mean": pytest.approx(mean), "low": 0.0, "high": 1.0}
    assert none["detected_original"]["high"] == 1.0 and none["false_forget"]["low"] == 0.0
    skipped = t_interval([0, 2, 4])
    assert none["skipped"] == {"mean": 2.0, "low": 0.0, "high": pytest.approx(skipped[2])}
    assert deletion["auroc"]["mean"] == 0.4
    assert math.isnan(deletion["auroc"]["low"]) and math.isnan(deletion["auroc"]["high"])
    assert all(math.isnan(v) for v in insertion["original_retain"].values())


def test_robustness_format_row_and_cell(robustness):
    values = {"original_forget": 0.1234, "original_retain": -0.05, "retrained_forget": 0.0,
              "retrained_retain": 1.0, "auroc": 0.9876, "detected_original": 0.5,
              "detected_retain": 1.0, "false_forget": 0.0, "skipped": 3}  # fmt: skip
    assert robustness.format_row(values) == (
        "original_forget +0.123, original_retain -0.050, retrained_forget +0.000, "
        "retrained_retain +1.000, auroc 0.988, detected_original 0.50, detected_retain 1.00, "
        "false_forget 0.00, skipped 3.0"
    )
    assert robustness.cell({"mean": 0.5, "low": math.nan, "high": math.nan}, "{:.2f}") == "0.50"
    assert robustness.cell({"mean": 0.5, "low": 0.25, "high": 0.75}, "{:.1f}") == "0.5 [0.2, 0.8]"


def robustness_results(schemes: tuple[str, ...], with_none: bool) -> dict:
    """A summary of every attack at 0.2 and 0.5 (and unedited), intervals mean -0.1/+0.2 (none
    for paraphrase)."""
    from waterdrum_hf import attacks

    cells = [("none", 0.0)] if with_none else []
    cells += [(a, s) for a in attacks.names() for s in (0.2, 0.5)]
    summary = []
    for i, scheme in enumerate(schemes):
        for j, (attack, strength) in enumerate(cells):
            entry: dict[str, Any] = {"scheme": scheme, "attack": attack, "strength": strength}
            for k, column in enumerate(COLUMNS):
                mean = 0.1 * i + 0.01 * j + 0.001 * k
                half = (math.nan, math.nan) if attack == "paraphrase" else (0.1, 0.2)
                entry[column] = {"mean": mean, "low": mean - half[0], "high": mean + half[1]}
            summary.append(entry)
    return {
        "plan": {"quick": False, "seeds": [0, 1], "strengths": [0.0, 0.2, 0.5],
                 "schemes": list(schemes)},
        "alpha": 0.01, "rows": [], "summary": summary, "seconds": 600.0,
        "machine": "x86_64, Linux", "command": "python benchmarks/robustness.py",
    }  # fmt: skip


COLUMNS = ("original_forget", "original_retain", "retrained_forget", "retrained_retain",
           "auroc", "detected_original", "detected_retain", "false_forget", "skipped")  # fmt: skip


@pytest.mark.parametrize("schemes", [("waterfall", "kgw"), ("kgw",)])
def test_robustness_plot_draws_each_cells_mean_and_interval(
    robustness, tmp_path, monkeypatch, schemes
):
    """A row of panels per scheme (D1 AUROC, owners detected on the original, its retain
    value) against strength, a line per attack from the unedited cell, error bars to the
    interval's ends (none without one); shares on the whole [0, 1] scale; 13 x 3.6 inches per
    scheme at 120 dpi."""
    from waterdrum_hf import attacks

    with_none = len(schemes) == 2
    results = robustness_results(schemes, with_none)
    figure, size = drawn(monkeypatch, lambda p: robustness.plot(results, p), tmp_path / "r.png")
    assert size == (1560, 432 * len(schemes))
    axes = figure.axes
    assert axes[0].get_position().x0 < 0.1  # laid out tight (the default margin is 0.125)
    assert len(axes) == 3 * len(schemes)
    headings = ("D1 AUROC (retrained)", "owners detected, original (p < 0.01)",
                "original: retain")  # fmt: skip
    panels = ("auroc", "detected_original", "original_retain")
    for index, ax in enumerate(axes):
        scheme, column = schemes[index // 3], panels[index % 3]
        assert ax.get_title() == f"{scheme}: {headings[index % 3]}"
        assert ax.title.get_fontsize() == 9
        assert ax.get_xlabel() == "attack strength (share of words)"
        assert ax.xaxis.get_gridlines()[0].get_alpha() == 0.3
        if column != "original_retain":
            assert ax.get_ylim() == pytest.approx((-0.03, 1.03))
        else:
            assert ax.get_ylim()[1] < 1.0
        assert [c.get_label() for c in ax.containers] == list(attacks.names())
        entries = [e for e in results["summary"] if e["scheme"] == scheme]
        for container, attack in zip(ax.containers, attacks.names(), strict=True):
            points = [e for e in entries if e["attack"] in (attack, "none")]
            line, caps, (bars,) = container.lines
            assert line.get_marker() == "o" and caps[0].get_markersize() == 6
            assert line.get_xdata().tolist() == [p["strength"] for p in points]
            assert line.get_ydata().tolist() == [p[column]["mean"] for p in points]
            for segment, p in zip(bars.get_segments(), points, strict=True):
                value = p[column]
                ends = (value["low"], value["high"])
                if math.isnan(value["low"]):
                    ends = (value["mean"], value["mean"])
                assert segment[:, 1].tolist() == pytest.approx(ends)
    legend = axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == list(attacks.names())
    assert legend.get_texts()[0].get_fontsize() == 8
    assert all(ax.get_legend() is None for ax in axes[1:])


def test_robustness_write_puts_the_json_table_and_plot_in_the_folder(robustness, tmp_path, capsys):
    results = robustness_results(("kgw",), with_none=True)
    out = tmp_path / "new" / "robustness"
    robustness.write(results, out)
    robustness.write(results, out)  # again, into the folder it made
    assert as_json(json.loads((out / "results.json").read_text())) == as_json(results)
    assert (out / "results.json").read_text().endswith("}\n")
    assert (out / "results.json").read_text().startswith('{\n "plan": {\n  "quick": false,')
    assert (out / "results.md").read_text() == robustness.markdown(results)
    assert (out / "robustness.png").read_bytes().startswith(b"\x89PNG")
    assert (
        capsys.readouterr().out == 2 * f"wrote {out}/results.md, results.json and robustness.png\n"
    )


def test_robustness_markdown_states_the_run(robustness):
    text = robustness.markdown(robustness_results(("kgw",), with_none=True))
    assert "Command: `python benchmarks/robustness.py` (10.0 minutes on x86_64, Linux)." in text
    assert "Seeds: 0, 1 (each" in text and "p < 0.01 under the analytic null." in text
    assert "\n## kgw\n" in text
    assert "| none | 0.0 | +0.000 [-0.100, +0.200] | +0.001 [-0.099, +0.201] |" in text


def test_dilution_summary_and_cells(dilution):
    """Mean and 95 % Student's t interval over seeds (sd with ddof 1) per measure and scheme,
    cut to the measure's range (an AUROC to [0, 1], R² at 1); a missing value (an undefined D2:
    None) makes the cell NaN, shown as a dash; one seed: the value alone."""
    schemes = list(dilution.PAPER)
    per_seed = {
        seed: {"auroc": {s: 0.96 - 0.01 * seed for s in schemes},
               "r2": {s: (None if seed == 1 and s == "kgw" else 0.5 + 0.2 * seed)
                      for s in schemes}}
        for seed in (0, 1, 2)
    }  # fmt: skip
    summary = dilution.summarise(per_seed)
    low, high = stats.t.interval(0.95, 2, loc=0.95, scale=stats.sem([0.96, 0.95, 0.94]))
    assert summary["auroc"]["its"] == {
        "mean": pytest.approx(0.95), "low": pytest.approx(low), "high": pytest.approx(high), "n": 3,
    }  # fmt: skip
    wide = stats.t.interval(0.95, 2, loc=0.7, scale=stats.sem([0.5, 0.7, 0.9]))
    assert wide[1] > 1 and summary["r2"]["its"]["high"] == 1.0  # cut where R² ends
    assert summary["r2"]["its"]["low"] == pytest.approx(wide[0])
    assert math.isnan(summary["r2"]["kgw"]["mean"])
    assert dilution.fmt(summary["r2"]["kgw"], 3) == "–"
    assert dilution.fmt(summary["auroc"]["its"], 3) == f"0.950 [{low:.3f}, {high:.3f}]"
    assert dilution.fmt({"mean": 0.5, "low": 0.5, "high": 0.5, "n": 1}, 1) == "0.500"


def test_dilution_markdown_with_one_seed_shows_values_alone(dilution):
    one = {s: 0.9 for s in dilution.PAPER}
    results = {
        "summary": dilution.summarise({0: {"auroc": one, "r2": one}}),
        "config": {"seeds": [0]}, "paper": dilution.PAPER, "seconds": 600.0,
        "machine": "x86_64, Linux", "command": "python benchmarks/dilution.py --quick",
    }  # fmt: skip
    text = dilution.markdown(results)
    assert "(10.0 minutes on x86_64, Linux). The data owners' watermark: Waterfall; 1 seed(s);" in (
        text
    )
    assert "| KGW (gamma 0.5, delta 2) | 0.900 | 0.944 | 0.900 | 0.948 |" in text
    assert "| Unigram (gamma 0.5, delta 2) | 0.900 | – | 0.900 | – |" in text
