"""One rule for every command that writes: an existing output is never replaced silently.

`score`, `verify`, `show`, `watermark`, `unlearn` and `compare --output-file` refuse an existing
output without `--overwrite`; the commands that resume (`demo`, `reproduce`, `audit`: their
stages cached in `--output-dir`) rebuild a finished report only from the same settings, and refuse a
finished report made with other settings without `--overwrite`."""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from pathlib import Path

import pytest

from waterdrum_hf.experiments.demo_config import DemoConfig
from waterdrum_hf.scripts import main
from waterdrum_hf.scripts.files import check_finished_report
from waterdrum_hf.scripts.parser import CliError

ROOT = Path(__file__).resolve().parents[2]


def report_with(folder: Path, settings: dict, key: str = "settings", name: str = "report.json"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps({"models": {}, key: settings}))
    return folder / name


def test_the_same_settings_pass_and_other_ones_are_named(tmp_path):
    file = report_with(tmp_path / "r", {"seeds": 3, "methods": ["kl", "npo"], "out": "a"})
    check_finished_report(file, "settings", {"seeds": 3, "methods": ("kl", "npo")}, overwrite=False)
    check_finished_report(  # a setting that changes no value
        file, "settings", {"seeds": 3, "out": "b"}, overwrite=False, ignored=("out",)
    )
    with pytest.raises(CliError) as refused:
        check_finished_report(file, "settings", {"seeds": 5}, overwrite=False)
    assert str(refused.value) == (
        f"--output-dir {str(file.parent)!r} holds a finished report made with other settings (seeds: 3 "
        "there, 5 now); pass --overwrite to replace it, or choose another --output-dir"
    )
    with pytest.raises(CliError, match=r"\(epochs: 'not recorded' there, 2 now\)"):
        check_finished_report(file, "settings", {"epochs": 2}, overwrite=False)
    check_finished_report(file, "settings", {"seeds": 5}, overwrite=True)
    check_finished_report(tmp_path / "none" / "report.json", "settings", {}, overwrite=False)


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"models": {}}'])
def test_a_file_the_command_did_not_write_is_refused(tmp_path, content):
    (tmp_path / "report.json").write_text(content)
    with pytest.raises(CliError, match="holds a report.json this command did not write"):
        check_finished_report(tmp_path / "report.json", "settings", {"a": 1}, overwrite=False)


def test_the_committed_demo_report_passes_its_own_settings():
    """The settings a demo records read back equal to the config that made them (tuples as
    JSON lists, None, floats): a rerun of the same command is never refused."""
    recorded = json.loads((ROOT / "benchmarks/results/demo/report.json").read_text())["settings"]
    config = DemoConfig(
        **{
            f.name: tuple(recorded[f.name])
            if isinstance(recorded[f.name], list)
            else recorded[f.name]
            for f in fields(DemoConfig)
        }
    )
    file = ROOT / "benchmarks/results/demo/report.json"
    check_finished_report(file, "settings", asdict(config), overwrite=False)
    with pytest.raises(CliError, match=r"\(num_seeds: 3 there, 4 now\)"):
        check_finished_report(file, "settings", {**asdict(config), "num_seeds": 4}, overwrite=False)


class Reached(Exception):
    """The demo got past its checks to the work."""


@pytest.mark.parametrize(
    ("changes", "refused"),
    [({}, False), ({"write_keys": True, "show_progress": False}, False), ({"epochs": 3}, True)],
)
def test_demo_reruns_with_the_same_settings_and_refuses_others_before_any_work(
    tmp_path, monkeypatch, capsys, changes, refused
):
    import waterdrum_hf.experiments.demo as demo

    def reached(*args, **kwargs):
        raise Reached

    monkeypatch.setattr(demo, "run_demo", reached)
    out = tmp_path / "report"
    report_with(out, asdict(DemoConfig.quick(output_dir="elsewhere", **changes)))
    argv = ["demo", "--quick", "--output-dir", str(out)]
    if refused:
        assert main(argv) == 2
        assert capsys.readouterr().err.strip() == (
            f"waterdrum demo: error: --output-dir {str(out)!r} holds a finished report made with other "
            "settings (epochs: 3 there, 30 now); pass --overwrite to replace it, or choose "
            "another --output-dir"
        )
        with pytest.raises(Reached):
            main([*argv, "--overwrite"])
    else:
        with pytest.raises(Reached):
            main(argv)


def test_reproduce_refuses_results_made_with_other_settings(tmp_path, monkeypatch, capsys):
    import waterdrum_hf.experiments.reproduction as reproduction
    from waterdrum_hf.experiments.reproduction.config import ReproductionConfig

    def reached(*args, **kwargs):
        raise Reached

    monkeypatch.setattr(reproduction, "run_reproduction", reached)
    out = tmp_path / "results"
    report_with(
        out, asdict(ReproductionConfig(seeds=(0, 1, 2, 3))), key="config", name="results.json"
    )
    assert main(["reproduce", "--output-dir", str(out)]) == 2
    assert "holds a finished report made with other settings (seeds: [0, 1, 2, 3] there" in (
        capsys.readouterr().err
    )
    with pytest.raises(Reached):
        main(["reproduce", "--output-dir", str(out), "--overwrite"])
