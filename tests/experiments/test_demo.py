"""`waterdrum demo --quick` end to end: the benchmark of every method, the report, the cache,
and the commands it prints next, run as printed."""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import stat
import time
from dataclasses import replace
from pathlib import Path

import pytest

import waterdrum_hf
from waterdrum_hf.experiments.demo import (
    DEFAULT_METHODS,
    DemoConfig,
    demo_command,
    score_command,
)
from waterdrum_hf.experiments.training import TrainingSettings
from waterdrum_hf.keys import random_keys
from waterdrum_hf.report import closest_to_retrained
from waterdrum_hf.scripts import main
from waterdrum_hf.scripts.demo import make_parser
from waterdrum_hf.scripts.files import OverwriteArguments

QUICK_KEYS = random_keys(DemoConfig.quick().owners, seed=0).tolist()


def run_printed(argv):
    """``main(argv)`` with its stdout returned (a module fixture cannot use capsys)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(argv)
    assert code == 0, printed.getvalue()[-2000:]
    return printed.getvalue()


def everything_shown(out, printed):
    """What the console and the output folder (cache included) show, names included."""
    shown = printed + "".join(
        p.read_bytes().decode("latin-1") for p in out.rglob("*") if p.is_file()
    )
    return shown + " ".join(str(p) for p in out.rglob("*"))


@pytest.fixture(scope="module")
def quick_demo(tiny_model, tmp_path_factory):
    """One `waterdrum demo --quick` run (keys not written): its folder, its console output, its
    seconds and, taken at once, everything its files and console show."""
    out = tmp_path_factory.mktemp("demo") / "report"
    start = time.perf_counter()
    printed = run_printed(["demo", "--quick", "--output-dir", str(out), "--show-progress", "false"])
    return out, printed, time.perf_counter() - start, everything_shown(out, printed)


@pytest.mark.end_to_end
def test_quick_demo_separates_and_benchmarks_every_method_then_resumes(quick_demo):
    out, printed, first_run, shown = quick_demo
    report = json.loads((out / "report.json").read_text())
    models = report["models"]
    assert list(models) == ["original", "retrained", *DEFAULT_METHODS]
    original, retrained = models["original"], models["retrained"]
    # Perfect unlearning removes the forget owners' watermark and keeps the retain owners'.
    assert retrained["forget"] < original["forget"] - 0.2
    assert retrained["separability_auroc"] > 0.9
    assert retrained["retain"] > retrained["forget"] + 0.3
    assert (
        abs(retrained["forget"] - retrained["forget_null_mean"])
        < 2 * retrained["forget_null_std"] + 0.05
    )
    assert original["forget_p_value"] < 0.05
    for result in models.values():  # 95 % intervals by default, around each value
        assert result["confidence"] == 0.95
        assert result["forget_ci_low"] <= result["forget"] <= result["forget_ci_high"]
    assert set(report["curves"]) == set(DEFAULT_METHODS) - {"taskvector"}
    for curve in report["curves"].values():
        assert curve[0]["step"] == 0 and curve[-1]["step"] == DemoConfig.quick().unlearn_steps
    for plot in ("benchmark", "curves", "per_owner", "roc", "watermark_view"):
        assert (out / f"{plot}.png").stat().st_size > 10_000
    markdown = (out / "report.md").read_text()
    # The watermark, token by token: one forget and one retain completion, before and after.
    view = (out / "watermark_view.html").read_text()
    assert "![watermark_view](watermark_view.png)" in markdown
    assert "forget set, original model" in view and "retain set, original model" in view
    closest, _ = closest_to_retrained(models)  # of the first run
    assert f"forget set, {closest} model" in view and "<script" not in view
    assert "Closest to retraining" in markdown and "standard deviation" in markdown
    assert "| retrained |" in markdown and "[10/10]" in printed and "done in" in printed
    # Unscorable samples are said once for the whole run, with the report's count.
    results = [r for model_runs in report["runs"].values() for r in model_runs]
    skipped = sum(r["num_skipped"] for r in results)
    total = skipped + sum(r["num_scored"] for r in results)
    assert printed.count("no countable token") == (1 if skipped else 0)
    if skipped:
        assert f"{skipped} of {total} sampled completions" in printed
    # Two training runs (seeds 0 and 1): the first in detail, each value's mean over both.
    runs = report["runs"]
    assert report["seeds"] == [0, 1] and set(runs) == set(models)
    for name, model_runs in runs.items():
        assert len(model_runs) == 2 and model_runs[0]["forget"] == models[name]["forget"]
        assert model_runs[1]["forget"] != model_runs[0]["forget"]  # a run of its own
        mean = (model_runs[0]["forget"] + model_runs[1]["forget"]) / 2
        assert report["comparison"][f"{name}/forget"] == pytest.approx(mean, abs=1e-12)
        assert report["comparison"][f"{name}/num_seeds"] == 2
    assert "## Results\n\n| model | forget (95% CI over runs)" in markdown
    assert "## The first run in detail (seed 0)" in markdown
    # Owner keys are secrets: neither the files (cache included) nor the console show them.
    assert not any(str(key) in shown or f"{key:x}" in shown for key in QUICK_KEYS)
    rows = [json.loads(line) for line in (out / "watermarked.jsonl").read_text().splitlines()]
    assert len(rows) == 24 and set(rows[0]) == {"owner", "text"}
    assert not (out / "keys.json").exists() and not (out / "forget_ids.txt").exists()
    # A second run resumes from the cache: nothing is recomputed, the report is the same.
    start = time.perf_counter()
    assert main(["demo", "--quick", "--output-dir", str(out), "--show-progress", "false"]) == 0
    assert time.perf_counter() - start < first_run / 3
    assert json.loads((out / "report.json").read_text())["models"] == models


@pytest.mark.end_to_end
def test_the_printed_next_commands_write_the_keys_and_score_the_models_as_the_demo_did(
    quick_demo, capsys
):
    out, printed, _, _ = quick_demo
    # Without the keys, the demo says how to write them: itself again, with --write-keys.
    lines = printed.splitlines()
    rerun = lines[lines.index(next(line for line in lines if line.startswith("next:"))) + 1]
    argv = shlex.split(rerun)
    assert argv[:2] == ["waterdrum", "demo"] and argv[-2:] == ["--write-keys", "true"]
    printed = run_printed(argv[1:])  # cached: quick
    keys = json.loads((out / "keys.json").read_text())
    assert list(keys.values()) == QUICK_KEYS
    forget_ids = (out / "forget_ids.txt").read_text().split()
    assert forget_ids == [str(QUICK_KEYS[-1])]  # the quick demo forgets the last owner
    rows = [json.loads(line) for line in (out / "watermarked.jsonl").read_text().splitlines()]
    assert {row["owner_id"] for row in rows} == set(QUICK_KEYS)
    for file in ("keys.json", "forget_ids.txt", "watermarked.jsonl"):
        assert stat.S_IMODE((out / file).stat().st_mode) == 0o600
    assert "secret watermark keys" in printed and str(QUICK_KEYS[0]) not in printed
    # Each printed score command runs as printed and reads what the demo's table reads.
    commands = [line.removeprefix("next: ") for line in printed.splitlines() if "next:" in line]
    assert len(commands) == 2
    report = json.loads((out / "report.json").read_text())["models"]
    for command in commands:
        argv = shlex.split(command)
        assert argv[:2] == ["waterdrum", "score"]
        name = argv[argv.index("--name") + 1]
        assert main(argv[1:]) == 0
        console = capsys.readouterr().out
        scored = json.loads((out / f"score-{name}" / "report.json").read_text())["models"][name]
        assert scored["forget"] == pytest.approx(report[name]["forget"], abs=1e-9)
        assert scored["retain"] == pytest.approx(report[name]["retain"], abs=1e-9)
        assert scored["forget_ci_low"] == pytest.approx(report[name]["forget_ci_low"], abs=1e-9)
        assert f"forget: {report[name]['forget']:.4f}" in console
    # Re-run without --write-keys: the keys files go.
    run_printed(["demo", "--quick", "--output-dir", str(out), "--show-progress", "false"])
    assert not (out / "keys.json").exists() and not (out / "forget_ids.txt").exists()


def test_printed_commands_reproduce_the_config():
    config = DemoConfig.quick(output_dir="my report", methods=("kl", "npo"), write_keys=True)
    argv = shlex.split(demo_command(config))
    assert argv[:3] == ["waterdrum", "demo", "--quick"]
    assert argv[3:] == [
        "--output-dir",
        "my report",
        "--methods",
        "kl",
        "npo",
        "--write-keys",
        "true",
    ]
    assert shlex.split(demo_command(DemoConfig(audits=()))) == ["waterdrum", "demo", "--audits"]
    assert shlex.split(demo_command(DemoConfig())) == ["waterdrum", "demo"]
    score = shlex.split(score_command(config, "original", "my report/cache/model-original-x"))
    settings = dict(zip(score[2::2], score[3::2], strict=True))
    assert settings["--model-name-or-path"] == "my report/cache/model-original-x"
    assert settings["--dataset-name"] == "my report/watermarked.jsonl"
    assert settings["--forget-ids-file"] == "my report/forget_ids.txt"
    assert settings["--watermark-tokenizer"] == "tiny"
    assert settings["--num-samples"] == str(config.num_samples)
    assert settings["--null-keys"] == str(config.null_keys)
    assert settings["--confidence"] == str(config.confidence)
    assert settings["--null-seed"] == settings["--bootstrap-seed"] == str(config.seed)
    no_null = shlex.split(score_command(replace(config, null_keys=0), "original", "m"))
    assert "--null-keys" not in no_null and no_null[no_null.index("--null") + 1] == "none"
    without = shlex.split(score_command(DemoConfig(confidence=None), "original", "m"))
    assert "--confidence" not in without
    assert "--scheme" not in settings  # Waterfall: the default everywhere
    kgw = replace(config, scheme="kgw")
    assert shlex.split(demo_command(kgw))[3:5] == ["--output-dir", "my report"]
    assert "--scheme kgw" in demo_command(kgw)
    assert "--scheme kgw" in score_command(kgw, "original", "m")  # scores as the demo did
    for shown in (config, kgw, DemoConfig(confidence=None, audits=(), num_seeds=1)):
        argv = shlex.split(demo_command(shown))  # the printed command builds the same config
        assert make_parser().parse_args_and_config(argv[2:]) == (shown, OverwriteArguments())


@pytest.mark.parametrize(
    ("settings", "match"),
    [
        ({"owners": 3, "forget": 3}, "forget"),
        ({"epochs": 0}, "epochs"),
        ({"methods": ("kl", "nope")}, "unknown unlearning method 'nope'"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"confidence": 1.5}, "confidence"),
        ({"num_seeds": 0}, "num_seeds"),
        ({"scheme": "kirchenbauer"}, "`scheme` must be one of waterfall, kgw, synthid"),
    ],
)
def test_demo_config_rejects_impossible_settings(settings, match):
    with pytest.raises(ValueError, match=match):
        DemoConfig(**settings)


def test_fine_tuning_and_unlearning_take_their_own_learning_rates_and_each_run_its_seed():
    config = DemoConfig(batch_size=3, learning_rate=1e-3, unlearn_learning_rate=5e-5, seed=7)
    assert config.finetuning() == TrainingSettings(batch_size=3, learning_rate=1e-3, seed=7)
    assert config.unlearning() == TrainingSettings(batch_size=3, learning_rate=5e-5, seed=7)
    assert config.run_seeds == (7, 8, 9) and DemoConfig.quick().run_seeds == (0, 1)
    assert config.finetuning(9).seed == 9 and config.unlearning(8).seed == 8


def test_printed_commands_name_the_waterdrum_the_user_can_run(tmp_path, monkeypatch):
    venv_bin = tmp_path / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    entry = venv_bin / "waterdrum"
    entry.write_text("#!/bin/sh\n")
    entry.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr("sys.argv", [".venv/bin/waterdrum", "demo"])  # as `bash dev.sh demo` does
    monkeypatch.delenv("HF_HOME", raising=False)
    assert shlex.split(demo_command(DemoConfig()))[:2] == [".venv/bin/waterdrum", "demo"]
    monkeypatch.setenv("HF_HOME", str(tmp_path / ".hf_home"))  # dev.sh's: caches found again
    assert shlex.split(demo_command(DemoConfig()))[:2] == [
        f"HF_HOME={tmp_path / '.hf_home'}",
        ".venv/bin/waterdrum",
    ]
    monkeypatch.setenv("PATH", str(venv_bin))  # an activated virtualenv: the bare name works
    assert shlex.split(demo_command(DemoConfig()))[:2] == ["waterdrum", "demo"]
    monkeypatch.setattr("sys.argv", [str(Path(waterdrum_hf.__file__).parent / "__main__.py")])
    assert shlex.split(score_command(DemoConfig(), "original", "m"))[1:3] == ["-m", "waterdrum_hf"]
