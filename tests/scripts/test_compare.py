"""`waterdrum compare`: the reports of several runs in, each model's mean over its runs with its
interval over runs and the closest-method verdict out."""

from __future__ import annotations

import json

import pytest

from waterdrum_hf import SetValue, WaterDrumResult, compare_seeds
from waterdrum_hf.scripts import main

RUNS = {  # forget, retain of each model in runs (seeds) 0, 1, 2
    "original": [(0.74, 0.66), (0.71, 0.64), (0.73, 0.65)],
    "retrained": [(0.04, 0.69), (0.05, 0.70), (0.02, 0.68)],
    "kl": [(0.29, 0.35), (0.21, 0.30), (0.25, 0.40)],
    "npo": [(0.10, 0.62), (0.12, 0.60), (0.11, 0.63)],
}


def flat(forget, retain):
    return WaterDrumResult(
        forget=SetValue(forget),
        retain=SetValue(retain),
        num_queries=60,
        num_scored=240,
        num_skipped=0,
    ).to_dict()


def write_score_reports(folder):
    """One report per (model, run), as `waterdrum score --name MODEL --output-dir DIR` writes them;
    returns the folders in the order: every model's run 0, then run 1, then run 2."""
    folders = []
    for run in range(3):
        for model, values in RUNS.items():
            out = folder / f"{model}-seed{run}"
            out.mkdir()
            report = {"models": {model: flat(*values[run])}, "settings": {"seed": run}}
            (out / "report.json").write_text(json.dumps(report))
            folders.append(str(out))
    return folders


def test_compare_reads_each_models_runs_in_order_and_prints_means_and_the_verdict(tmp_path, capsys):
    folders = write_score_reports(tmp_path)
    output = tmp_path / "comparison.json"
    assert main(["compare", "--reports", *folders, "--output-file", str(output)]) == 0
    printed = capsys.readouterr().out
    expected = compare_seeds({m: [flat(*v) for v in values] for m, values in RUNS.items()})
    assert json.loads(output.read_text()) == pytest.approx(expected.to_dict())
    kl = expected.values["kl"]["forget"]
    assert f"{kl.value:+.3f} [{kl.ci_low:+.3f}, {kl.ci_high:+.3f}]" in printed
    assert expected.closest.names == ("npo",)  # separated from kl in every run
    assert "Closest to retraining: npo" in printed and "over 3 runs" in printed
    # A demo report that holds every run counts as all of them.
    demo = {
        "models": {m: flat(*v[0]) for m, v in RUNS.items()},
        "runs": {m: [flat(*x) for x in v] for m, v in RUNS.items()},
    }
    (tmp_path / "demo.json").write_text(json.dumps(demo))
    assert main(["compare", "--reports", str(tmp_path / "demo.json")]) == 0
    assert f"{kl.value:+.3f} [{kl.ci_low:+.3f}, {kl.ci_high:+.3f}]" in capsys.readouterr().out


def test_compare_of_single_runs_names_no_winner(tmp_path, capsys):
    folders = write_score_reports(tmp_path)[:4]  # run 0 of each model
    assert main(["compare", "--reports", *folders]) == 0
    printed = capsys.readouterr().out
    assert "Closest to retraining (1 run): npo" in printed
    # Reports without a null: detection cannot be said, and the line says so.
    assert "npo: its report has no null, so whether the forgotten owners' watermark is" in printed


