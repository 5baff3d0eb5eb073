"""How every command parses (``ScriptParser``): config fields as flags, recipes, spellings, usage."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.scripts.cli_cases import (
    CONFIGS,
    KEYS,
    WATERMARK_IO,
    Settings,
    captured_config,
    help_text,
    run,
)
from waterdrum_hf import waterdrum_metrics
from waterdrum_hf.config import WaterDrumConfig
from waterdrum_hf.experiments.demo import DemoConfig
from waterdrum_hf.experiments.reproduction import ReproductionConfig
from waterdrum_hf.scripts import main
from waterdrum_hf.watermarking.config import WatermarkingConfig


def test_a_yaml_config_gives_options_and_the_command_line_overrides_it(scored_file, capsys):
    """`--config FILE.yaml` (TRL-style): its keys are option names (underscores or dashes), its
    scoring settings become the WaterDrumConfig, and flags given on the command line win."""
    tmp_path, texts, owners, tok = scored_file
    recipe = tmp_path / "verify.yaml"
    recipe.write_text(
        f"watermark_tokenizer: {tmp_path / 'tok'}\nid_column: owner_id\n"
        f"forget_ids_file: {tmp_path / 'forget.txt'}\n'null': empirical\nnull_keys: 3\n"
        "k_p: 2\noverwrite: true\n"
    )
    argv = ["verify", "--file", tmp_path / "outputs.jsonl", "--config", recipe, "--null-keys", "4"]
    code, _, err = run([*argv, "--output-file", tmp_path / "yaml.json"], capsys)
    assert code == 0, err
    written = json.loads((tmp_path / "yaml.json").read_text())
    config = WaterDrumConfig.from_keywords({"k_p": 2, "null_keys": 4})  # 4: the flag's
    expected = waterdrum_metrics(texts, owners, tok, config=config, forget_ids=[KEYS[1]])
    assert {k: v for k, v in written.items() if k in expected} == pytest.approx(expected)
    recipe.write_text("null_kyes: 3\n")
    code, _, err = run([*argv, "--output-file", tmp_path / "bad.json"], capsys)
    assert code == 2 and "--config: null_kyes are not options of waterdrum verify" in err
    recipe.write_text("null: empirical\n")
    code, _, err = run([*argv, "--output-file", tmp_path / "bad.json"], capsys)
    assert code == 2 and "quote it ('null': ...)" in err
    recipe.write_text("- a list\n")
    code, _, err = run([*argv, "--output-file", tmp_path / "bad.json"], capsys)
    assert code == 2 and "must contain a YAML mapping" in err


@pytest.mark.parametrize("command", sorted(CONFIGS))
def test_every_config_field_is_a_flag_with_its_help(command, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "1000")  # one line per option: a help is found whole
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    for spec in dataclasses.fields(CONFIGS[command]):
        flag = "--" + spec.name.replace("_", "-")
        assert f" {flag} " in out or f" {flag}, " in out, flag
        assert spec.metadata["help"] in out, spec.name


def test_help_shows_the_defaults_and_the_quick_ones(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "1000")
    helps = {}
    for command in ("demo", "reproduce", "watermark"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        helps[command] = capsys.readouterr().out
    assert (
        "Data owners (each a set of documentation topics); at least 2, at most the number of "
        "topics (79 on Python 3.11). (default: 6)" in helps["demo"]
    )
    assert "--quick               smaller defaults: owners 4, forget 1," in helps["demo"]
    assert "(default: ('kl', 'scrub', 'graddiff', 'npo', 'taskvector'))" in helps["demo"]
    assert "--seeds [INT ...]     Training and sampling seeds" in helps["reproduce"]
    assert "(default: (0, 1, 2))" in helps["reproduce"] and "seeds (0,)," in helps["reproduce"]
    assert "Min-k% Prob. (default: 0.4)" in helps["reproduce"]  # a % in a help is no format error
    assert "--dataset-name {toy,toy-qa,waterdrum-ax,waterdrum-tofu}" in helps["reproduce"]
    assert (
        "--no-stop-at-double-newline" in helps["watermark"]
        and "(default: owner_id)" in helps["watermark"]
    )


def test_a_config_field_without_help_is_refused():
    from waterdrum_hf.scripts.parser import ScriptParser

    with pytest.raises(TypeError, match="Settings.steps has no help"):
        ScriptParser((Settings,))


@pytest.mark.parametrize(
    ("command", "argv", "expected"),
    [
        # The flags of each command before its options came from its config, and what they set.
        ("demo", [], lambda: DemoConfig()),
        (
            "demo",
            [
                "--output-dir",
                "r",
                "--owners",
                "5",
                "--forget",
                "2",
                "--passages-per-owner",
                "3",
                "--methods",
                "kl",
                "npo",
                "--seed",
                "7",
                "--show-progress",
                "false",
            ],
            lambda: DemoConfig(
                output_dir="r",
                owners=5,
                forget=2,
                passages_per_owner=3,
                methods=("kl", "npo"),
                seed=7,
                show_progress=False,
            ),
        ),
        ("demo", ["--quick", "--output-dir", "r"], lambda: DemoConfig.quick(output_dir="r")),
        (
            "demo",
            ["--quick", "--owners", "6"],
            lambda: DemoConfig.quick(owners=6),
        ),  # a given default beats quick's
        ("demo", ["--quick", "--scheme", "kgw"], lambda: DemoConfig.quick(scheme="kgw")),
        ("reproduce", [], lambda: ReproductionConfig()),
        (
            "reproduce",
            [
                "--output-dir",
                "r",
                "--seeds",
                "0",
                "1",
                "--fractions",
                "0",
                "0.25",
                "1",
                "--settings",
                "no_duplicate",
                "exact_duplicate",
                "--methods",
                "kl",
                "npo",
                "--dataset-name",
                "waterdrum-ax",
                "--dataset-config",
                "forget_05",
                "--dataset-path",
                "p",
                "--max-rows-per-owner",
                "3",
                "--model-name-or-path",
                "m",
                "--watermark-tokenizer",
                "t",
                "--show-progress",
                "false",
            ],
            lambda: ReproductionConfig(
                output_dir="r",
                seeds=(0, 1),
                fractions=(0.0, 0.25, 1.0),
                settings=("no_duplicate", "exact_duplicate"),
                methods=("kl", "npo"),
                dataset_name="waterdrum-ax",
                dataset_config="forget_05",
                dataset_path="p",
                max_rows_per_owner=3,
                model_name_or_path="m",
                watermark_tokenizer="t",
                show_progress=False,
            ),
        ),
        (
            "reproduce",
            ["--quick", "--watermarking", "substitution"],
            lambda: ReproductionConfig.quick(watermarking="substitution"),
        ),
        (
            "watermark",
            [*WATERMARK_IO, "--id-column", "who"],
            lambda: WatermarkingConfig(id_column="who"),
        ),
        (
            "watermark",
            [
                *WATERMARK_IO,
                "--text-column",
                "body",
                "--id-column",
                "who",
                "--kappa",
                "1.5",
                "--k-p",
                "2",
                "--n-gram",
                "3",
                "--num-beam-groups",
                "2",
                "--beams-per-group",
                "3",
                "--diversity-penalty",
                "0.25",
                "--do-sample",
                "true",
                "--temperature",
                "0.7",
                "--top-p",
                "0.9",
                "--repetition-penalty",
                "1.2",
                "--no-repeat-ngram-size",
                "3",
                "--max-new-tokens",
                "20",
                "--sts-weight",
                "1.0",
                "--prompt",
                "Say it again.",
                "--response-prefix",
                "Sure:",
                "--stop-at-double-newline",
                "false",
                "--seed",
                "4",
                "--batch-size",
                "2",
            ],
            lambda: WatermarkingConfig(
                text_column="body",
                id_column="who",
                kappa=1.5,
                k_p=2,
                n_gram=3,
                num_beam_groups=2,
                beams_per_group=3,
                diversity_penalty=0.25,
                do_sample=True,
                temperature=0.7,
                top_p=0.9,
                repetition_penalty=1.2,
                no_repeat_ngram_size=3,
                max_new_tokens=20,
                sts_weight=1.0,
                prompt="Say it again.",
                response_prefix="Sure:",
                stop_at_double_newline=False,
                seed=4,
                batch_size=2,
            ),
        ),
        (
            "watermark",
            [
                *WATERMARK_IO,
                "--id-column",
                "who",
                "--do-sample",
                "yes",
                "--stop-at-double-newline",
                "0",
            ],
            lambda: WatermarkingConfig(
                id_column="who", do_sample=True, stop_at_double_newline=False
            ),
        ),
    ],
)
def test_todays_flags_build_the_same_config(command, argv, expected, monkeypatch, tmp_path):
    assert captured_config(command, argv, monkeypatch, tmp_path) == expected()


def test_both_spellings_of_a_flag_and_the_bool_forms(monkeypatch, tmp_path):
    config = captured_config(
        "demo",
        ["--output_dir", "r", "--null_keys", "3", "--show-progress", "true"],
        monkeypatch,
        tmp_path,
    )
    assert (config.output_dir, config.null_keys, config.show_progress) == ("r", 3, True)
    config = captured_config(
        "watermark",
        [*WATERMARK_IO, "--id-column", "who", "--do-sample", "--no-stop-at-double-newline"],
        monkeypatch,
        tmp_path,
    )
    assert (config.do_sample, config.stop_at_double_newline) == (True, False)


def test_the_usage_line_names_the_required_options_only(capsys):
    usage = help_text(["score", "--help"], capsys).split("\n\n")[0]
    assert usage.startswith("usage: waterdrum score --output_dir OUTPUT_DIR")
    assert usage.endswith("[options]") and "--num_samples" not in usage