@pytest.mark.parametrize(("p_value", "status"), [(0.004, "still detected"), (0.2, "not detected")])
def test_a_one_run_verdict_says_whether_the_closest_method_is_still_detected(
    tmp_path, capsys, p_value, status
):
    """One run cannot rank methods, and the closest one may still carry the watermark: the
    line beside the verdict reads the run's forget p-value against the detection level."""
    folders = write_score_reports(tmp_path)[:4]
    npo = tmp_path / folders[3] / "report.json"
    report = json.loads(npo.read_text())
    report["models"]["npo"] |= {"forget_p_value": p_value, "forget_null_mean": 0.0}
    npo.write_text(json.dumps(report))
    assert main(["compare", "--reports", *folders]) == 0
    printed = capsys.readouterr().out
    assert (
        f"npo: the forgotten owners' watermark is {status} in its run (forget +0.100, "
        f"p = {p_value:.3g}; detected at p <= 0.05)"
    ) in printed
    assert "kl:" not in printed  # only the method the verdict names
    (tmp_path / "three").mkdir()
    assert main(["compare", "--reports", *write_score_reports(tmp_path / "three")]) == 0
    assert "watermark is" not in capsys.readouterr().out  # 3 runs: the verdict rests on them


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such report"),
        ("not json", "not a JSON report"),
        ('{"rows": []}', "not a WaterDrum report"),
    ],
)
def test_compare_refuses_what_is_not_a_report(tmp_path, capsys, content, message):
    path = tmp_path / "report.json"
    if content is not None:
        path.write_text(content)
    assert main(["compare", "--reports", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_compare_needs_as_many_runs_of_each_model_unless_unpaired(tmp_path, capsys):
    folders = write_score_reports(tmp_path)[:-1]  # npo has only 2 runs
    assert main(["compare", "--reports", *folders]) == 2
    assert "--unpaired" in capsys.readouterr().err
    assert main(["compare", "--reports", *folders, "--unpaired"]) == 0


SCORED = {"num_samples": 4, "prefix_tokens": 24, "max_new_tokens": 96}
SCORING = {
    "scheme": {"scheme": "waterfall", "k_p": 1, "n_gram": 2, "vocab_size": None},
    "pooling": "tokens",
    "null": {"method": "empirical", "keys": 200, "seed": 0},
    "interval": {"confidence": 0.95, "resamples": 1000, "seed": 0},
}


@pytest.mark.parametrize(
    ("changed", "shown"),
    [
        ({"num_samples": 10}, "num_samples: 10 there, 4 here"),
        ({"prefix_tokens": 50}, "prefix_tokens: 50 there, 24 here"),
        ({"max_new_tokens": 200}, "max_new_tokens: 200 there, 96 here"),
        ({"scoring": {**SCORING, "null": {"method": "analytic"}}}, "scoring.null: "),
        ({"scoring": {**SCORING, "pooling": "samples"}}, "scoring.pooling: 'samples' there"),
        ({"scoring": {**SCORING, "scheme": {"scheme": "kgw"}}}, "scoring.scheme: "),
    ],
)
def test_compare_refuses_reports_scored_differently(tmp_path, capsys, changed, shown):
    """What a value depends on (samples, query length, tokens, scheme, pooling, null) must
    agree between reports; a seed, an interval's level or its resamples need not, and a
    setting only one report records is not compared."""
    folders = write_score_reports(tmp_path)
    for number, folder in enumerate(folders):
        path = tmp_path / folder / "report.json"
        report = json.loads(path.read_text())
        interval = {**SCORING["interval"], "resamples": 100 + number}
        report["settings"] |= {**SCORED, "scoring": {**SCORING, "interval": interval}}
        if number == 0:
            del report["settings"]["prefix_tokens"]
        path.write_text(json.dumps(report))
    assert main(["compare", "--reports", *folders]) == 0
    capsys.readouterr()
    last = tmp_path / folders[-1] / "report.json"
    report = json.loads(last.read_text())
    report["settings"] |= changed
    last.write_text(json.dumps(report))
    assert main(["compare", "--reports", *folders]) == 2
    err = capsys.readouterr().err
    first = folders[1] if "prefix_tokens" in changed else folders[0]  # run 0 records none
    assert f"{folders[-1]} was scored with other settings than {first} (" in err
    assert shown in err and "values scored differently cannot be compared" in err


def test_a_yaml_config_gives_the_reports_and_the_command_line_overrides_it(tmp_path, capsys):
    """`--config FILE.yaml` (TRL's) holds the options, the reports list too; a flag given wins;
    the reports are no longer positional (`--reports`)."""
    folders = write_score_reports(tmp_path)
    recipe = tmp_path / "compare.yaml"
    recipe.write_text(json.dumps({"reports": folders, "confidence": 0.5}))  # JSON is YAML
    assert main(["compare", "--config", str(recipe), "--confidence", "0.9"]) == 0
    expected = compare_seeds(
        {m: [flat(*v) for v in values] for m, values in RUNS.items()}, confidence=0.9
    )
    kl = expected.values["kl"]["forget"]
    printed = capsys.readouterr().out
    assert "[90% interval over runs" in printed
    assert f"{kl.value:+.3f} [{kl.ci_low:+.3f}, {kl.ci_high:+.3f}]" in printed
    with pytest.raises(SystemExit) as exit_:  # a parse error: argparse's exit
        main(["compare", *folders])
    assert exit_.value.code == 2
    assert "arguments are required: --reports" in capsys.readouterr().err


def test_compare_refuses_a_model_left_with_the_default_name(tmp_path, capsys):
    """Runs are grouped by model name: a score report whose model kept `--name`'s default
    would be compared as a method called "model"; a model named so on purpose in a report that
    records another name (or no score settings) is compared."""
    folders = write_score_reports(tmp_path)
    path = tmp_path / folders[1] / "report.json"
    report = json.loads(path.read_text())
    report["models"] = {"model": report["models"]["retrained"]}
    report["settings"]["name"] = "model"
    path.write_text(json.dumps(report))
    assert main(["compare", "--reports", *folders]) == 2
    assert capsys.readouterr().err.strip() == (
        f"waterdrum compare: error: {folders[1]}: its model has the default name 'model'; score "
        "it with --name METHOD (the same name in every run's report) to compare it"
    )
    report["settings"]["name"] = "retrained"  # a report that says it named the model so
    report["models"] = {"retrained": report["models"]["model"]}
    path.write_text(json.dumps(report))
    assert main(["compare", "--reports", *folders]) == 0


def test_compare_refuses_to_replace_its_output_unless_told(tmp_path, capsys):
    folders = write_score_reports(tmp_path)
    output = tmp_path / "comparison.json"
    output.write_text("{}")
    argv = ["compare", "--reports", *folders, "--output-file", str(output)]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == (
        f"waterdrum compare: error: --output-file {str(output)!r} already exists; pass --overwrite "
        "to replace it"
    )
    assert output.read_text() == "{}"
    assert main([*argv, "--overwrite"]) == 0
    from waterdrum_hf.report import json_text

    expected = compare_seeds({m: [flat(*v) for v in values] for m, values in RUNS.items()})
    assert output.read_text() == json_text(expected.to_dict())
