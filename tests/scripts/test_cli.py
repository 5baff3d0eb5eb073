"""The ``waterdrum`` command: every subcommand, and one-line errors (exit 2) for bad input."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from tokenizer_builders import word_texts, word_tokenizer

from waterdrum_hf import compute_waterdrum
from waterdrum_hf.audits import AuditConfig
from waterdrum_hf.config import NullConfig, WaterDrumConfig
from waterdrum_hf.experiments.demo import DemoConfig
from waterdrum_hf.experiments.reproduction import ReproductionConfig
from waterdrum_hf.schemes import KGWScheme, WaterfallScheme
from waterdrum_hf.scripts import COMMANDS, main
from waterdrum_hf.watermarking.config import WatermarkingConfig

KEYS = [3_000_000_017, 3_999_999_929]  # distinctive, so a leak would show in the output


@pytest.fixture
def scored_file(tmp_path):
    tok = word_tokenizer(4096)
    tok.save_pretrained(tmp_path / "tok")
    texts = word_texts(4096, 10, 30, seed=5)
    owners = [KEYS[i % 2] for i in range(10)]
    path = tmp_path / "outputs.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"text": t, "owner_id": o}) for t, o in zip(texts, owners, strict=True)
        )
    )
    (tmp_path / "forget.txt").write_text(f"{KEYS[1]}\n")
    return tmp_path, texts, owners, tok


@pytest.fixture(scope="module")
def owner_rows(tiny_model, tmp_path_factory):
    """A local dataset: toy passages with an owner id column (two owners)."""
    from waterdrum_hf.data import toy_corpus

    corpus = toy_corpus(2, max_passages_per_owner=3)
    path = tmp_path_factory.mktemp("rows") / "rows.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"text": t, "owner_id": KEYS[o]})
            for t, o in zip(corpus["text"], corpus["owner_id"], strict=True)
        )
    )
    return path


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


COMMAND_NAMES = list(COMMANDS)


@pytest.mark.parametrize("argv", [[], ["--help"], ["-h"]])
def test_help_lists_every_command(argv, capsys):
    code, out, _ = run(argv, capsys)
    assert code == 0
    for command, summary in COMMANDS.items():
        assert f"  {command:<16} {summary}" in out


def test_every_command_is_a_script_with_make_parser_and_main():
    """`waterdrum NAME` runs waterdrum_hf/scripts/NAME.py: a TrlParser-based make_parser() and
    main(...) over the parsed groups, TRL's script shape."""
    import importlib

    from trl import TrlParser

    for command in COMMANDS:
        script = importlib.import_module(f"waterdrum_hf.scripts.{command.replace('-', '_')}")
        assert isinstance(script.make_parser(prog="p"), TrlParser) and callable(script.main)


@pytest.mark.parametrize("command", COMMAND_NAMES)
def test_every_command_has_help(command, capsys):
    try:
        code = main([command, "--help"])
    except SystemExit as exit_:
        code = exit_.code
    assert code == 0
    out = capsys.readouterr().out
    assert f"waterdrum {command}" in out and "--" in out


@pytest.mark.parametrize("null", ["analytic", "none"])
def test_verify_takes_the_analytic_null_or_none(scored_file, capsys, null):
    tmp_path, texts, owners, tok = scored_file
    argv = [
        "verify",
        "--file",
        tmp_path / "outputs.jsonl",
        "--watermark-tokenizer",
        tmp_path / "tok",
    ]
    argv += ["--id-column", "owner_id", "--forget-ids-file", tmp_path / "forget.txt"]
    code, out, _ = run([*argv, "--null", null, "--output-file", tmp_path / f"{null}.json"], capsys)
    assert code == 0
    written = json.loads((tmp_path / f"{null}.json").read_text())
    config = WaterDrumConfig(null=NullConfig("analytic") if null == "analytic" else None)
    expected = compute_waterdrum(texts, owners, tok, config=config, forget_ids=[KEYS[1]])
    assert {k: v for k, v in written.items() if k in expected} == pytest.approx(expected)
    assert ("retain_p_value" in written) == (null == "analytic")


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
    expected = compute_waterdrum(texts, owners, tok, config=config, forget_ids=[KEYS[1]])
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


def test_version_and_module_entry_point():
    from waterdrum_hf import __version__

    done = subprocess.run(
        [sys.executable, "-m", "waterdrum_hf", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.strip() == f"waterdrum-hf {__version__}"


def test_verify_prints_scores_summary_and_p_values(scored_file, capsys):
    tmp_path, texts, owners, tok = scored_file
    code, out, _ = run(
        [
            "verify",
            "--file",
            tmp_path / "outputs.jsonl",
            "--watermark-tokenizer",
            tmp_path / "tok",
            "--id-column",
            "owner_id",
            "--forget-ids-file",
            tmp_path / "forget.txt",
            "--null-keys",
            9,
            "--output-file",
            tmp_path / "r.json",
        ],
        capsys,
    )
    expected = compute_waterdrum(
        texts,
        owners,
        tok,
        config=WaterDrumConfig.from_keywords(dict(null_keys=9)),
        forget_ids=[KEYS[1]],
    )
    assert code == 0
    assert f"forget: {expected['forget']:.4f}" in out and "num_skipped: 0" in out
    # p-values at their precision: 9 null keys give none below 1/10, said as such
    p_value = expected["retain_p_value"]
    shown = "<= 0.1 (the smallest 9 null keys can give)" if p_value <= 0.1 else f"{p_value:.2g}"
    assert f"retain_p_value: {shown}" in out
    assert f"(p {'' if p_value <= 0.1 else '= '}{shown})" in out
    assert not [line for line in out.splitlines() if "p_value: 0.0000" in line]
    assert "retain: watermark" in out and "None" not in out
    assert all(str(k) not in out for k in KEYS)
    written = json.loads((tmp_path / "r.json").read_text())
    assert written["retain"] == pytest.approx(expected["retain"]) and len(written["scores"]) == 10
    assert set(written["per_owner"]) == {"owner-1", "owner-2"}
    # Rows not printed are said to be in --output-file only where there is one.
    for output, where in (
        ([], "--output-file saves them all"),
        (["--output-file", tmp_path / "s.json"], "all in --output-file"),
    ):
        argv = ["verify", "--file", tmp_path / "outputs.jsonl", "--watermark-tokenizer"]
        argv += [tmp_path / "tok", "--id-column", "owner_id", "--max-rows", 3, *output]
        code, out, _ = run(argv, capsys)
        assert code == 0 and f"   ... 7 more rows ({where})" in out


@pytest.mark.parametrize("forget_ids", [None, KEYS[1]])
def test_verify_lists_each_owner_with_its_holm_adjusted_verdict(scored_file, capsys, forget_ids):
    """Holm over the owners of each set: one family of two owners without forget ids (39 null
    keys at least), two families of one (19) with; with fewer, no verdict and the keys needed."""
    tmp_path, texts, owners, tok = scored_file
    argv = [
        "verify",
        "--file",
        tmp_path / "outputs.jsonl",
        "--watermark-tokenizer",
        tmp_path / "tok",
    ]
    argv += ["--id-column", "owner_id"] + (["--forget-ids", forget_ids] if forget_ids else [])
    code, out, _ = run([*argv, "--null-keys", 39], capsys)
    expected = compute_waterdrum(
        texts,
        owners,
        tok,
        config=WaterDrumConfig.from_keywords(dict(null_keys=39)),
        forget_ids=[forget_ids] if forget_ids else None,
        return_details=True,
    )["per_owner"]
    assert code == 0 and "owner        set        value       p  Holm p  verdict" in out
    for name, owner in expected.items():
        (row,) = [line for line in out.splitlines() if line.startswith(name)]
        assert f"{owner['p_value']:.4f}  {owner['adjusted_p_value']:.4f}" in row
        found = owner["adjusted_p_value"] <= 0.05
        assert row.endswith("  detected" if found else "  not detected")
    sets = {"overall": list(expected.values())}
    if forget_ids:
        sets = {
            name: [o for o in expected.values() if o["forget"] == (name == "forget")]
            for name in ("forget", "retain")
        }
    for label, family in sets.items():
        found = sum(o["adjusted_p_value"] <= 0.05 for o in family)
        assert f"{label} owners detected: {found} of {len(family)} (Holm-adjusted p" in out
    keys = 38 if forget_ids is None else 18
    code, out, _ = run([*argv, "--null-keys", keys], capsys)
    assert out.count("cannot tell: too few null keys") == 2
    for label, family in sets.items():
        m = len(family)
        assert (
            f"{label} owners: none can read detected with {keys} null keys (Holm over {m} "
            f"owners needs p <= 0.05 / {m}, below 1 / (1 + {keys})): use --null-keys {keys + 1} "
            "or more" in out
        )


def test_verify_lists_at_most_max_owners(scored_file, capsys, monkeypatch):
    from waterdrum_hf.report import owner_table as owners

    monkeypatch.setattr(owners, "MAX_OWNERS", 1)
    tmp_path, *_ = scored_file
    argv = [
        "verify",
        "--file",
        tmp_path / "outputs.jsonl",
        "--watermark-tokenizer",
        tmp_path / "tok",
    ]
    code, out, _ = run([*argv, "--id-column", "owner_id", "--null", "analytic"], capsys)
    assert code == 0 and "owner-1 " in out and "owner-2 " not in out
    assert "... 1 more owner (all in the full result)" in out


def test_verify_a_plain_text_file_with_one_id(scored_file, capsys):
    tmp_path, texts, _, tok = scored_file
    (tmp_path / "texts.txt").write_text("\n".join(texts[:3]) + "\n\n")
    (tmp_path / "key.txt").write_text("7\n")
    code, out, _ = run(
        [
            "verify",
            "--file",
            tmp_path / "texts.txt",
            "--watermark-tokenizer",
            tmp_path / "tok",
            "--id-file",
            tmp_path / "key.txt",
            "--null",
            "none",
        ],
        capsys,
    )
    expected = compute_waterdrum(texts[:3], [7] * 3, tok)
    assert code == 0 and f"overall: {expected['overall']:.4f}" in out and "num_queries: 3" in out


CONFIGS = {
    "audit": AuditConfig,
    "demo": DemoConfig,
    "reproduce": ReproductionConfig,
    "watermark": WatermarkingConfig,
}


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
    assert "--dataset-name {toy,waterdrum-ax,waterdrum-tofu}" in helps["reproduce"]
    assert (
        "--no-stop-at-double-newline" in helps["watermark"]
        and "(default: owner_id)" in helps["watermark"]
    )


@dataclasses.dataclass
class Settings:
    steps: int = 1


def test_a_config_field_without_help_is_refused():
    from waterdrum_hf.scripts.parser import ScriptParser

    with pytest.raises(TypeError, match="Settings.steps has no help"):
        ScriptParser((Settings,))


class Captured(Exception):
    """Stops a command where it hands its config on, carrying the config."""


def captured_config(command, argv, monkeypatch, tmp_path):
    """The config ``waterdrum COMMAND ARGV`` builds, taken where the command hands it on."""
    import waterdrum_hf.experiments.demo as demo
    import waterdrum_hf.experiments.reproduction as reproduction
    import waterdrum_hf.watermarking.dataset as watermarking
    from waterdrum_hf import trainers
    from waterdrum_hf.scripts import watermark

    def capture(config, *args, **kwargs):
        raise Captured(config)

    monkeypatch.chdir(tmp_path)  # output folders are checked (made) before the work
    monkeypatch.setattr(demo, "run_demo", capture)
    monkeypatch.setattr(reproduction, "run_reproduction", capture)
    monkeypatch.setattr(watermark, "model_tokenizer", lambda name: None)
    monkeypatch.setattr(watermark, "load_model", lambda name: None)
    monkeypatch.setattr(watermark, "check_n_gram", lambda *args: None)  # no tokenizer here
    monkeypatch.setattr(
        watermarking, "WatermarkedDataset", lambda model, tokenizer, config, **key: capture(config)
    )
    config_class = trainers.get("kl")[1]
    monkeypatch.setattr(
        trainers, "get", lambda name: (lambda **kwargs: capture(kwargs["args"]), config_class)
    )
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        json.dumps({"text": "a text", "body": "a text", "who": 1, "forget": True}) + "\n"
    )
    with pytest.raises(Captured) as captured:
        main([command, *[str(a).format(rows=rows) for a in argv]])
    return captured.value.args[0]


VERIFY = ["verify", "--file", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/tok"]
WATERMARK_IO = ["--model-name-or-path", "m", "--dataset-name", "{rows}", "--output-file", "w.jsonl"]
UNLEARN_METHOD_FLAGS = [
    "--output_dir",
    "u",
    "--max_steps",
    "2",
    "--per_device_train_batch_size",
    "2",
    "--use_cpu",
    "true",
    "--report_to",
    "none",
    "--save_strategy",
    "no",
]


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


def test_a_demo_recipe_gives_options_under_quick_and_the_command_line_overrides_it(
    monkeypatch, tmp_path
):
    """`--config FILE.yaml` over `--quick`'s defaults, the command line over both."""
    recipe = tmp_path / "demo.yaml"
    recipe.write_text("owners: 5\nmethods: [kl, npo]\nnull_keys: 3\n")
    argv = ["--config", recipe, "--quick", "--owners", "4"]
    config = captured_config("demo", argv, monkeypatch, tmp_path)
    assert config == DemoConfig.quick(owners=4, methods=("kl", "npo"), null_keys=3)


def test_the_reproduce_script_runs_what_the_command_runs(monkeypatch, capsys):
    """`python -m waterdrum_hf.scripts.reproduce` is `waterdrum reproduce`: the same options."""
    monkeypatch.setenv("COLUMNS", "1000")
    module = [sys.executable, "-m", "waterdrum_hf.scripts.reproduce", "--help"]
    done = subprocess.run(module, capture_output=True, text=True)
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    assert done.returncode == 0 and done.stdout == capsys.readouterr().out


def test_unlearn_method_flags_build_what_hf_argument_parser_builds(monkeypatch, tmp_path):
    from transformers import HfArgumentParser

    from waterdrum_hf import trainers

    (expected,) = HfArgumentParser(trainers.get("kl")[1]).parse_args_into_dataclasses(
        UNLEARN_METHOD_FLAGS
    )
    config = captured_config(
        "unlearn",
        ["--method", "kl", "--model_name_or_path", "tiny", "--dataset_name", "{rows}",
         *UNLEARN_METHOD_FLAGS],
        monkeypatch,
        tmp_path,
    )  # fmt: skip
    loading = {"model_init_kwargs"}  # the script fills it from ModelConfig, as TRL's sft.py does
    assert {k: v for k, v in config.to_dict().items() if k not in loading} == {
        k: v for k, v in expected.to_dict().items() if k not in loading
    }
    assert config.max_steps == 2 and config.model_init_kwargs["dtype"] is not None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            [
                "verify",
                "--file",
                "{tmp}/missing.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--id",
                "1",
            ],
            "does not exist",
        ),
        (
            [
                "verify",
                "--file",
                "{tmp}/outputs.jsonl",
                "--watermark-tokenizer",
                "{tmp}/nope",
                "--id",
                "1",
            ],
            "tokenizer '{tmp}/nope' does not exist",
        ),
        (
            [
                "verify",
                "--file",
                "{tmp}/empty.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--id",
                "1",
            ],
            "is empty",
        ),
        (
            [
                "verify",
                "--file",
                "{tmp}/broken.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--id",
                "1",
            ],
            "could not be read",
        ),
        (
            [
                "verify",
                "--file",
                "{tmp}/outputs.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--id-column",
                "owner_id",
                "--forget-ids-file",
                "{tmp}/none.txt",
            ],
            "file '{tmp}/none.txt' does not exist",
        ),
        (
            [
                "verify",
                "--file",
                "{tmp}/outputs.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--id",
                "-3",
            ],
            "0..2**32-1",
        ),
        (
            [
                "verify",
                "--file",
                "{tmp}/outputs.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--id",
                "x",
            ],
            "non-integer",
        ),
        (
            [
                "verify",
                "--file",
                "{tmp}/outputs.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--id",
                "1",
                "--k-p",
                "0",
            ],
            "--k-p must be in 1..",
        ),
        (
            [
                "verify",
                "--file",
                "{tmp}/outputs.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--id",
                "1",
                "--null-keys",
                "-5",
            ],
            "must be >= 0",
        ),
        (
            [
                "verify",
                "--file",
                "{tmp}/outputs.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--id",
                "1",
                "--vocab-size",
                "50000",
            ],
            "does not match the tokenizer's vocab_size",
        ),
        (
            [
                "verify",
                "--file",
                "{tmp}/outputs.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--id-column",
                "owner",
            ],
            "no column 'owner'",
        ),
        (
            [
                "verify",
                "--file",
                "{tmp}/outputs.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--id",
                "1",
                "--forget-ids-f",
                "x",
            ],
            "unrecognized option: --forget-ids-f",
        ),
        (
            [
                "unlearn",
                "--method",
                "kl",
                "--model_name_or_path",
                "{tmp}/tok",
                "--dataset_name",
                "{tmp}/outputs.jsonl",
                "--output_dir",
                "{tmp}/u",
                "--max_steps",
                "x",
            ],
            "invalid int value",
        ),
        (
            [
                "unlearn",
                "--method",
                "kl",
                "--model_name_or_path",
                "tiny",
                "--dataset_name",
                "{tmp}/none.jsonl",
                "--output_dir",
                "{tmp}/u",
            ],
            "dataset '{tmp}/none.jsonl' does not exist",
        ),
        (
            [
                "watermark",
                "--model-name-or-path",
                "{tmp}/tok",
                "--dataset-name",
                "{tmp}/outputs.jsonl",
                "--output-file",
                "{tmp}/w.jsonl",
                "--id-file",
                "{tmp}/none.txt",
            ],
            "does not exist",
        ),
        (
            ["verify", "--file", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/tok"],
            "give exactly one of --id, --id-file, --id-column or --keys-file",
        ),
        (["demo", "--bogus", "1"], "unrecognized option: --bogus"),
        (
            [
                "verify",
                "--file",
                "{tmp}/outputs.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--id",
                "1",
                "3999999929",
            ],
            "1 unrecognized value (not shown: one may be a key)",
        ),
        (["demo", "--owners", "0"], "must be >= 2"),
        # One error style: a dataclass's own check in the flags' words (no backticks, no period).
        (
            ["demo", "--num_samples", "-3"],
            "waterdrum demo: error: --num_samples must be >= 1, got -3",
        ),
        (["demo", "--learning_rat", "3"], "error: unrecognized option: --learning_rat (see"),
        (["demo", "--methods", "kl", "forgetall"], "unknown unlearning method 'forgetall'"),
        (
            [
                "score",
                "--dataset-name",
                "{tmp}/outputs.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--model-name-or-path",
                "{tmp}/no-model",
                "--output-dir",
                "{tmp}/o",
            ],
            "model '{tmp}/no-model' does not exist",
        ),
        (
            [
                "score",
                "--dataset-name",
                "{tmp}/outputs.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--generations",
                "{tmp}/g.jsonl",
                "--id-column",
                "who",
                "--output-dir",
                "{tmp}/o",
            ],
            "no column 'who'",
        ),
        (
            [
                "score",
                "--dataset-name",
                "waterdrum-ax",
                "--dataset-config",
                "forget_99",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--generations",
                "{tmp}/g.jsonl",
                "--output-dir",
                "{tmp}/o",
            ],
            "unknown config 'forget_99'",
        ),
        (
            [
                "score",
                "--dataset-name",
                "{tmp}/outputs.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--output-dir",
                "{tmp}/o",
            ],
            "give --model-name-or-path",
        ),
        (
            ["unlearn", "--method", "forgetall", "--model_name_or_path", "x"],
            "unknown unlearning method 'forgetall'; known: gradascent",
        ),
        (
            ["unlearn", "--model_name_or_path", "x"],
            "the following arguments are required: --method",
        ),
        (
            [
                "watermark",
                "--model-name-or-path",
                "{tmp}/no-model",
                "--dataset-name",
                "{tmp}/outputs.jsonl",
                "--output-file",
                "{tmp}/w.txt",
            ],
            "use a .jsonl",
        ),
        (
            [
                "watermark",
                "--model-name-or-path",
                "{tmp}/no-model",
                "--dataset-name",
                "{tmp}/outputs.jsonl",
                "--output-file",
                "{tmp}/w.jsonl",
                "--id",
                "1",
                "--id-file",
                "{tmp}/forget.txt",
            ],
            "give --id or --id-file, not both",
        ),
        # Config values: checked by the config itself (or by the flag's type), one line each.
        (
            ["reproduce", "--fractions", "0", "x", "1"],
            "argument --fractions: invalid float value: 'x'",
        ),
        (["reproduce", "--seeds"], "--seeds must be distinct, and at least one"),
        (["reproduce", "--seeds", "0", "0"], "--seeds must be distinct, and at least one"),
        (["reproduce", "--schemes", "kgw"], "--schemes must name at least two distinct schemes"),
        (["reproduce", "--dataset-name", "waterdrum-ax"], "needs --watermark_tokenizer"),
        (["reproduce", "--dataset-name", "ax"], "invalid choice: 'ax'"),
        (["reproduce", "--mia-k", "2"], "--mia_k must be in (0, 1]"),
        (
            ["demo", "--forget", "6"],
            "--forget must be at least 1 and leave at least one retain owner",
        ),
        (
            [
                "watermark",
                "--model-name-or-path",
                "{tmp}/no-model",
                "--dataset-name",
                "{tmp}/outputs.jsonl",
                "--output-file",
                "{tmp}/w.jsonl",
                "--top-p",
                "0",
            ],
            "--top_p must be in (0, 1]",
        ),
        (
            [
                "watermark",
                "--model-name-or-path",
                "{tmp}/no-model",
                "--dataset-name",
                "{tmp}/outputs.jsonl",
                "--output-file",
                "{tmp}/w.jsonl",
                "--do-sample",
                "maybe",
            ],
            "argument --do_sample/--do-sample: Truthy value expected",
        ),
        (
            [
                "unlearn",
                "--method",
                "kl",
                "--model_name_or_path",
                "tiny",
                "--dataset_name",
                "{tmp}/outputs.jsonl",
                "--output_dir",
                "{tmp}/u",
                "--bogus",
                "3999999929",
            ],
            "unrecognized option: --bogus",
        ),
        # Found by trying it as a new user would (issue 20).
        (
            [
                "verify",
                "--file",
                "{tmp}/huge.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--id-column",
                "owner_id",
            ],
            "column 'owner_id' holds an integer too large for 64 bits",
        ),
        ([*VERIFY, "--id-file", "{tmp}"], "is a folder; give a file with one id per line"),
        ([*VERIFY, "--id-file", "{tmp}/two.txt"], "put one id per line"),
        (
            [*VERIFY, "--id-column", "owner_id", "--forget-ids-file", "{tmp}/two.txt"],
            "put one id per line",
        ),
        ([*VERIFY, "--id", "1", "--n-gram", "100000"], "--n-gram 100000 is longer than every text"),
        ([*VERIFY, "--id", "1", "--null-keys", "100000000"], "give at most"),
        (
            [*VERIFY, "--id", "1", "--null", "analytic", "--null-keys", "5"],
            "--null-keys and --null-seed are the empirical null's; not settings of null='analytic'",
        ),
        (
            ["demo", "--null-keys", "100000000", "--output-dir", "{tmp}/d"],
            "--null-keys 100000000 needs",
        ),
        (["demo", "--owners", "1000"], "--owners must be at most 79, the toy corpus's number"),
        (["demo", "--methods"], "--methods must name at least one unlearning method"),
        (["demo", "--output-dir", "{tmp}/outputs.jsonl"], "is a file; give a folder"),
        (["reproduce", "--output-dir", "{tmp}/outputs.jsonl"], "is a file; give a folder"),
        (
            [
                "unlearn",
                "--method",
                "npo",
                "--model_name_or_path",
                "tiny",
                "--dataset_name",
                "{tmp}/outputs.jsonl",
            ],
            "has no 'forget' column (columns: text, owner_id): mark each row True (forget)",
        ),
        (
            [
                "unlearn",
                "--method",
                "npo",
                "--model_name_or_path",
                "{tmp}/no-model",
                "--dataset_name",
                "{tmp}/outputs.jsonl",
                "--output_dir",
                "{tmp}/saved",
            ],
            "--output_dir '{tmp}/saved' already holds a saved model; pass --overwrite",
        ),
        (
            [
                "score",
                "--dataset-name",
                "{tmp}/outputs.jsonl",
                "--watermark-tokenizer",
                "{tmp}/tok",
                "--generations",
                "{tmp}",
                "--output-dir",
                "{tmp}/o",
            ],
            "generations file '{tmp}' is a folder",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(scored_file, argv, message, capsys):
    tmp_path, *_ = scored_file
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "broken.jsonl").write_text('{"text": "w1 w2", "owner_id": 1}\n{"text": \n')
    (tmp_path / "huge.jsonl").write_text(
        '{"text": "w1 w2", "owner_id": 1}\n{"text": "w3 w4", "owner_id": 99999999999999999999}\n'
    )
    (tmp_path / "two.txt").write_text(f"{KEYS[0]} {KEYS[1]}\n")
    (tmp_path / "saved").mkdir()
    (tmp_path / "saved" / "config.json").write_text("{}")
    argv = [a.format(tmp=tmp_path) for a in argv]
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert message.format(tmp=tmp_path) in lines[0]
    assert all(str(k) not in err for k in KEYS + [99999999999999999999])


SCORE_SAVED = ["score", "--generations", "x.jsonl", "--dataset-name", "d.jsonl"]
SCORE_SAVED += ["--watermark-tokenizer", "tiny", "--output-dir", "o"]


@pytest.mark.parametrize(("value", "expected"), [("auto", "auto"), ("12", 12)])
def test_score_batch_size_reads_auto_or_a_positive_int(value, expected):
    from waterdrum_hf.scripts.score import int_or_auto

    assert int_or_auto(value, "--batch-size") == expected


@pytest.mark.parametrize("value", ["0", "Auto", "largest"])
def test_score_refuses_a_batch_size_neither_auto_nor_positive(value, capsys):
    code, _, err = run([*SCORE_SAVED, "--batch-size", value], capsys)
    assert code == 2 and "--batch-size: expected 'auto' or an integer >= 1" in err


def test_score_writes_the_report_and_rescores_saved_generations(
    tiny_folder, owner_rows, tmp_path, capsys
):
    common = [
        "--dataset-name",
        owner_rows,
        "--watermark-tokenizer",
        tiny_folder,
        "--forget-ids",
        KEYS[1],
        "--null-keys",
        9,
        "--prefix-tokens",
        8,
    ]
    code, out, _ = run(
        [
            "score",
            "--model-name-or-path",
            tiny_folder,
            *common,
            "--num-samples",
            2,
            "--max-new-tokens",
            8,
            "--output-dir",
            tmp_path / "a",
        ],
        capsys,
    )
    assert code == 0 and "forget: " in out and "Holm p  verdict" in out
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    result = report["models"]["model"]
    assert result["num_queries"] == 6 and result["num_scored"] + result["num_skipped"] == 12
    assert set(result["per_owner"]) == {"owner-1", "owner-2"}
    assert (tmp_path / "a" / "report.md").is_file() and (tmp_path / "a" / "benchmark.png").is_file()
    lines = (tmp_path / "a" / "generations.jsonl").read_text().splitlines()
    assert len(lines) == 6 and len(json.loads(lines[0])["samples"]) == 2
    shown = out + (tmp_path / "a" / "report.json").read_text() + "\n".join(lines)
    assert all(str(k) not in shown for k in KEYS)
    # Re-scoring the saved generations needs no model and gives the same values.
    code, _, _ = run(
        [
            "score",
            *common,
            "--generations",
            tmp_path / "a" / "generations.jsonl",
            "--output-dir",
            tmp_path / "b",
        ],
        capsys,
    )
    again = json.loads((tmp_path / "b" / "report.json").read_text())["models"]["model"]
    assert code == 0 and again["forget"] == pytest.approx(result["forget"])
    assert "forget_ci_low" not in again  # intervals only when asked for
    # --confidence adds intervals to the printed values, report.json and report.md.
    code, out, _ = run(
        [
            "score",
            *common,
            "--generations",
            tmp_path / "a" / "generations.jsonl",
            "--confidence",
            "0.9",
            "--output-dir",
            tmp_path / "c",
        ],
        capsys,
    )
    bounded = json.loads((tmp_path / "c" / "report.json").read_text())["models"]["model"]
    assert code == 0 and bounded["confidence"] == 0.9
    assert bounded["forget_ci_low"] <= bounded["forget"] <= bounded["forget_ci_high"]
    assert bounded["per_owner"]["owner-1"]["ci_low"] <= bounded["per_owner"]["owner-1"]["value"]
    interval = f"[{bounded['forget_ci_low']:.4f}, {bounded['forget_ci_high']:.4f}] (90% CI)"
    assert f"forget: {bounded['forget']:.4f} {interval}" in out
    assert "| forget 90% CI |" in (tmp_path / "c" / "report.md").read_text()


def test_lm_eval_tasks_prints_the_shipped_task_folder(capsys):
    from pathlib import Path

    code, out, _ = run(["lm-eval-tasks"], capsys)
    folder = Path(out.strip())
    assert code == 0 and folder.is_absolute()
    assert {p.name for p in folder.glob("*.yaml")} == {
        "waterdrum_ax.yaml",
        "waterdrum_tofu.yaml",
        "waterdrum_local.yaml",
    }


def lm_eval_samples(rows, owner_indices, samples):
    """Records as lm-eval's --log_samples writes them (the fields the reader uses, and more)."""
    return "".join(
        json.dumps(
            {
                "doc_id": row,
                "doc": {"query": "q", "owner": owner, "row": row, "source": "{}"},
                "target": "",
                "arguments": {"gen_args_0": {"arg_0": "q", "arg_1": {}}},
                "resps": [[[s] for s in texts]],
                "filtered_resps": [texts],
                "filter": "all_samples",
                "forget": "2 samples of owner index 0",
            }
        )
        + "\n"
        for row, owner, texts in zip(rows, owner_indices, samples, strict=True)
    )


@pytest.mark.slow
def test_score_writes_and_pushes_the_values_in_the_hubs_formats(
    tiny_folder, owner_rows, tmp_path, capsys, monkeypatch
):
    """`--model-card DIR` writes README.md's model-index (read back with huggingface_hub);
    `--push-to-hub REPO` uploads the same files in one commit (the upload call is captured:
    the Hub is unreachable here)."""
    from huggingface_hub import HfApi, ModelCard
    from huggingface_hub.errors import EntryNotFoundError

    uploaded = {}

    def upload_folder(self, *, repo_id, folder_path, **kwargs):
        uploaded.update(repo_id=repo_id, files=sorted(p.name for p in Path(folder_path).rglob("*")))
        uploaded["card"] = (Path(folder_path) / "README.md").read_text()
        return "https://huggingface.co/user/model/commit/0"

    def no_card(self, *args, **kwargs):
        raise EntryNotFoundError("no README.md")

    monkeypatch.setattr(HfApi, "upload_folder", upload_folder)
    monkeypatch.setattr(HfApi, "hf_hub_download", no_card)
    argv = [
        "score", "--model-name-or-path", tiny_folder, "--dataset-name", owner_rows, "--watermark-tokenizer",
        tiny_folder, "--forget-ids", KEYS[1], "--null", "analytic", "--prefix-tokens", 8,
        "--num-samples", 2, "--max-new-tokens", 8, "--output-dir", tmp_path / "a",
        "--model-card", tmp_path / "card", "--push-to-hub", "user/model",
    ]  # fmt: skip
    code, out, err = run(argv, capsys)
    assert code == 0, err
    result = json.loads((tmp_path / "a" / "report.json").read_text())["models"]["model"]
    card = ModelCard.load(tmp_path / "card" / "README.md")
    values = {r.metric_type: r.metric_value for r in card.data.eval_results}
    assert values["waterdrum_forget"] == pytest.approx(result["forget"])
    assert values["waterdrum_retain"] == pytest.approx(result["retain"])
    assert uploaded["repo_id"] == "user/model" and "README.md" in uploaded["files"]
    assert "waterdrum_forget" in uploaded["card"] and "Pushed to user/model" in out
    assert not any(str(key) in uploaded["card"] + out for key in KEYS)


def test_score_rescores_an_lm_eval_samples_file_by_its_documents_rows(
    scored_file, tmp_path, capsys
):
    folder, texts, owners, tok = scored_file
    rows = [3, 0, 5, 2]  # a subset (--limit, a filtered run), written in any order
    samples = [[texts[r], texts[(r + 1) % 10]] for r in rows]
    (folder / "samples.jsonl").write_text(lm_eval_samples(rows, [r % 2 for r in rows], samples))
    common = [
        "score", "--dataset-name", folder / "outputs.jsonl", "--watermark-tokenizer", folder / "tok",
        "--forget-ids-file", folder / "forget.txt", "--null-keys", "0",
    ]  # fmt: skip
    code, _, err = run(
        [*common, "--generations", folder / "samples.jsonl", "--output-dir", tmp_path / "a"], capsys
    )
    assert code == 0, err
    ours = json.loads((tmp_path / "a" / "report.json").read_text())["models"]["model"]
    order = sorted(range(4), key=lambda i: rows[i])
    expected = compute_waterdrum(
        [samples[i] for i in order],
        [owners[rows[i]] for i in order],
        tok,
        forget_ids=[KEYS[1]],
    )
    assert ours["forget"] == expected["forget"] and ours["retain"] == expected["retain"]
    assert ours["num_queries"] == 4
    # The report is never replaced without --overwrite, and is replaced with it.
    written = (tmp_path / "a" / "report.json").read_text()
    again = [*common, "--generations", folder / "samples.jsonl", "--output-dir", tmp_path / "a"]
    code, _, err = run([*again, "--null-keys", "5"], capsys)
    assert code == 2 and err.strip().endswith(
        f"--output-dir {str(tmp_path / 'a')!r} already holds a report; pass --overwrite to replace it"
    )
    assert (tmp_path / "a" / "report.json").read_text() == written
    code, _, err = run([*again, "--null-keys", "5", "--overwrite"], capsys)
    assert code == 0, err
    replaced = json.loads((tmp_path / "a" / "report.json").read_text())
    assert replaced["settings"]["null_keys"] == 5
    # Owner indices that do not match the dataset's owners: another dataset's samples.
    (folder / "other.jsonl").write_text(lm_eval_samples(rows, [0, 0, 0, 0], samples))
    code, _, err = run(
        [*common, "--generations", folder / "other.jsonl", "--output-dir", tmp_path / "b"], capsys
    )
    assert code == 2 and "was not made from this dataset's rows" in err
    assert not any(str(key) in err for key in KEYS)


def test_score_loads_a_peft_adapter_folder(tiny_folder, owner_rows, tmp_path, capsys):
    peft = pytest.importorskip("peft")
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(tiny_folder)
    adapter = peft.get_peft_model(base, peft.LoraConfig(r=2, target_modules=["q_proj"]))
    adapter.save_pretrained(tmp_path / "adapter")
    code, out, _ = run(
        [
            "score",
            "--model-name-or-path",
            tmp_path / "adapter",
            "--dataset-name",
            owner_rows,
            "--watermark-tokenizer",
            tiny_folder,
            "--num-samples",
            1,
            "--max-new-tokens",
            6,
            "--null-keys",
            0,
            "--output-dir",
            tmp_path / "o",
        ],
        capsys,
    )
    assert code == 0 and "overall: " in out


def test_watermark_a_file(tiny_folder, owner_rows, tmp_path, capsys):
    from waterdrum_hf import verify_texts

    code, out, _ = run(
        [
            "watermark",
            "--model-name-or-path",
            tiny_folder,
            "--dataset-name",
            owner_rows,
            "--output-file",
            tmp_path / "w.jsonl",
            "--num-beam-groups",
            1,
            "--beams-per-group",
            2,
            "--max-new-tokens",
            16,
            "--no-repeat-ngram-size",
            3,
            "--seed",
            0,
        ],
        capsys,
    )
    assert code == 0 and "Watermarked 6 rows" in out
    rows = [json.loads(line) for line in (tmp_path / "w.jsonl").read_text().splitlines()]
    assert {"text", "owner_id", "text_original", "watermark_score"} <= set(rows[0])
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_folder)
    scores = verify_texts([r["text"] for r in rows], [r["owner_id"] for r in rows], tokenizer)
    assert scores == pytest.approx([r["watermark_score"] for r in rows])
    # An n-gram no text could hold is refused before paraphrasing (the file stays as it was).
    written = (tmp_path / "w.jsonl").read_text()
    argv = [
        "watermark",
        "--model-name-or-path",
        tiny_folder,
        "--dataset-name",
        owner_rows,
        "--output-file",
        tmp_path / "w.jsonl",
    ]
    code, _, err = run([*argv, "--overwrite", "--n-gram", 100_000], capsys)
    assert code == 2 and "--n-gram 100000 is longer than every text" in err
    assert (tmp_path / "w.jsonl").read_text() == written


def test_unlearn_with_a_registered_method(tiny_folder, owner_rows, tmp_path, capsys):
    """The old --data/--forget-ids form: data.mark_forget marks the rows, then one dataset."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM

    from waterdrum_hf.data import mark_forget

    forget_marked = tmp_path / "marked.jsonl"
    mark_forget(Dataset.from_json(str(owner_rows)), [KEYS[1]]).to_json(forget_marked)

    code, out, _ = run(
        argv := [
            "unlearn",
            "--method",
            "kl",
            "--model_name_or_path",
            tiny_folder,
            "--dataset_name",
            forget_marked,
            "--output_dir",
            tmp_path / "kl",
            "--max_steps",
            2,
            "--per_device_train_batch_size",
            2,
            "--use_cpu",
            "true",
            "--report_to",
            "none",
            "--save_strategy",
            "no",
        ],
        capsys,
    )
    assert code == 0 and "saved to" in out
    unlearned = AutoModelForCausalLM.from_pretrained(tmp_path / "kl")
    original = AutoModelForCausalLM.from_pretrained(tiny_folder)
    changed = [
        not (a == b).all()
        for a, b in zip(unlearned.parameters(), original.parameters(), strict=True)
    ]
    assert any(changed)
    # The saved model is replaced only when asked.
    code, _, err = run(argv, capsys)
    assert code == 2 and "already holds a saved model; pass --overwrite" in err
    code, out, _ = run([*argv, "--overwrite"], capsys)
    assert code == 0 and "saved to" in out
    try:
        code = main(["unlearn", "--method", "npo", "--help"])
    except SystemExit as exit_:
        code = exit_.code
    assert code == 0 and "--beta" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("value", "expected"), [("0.5", 0.5), ("1", 1.0), ("none", None), ("None", None)]
)
def test_score_max_fraction_reads_a_share_or_none(value, expected):
    from waterdrum_hf.scripts.data_options import fraction_or_none

    assert fraction_or_none(value) == expected


@pytest.mark.parametrize("value", ["0", "1.5", "half"])
def test_score_refuses_a_max_fraction_outside_0_1(value, capsys):
    code, _, err = run([*SCORE_SAVED, "--max-fraction", value], capsys)
    assert code == 2 and "--max-fraction: expected a number in (0, 1] or 'none'" in err


@pytest.mark.parametrize("value", ["0", "1", "1.5", "x"])
def test_score_refuses_a_confidence_outside_0_1(scored_file, value, capsys):
    tmp_path, *_ = scored_file
    argv = [*SCORE_SAVED, "--dataset-name", tmp_path / "outputs.jsonl", "--confidence", value]
    try:
        code, _, err = run(argv, capsys)
    except SystemExit as exit_:  # argparse's: not a number at all
        code, err = exit_.code, capsys.readouterr().err
    assert code == 2 and "--confidence" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("command", ["score", "audit"])
def test_score_and_audit_run_alike_as_a_module_and_as_waterdrum(command, monkeypatch, capsys):
    """`python -m waterdrum_hf.scripts.<command> --help` prints the options `waterdrum
    <command> --help` does: the same script."""
    monkeypatch.setenv("COLUMNS", "100")
    module = [sys.executable, "-m", f"waterdrum_hf.scripts.{command}", "--help"]
    done = subprocess.run(module, capture_output=True, text=True, check=True)
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert done.stdout == capsys.readouterr().out and "--watermark-tokenizer" in done.stdout


def test_score_takes_tiny_as_a_model_or_tokenizer_and_tokenizer_for_a_bare_model_folder(
    tiny_model, owner_rows, tmp_path, capsys
):
    model, _ = tiny_model
    model.save_pretrained(tmp_path / "bare")  # a model folder without its tokenizer
    capsys.readouterr()  # its saving bar
    common = [
        "--dataset-name", owner_rows, "--watermark-tokenizer", "tiny", "--num-samples", 1,
        "--max-new-tokens", 6, "--null-keys", 0, "--prefix-tokens", 8,
    ]  # fmt: skip
    code, _, err = run(
        ["score", "--model-name-or-path", tmp_path / "bare", *common, "--output-dir", tmp_path],
        capsys,
    )
    assert code == 2 and "has no tokenizer" in err and "--tokenizer" in err
    assert len(err.strip().splitlines()) == 1
    for number, model_options in enumerate(
        (
            ["--model-name-or-path", tmp_path / "bare", "--tokenizer", "tiny"],
            ["--model-name-or-path", "tiny"],
        )
    ):
        out_dir = tmp_path / f"report{number}"
        code, out, err = run(["score", *model_options, *common, "--output-dir", out_dir], capsys)
        assert code == 0 and "overall: " in out, err
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    help_text = capsys.readouterr().out
    assert "--tokenizer" in help_text and "tiny" in help_text.split("--watermark-tokenizer")[1]


@pytest.mark.parametrize(
    ("command", "option"),
    [("verify", "--watermark-tokenizer"), ("watermark", "--model-name-or-path")],
)
def test_help_names_tiny_wherever_a_model_or_tokenizer_is_loaded(command, option, capsys):
    with contextlib.suppress(SystemExit):  # argparse's --help exits; unlearn's returns
        main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "tiny: the built-in" in help_text.rsplit(option, 1)[1].split(" --", 1)[0]


def test_output_paths_are_checked_before_the_work(scored_file, tmp_path, capsys):
    """A bad or existing output path is refused before any scoring, paraphrasing or sampling;
    ``--overwrite`` replaces an existing file."""
    data, *_ = scored_file
    verify = [
        "verify",
        "--file",
        data / "outputs.jsonl",
        "--watermark-tokenizer",
        data / "tok",
        "--id",
        1,
    ]
    (tmp_path / "r.json").write_text("kept")
    code, out, err = run([*verify, "--null-keys", 0, "--output-file", tmp_path / "r.json"], capsys)
    assert code == 2 and out == "" and "already exists; pass --overwrite" in err
    assert (tmp_path / "r.json").read_text() == "kept"
    code, out, err = run([*verify, "--output-file", tmp_path], capsys)
    assert code == 2 and out == "" and "is a folder; give a file name" in err
    code, out, err = run([*verify, "--output-file", data / "outputs.jsonl" / "r.json"], capsys)
    assert code == 2 and out == "" and "cannot be written" in err
    code, out, _ = run(
        [*verify, "--null-keys", 0, "--output-file", tmp_path / "r.json", "--overwrite"], capsys
    )
    assert code == 0 and "row  score" in out
    assert json.loads((tmp_path / "r.json").read_text())["num_queries"] == 10
    # The model is never loaded: its path does not exist, and the output is what is named.
    watermark = [
        "watermark",
        "--model-name-or-path",
        tmp_path / "no-model",
        "--dataset-name",
        data / "outputs.jsonl",
    ]
    code, _, err = run([*watermark, "--output-file", tmp_path / "r.json"], capsys)
    assert code == 2 and "--output-file" in err and "already exists; pass --overwrite" in err
    code, _, err = run([*watermark, "--output-file", data / "outputs.jsonl" / "w.jsonl"], capsys)
    assert code == 2 and "--output-file" in err and "cannot be written" in err
    code, _, err = run(
        [*watermark, "--output-file", tmp_path / "w.jsonl", "--max-new-tokens", 3, "--n-gram", 4],
        capsys,
    )
    assert code == 2 and "--n-gram 4 is longer than --max-new-tokens 3" in err
    code, _, err = run(
        [
            "score",
            "--model-name-or-path",
            tmp_path / "no-model",
            "--dataset-name",
            data / "outputs.jsonl",
            "--watermark-tokenizer",
            data / "tok",
            "--output-dir",
            tmp_path / "r.json",
        ],
        capsys,
    )
    assert code == 2 and "--output-dir" in err and "is a file; give a folder" in err


def test_a_byte_order_mark_is_accepted(scored_file, capsys):
    tmp_path, texts, owners, tok = scored_file
    rows = [{"text": t, "owner_id": o} for t, o in zip(texts, owners, strict=True)]
    (tmp_path / "bom.jsonl").write_text(
        "\n".join(json.dumps(row) for row in rows), encoding="utf-8-sig"
    )
    (tmp_path / "bom.csv").write_text(
        "text,owner_id\n" + "".join(f"{t},{o}\n" for t, o in zip(texts, owners, strict=True)),
        encoding="utf-8-sig",
    )
    (tmp_path / "key.txt").write_text(f"{KEYS[0]}\n", encoding="utf-8-sig")
    expected = compute_waterdrum(texts, owners, tok)
    for name in ("bom.jsonl", "bom.csv"):
        code, out, err = run(
            [
                "verify",
                "--file",
                tmp_path / name,
                "--watermark-tokenizer",
                tmp_path / "tok",
                "--id-column",
                "owner_id",
                "--null-keys",
                0,
            ],
            capsys,
        )
        assert code == 0 and f"overall: {expected['overall']:.4f}" in out, err
    code, out, err = run(
        [
            "verify",
            "--file",
            tmp_path / "bom.jsonl",
            "--watermark-tokenizer",
            tmp_path / "tok",
            "--id-file",
            tmp_path / "key.txt",
            "--null",
            "none",
        ],
        capsys,
    )
    expected = compute_waterdrum(texts, [KEYS[0]] * 10, tok)
    assert code == 0 and f"overall: {expected['overall']:.4f}" in out, err


def test_ctrl_c_of_a_run_that_resumes_says_so(tmp_path):
    """As a user runs it: Ctrl-C (SIGINT) in the demo is one line, exit status 130."""
    import signal

    demo = subprocess.Popen(
        [sys.executable, "-m", "waterdrum_hf", "demo", "--quick", "--output-dir", tmp_path / "d"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As in a terminal: a suite started in the background (`cmd &`) ignores SIGINT, and
        # Python then keeps it ignored in its children instead of raising KeyboardInterrupt.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert demo.stdout.readline().startswith("torch: 1 thread of the ")  # why one thread
        assert demo.stdout.readline().startswith("scoring: null=empirical")  # its own settings
        assert demo.stdout.readline().startswith("[1/")  # running: past the imports
        demo.send_signal(signal.SIGINT)
        _, err = demo.communicate(timeout=120)
    finally:  # a failed check leaves no demo running
        if demo.poll() is None:
            demo.kill()
            demo.communicate()
    assert demo.returncode == 130
    assert err.strip().splitlines() == [
        "waterdrum demo: interrupted; run the same command again to resume"
    ]


@pytest.mark.parametrize("command", ["verify", "watermark"])
def test_ctrl_c_of_a_run_that_does_not_resume(command, scored_file, monkeypatch, capsys):
    import waterdrum_hf.scoring as metric
    import waterdrum_hf.watermarking.dataset as watermarking
    from waterdrum_hf.scripts import watermark

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    tmp_path, *_ = scored_file
    monkeypatch.setattr(metric, "waterdrum_result", interrupt)
    monkeypatch.setattr(watermark, "model_tokenizer", lambda name: None)
    monkeypatch.setattr(watermark, "load_model", lambda name: None)
    monkeypatch.setattr(watermark, "check_n_gram", lambda *args: None)
    monkeypatch.setattr(watermarking, "WatermarkedDataset", interrupt)
    rows = tmp_path / "outputs.jsonl"
    argv = {
        "verify": ["verify", "--file", rows, "--watermark-tokenizer", tmp_path / "tok", "--id", 1],
        "watermark": [
            "watermark",
            "--model-name-or-path",
            "m",
            "--dataset-name",
            rows,
            "--output-file",
            tmp_path / "w.jsonl",
        ],
    }[command]
    code, _, err = run(argv, capsys)
    assert code == 130 and err.strip().splitlines() == [f"waterdrum {command}: interrupted"]
    assert not (tmp_path / "w.jsonl").exists()  # the output check left nothing behind


def test_ctrl_c_of_a_reproduction_says_a_rerun_resumes(monkeypatch, tmp_path, capsys):
    import waterdrum_hf.experiments.reproduction as reproduction

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(reproduction, "run_reproduction", interrupt)
    code, _, err = run(["reproduce", "--quick", "--output-dir", tmp_path / "r"], capsys)
    assert code == 130 and err.strip().splitlines() == [
        "waterdrum reproduce: interrupted; run the same command again to resume"
    ]


def test_many_null_keys_warn_that_they_are_slow(monkeypatch, tmp_path, capsys):
    import waterdrum_hf.experiments.demo as demo

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(demo, "run_demo", interrupt)
    code, _, err = run(["demo", "--null-keys", 20_000, "--output-dir", tmp_path / "d"], capsys)
    assert code == 130
    assert "warning: --null-keys 20000: every key is a pass over the" in err


def help_text(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    assert code == 0
    return capsys.readouterr().out


def test_unlearn_help_leaves_transformers_general_flags_to_help_all(capsys):
    """``--help`` shows the method's, TRL's and WaterDrum's flags and the few training flags a
    recipe sets; ``--help-all`` adds the rest of ``TrainingArguments``, which are taken either
    way."""
    from transformers import TrainingArguments

    from waterdrum_hf.scripts.unlearn import TRAINING_FLAGS_SHOWN

    brief = help_text(["unlearn", "--method", "npo", "--help"], capsys)
    full = help_text(["unlearn", "--method", "npo", "--help-all"], capsys)
    for flag in ("--beta", "--forget_weight", "--model_name_or_path", "--output_dir",
                 "--learning_rate", "--waterdrum_watermark_tokenizer", "--help-all"):  # fmt: skip
        assert flag in brief and flag in full
    hidden = [f.name for f in dataclasses.fields(TrainingArguments)]
    hidden = [name for name in hidden if name not in TRAINING_FLAGS_SHOWN]
    assert not [name for name in hidden if f"--{name} " in brief]
    assert all(f"--{name} " in full or f"--{name}\n" in full for name in hidden)
    assert brief.count("\n") < full.count("\n") / 2
    assert brief.startswith("usage: waterdrum unlearn --method METHOD")


def test_the_usage_line_names_the_required_options_only(capsys):
    usage = help_text(["score", "--help"], capsys).split("\n\n")[0]
    assert usage.startswith("usage: waterdrum score --output_dir OUTPUT_DIR")
    assert usage.endswith("[options]") and "--num_samples" not in usage


@pytest.mark.parametrize(
    ("flags", "scheme"),
    [
        (["--scheme", "kgw"], "kgw"),
        (["--scheme", "kgw", "--gamma", "0.25"], KGWScheme(gamma=0.25)),
        (["--k-p", "3"], WaterfallScheme(k_p=3)),
    ],
)
def test_verify_reads_the_scheme_the_data_was_watermarked_with(scored_file, flags, scheme, capsys):
    tmp_path, texts, owners, tok = scored_file
    argv = [
        "verify",
        "--file",
        tmp_path / "outputs.jsonl",
        "--watermark-tokenizer",
        tmp_path / "tok",
    ]
    code, out, _ = run([*argv, "--id-column", "owner_id", "--null-keys", 0, *flags], capsys)
    expected = compute_waterdrum(
        texts, owners, tok, config=WaterDrumConfig.from_keywords(dict(scheme=scheme))
    )
    assert code == 0 and f"overall: {expected['overall']:.4f}" in out


@pytest.mark.parametrize(
    ("flags", "message"),
    [(["--scheme", "kgw", "--k-p", "2"], "--k-p is a setting of the Waterfall scheme, not of 'kgw'"),
     (["--gamma", "0.3"], "--gamma is a setting of the KGW scheme, not of 'waterfall'"),
     (["--scheme", "kgw", "--gamma", "1.5"], "--gamma must be in (0, 1)")],
)  # fmt: skip
def test_a_setting_of_another_scheme_is_refused(scored_file, flags, message, capsys):
    tmp_path, *_ = scored_file
    argv = [
        "verify",
        "--file",
        tmp_path / "outputs.jsonl",
        "--watermark-tokenizer",
        tmp_path / "tok",
    ]
    code, _, err = run([*argv, "--id-column", "owner_id", *flags], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def audit_argv(tiny_folder, owner_rows, out, *flags):
    return [
        "audit", "--model-name-or-path", f"unlearned={tiny_folder}", "--retrained", tiny_folder,
        "--dataset-name", owner_rows, "--watermark-tokenizer", "tiny", "--forget-ids", KEYS[1],
        "--prefix-tokens", 8, "--num-samples", 1, "--max-new-tokens", 12, "--null-keys", 5,
        "--relearn-steps", 2, "--quantization-bits", 8, "--show-progress", "false", "--output-dir", out,
        *flags,
    ]  # fmt: skip


def test_audit_relearns_and_quantizes_each_model_and_writes_the_report(
    tiny_folder, owner_rows, tmp_path, capsys
):
    code, out, err = run(audit_argv(tiny_folder, owner_rows, tmp_path / "a"), capsys)
    assert code == 0, err
    saved = json.loads((tmp_path / "a" / "audits.json").read_text())
    assert saved["retrained"] == "retrained"
    assert set(saved["models"]) == {"unlearned", "retrained"}
    for entries in saved["models"].values():
        assert list(entries) == ["before", "relearned", "int8"]
        # Relearning changed the weights, so the same seeded samples differ and so do the values.
        assert entries["relearned"]["forget"] != entries["before"]["forget"]
    check = saved["settings"]["quantization_checks"]["int8"]
    assert (
        check["quantized_layers"] > 0 and check["weight_bytes_after"] < check["weight_bytes_before"]
    )
    assert saved["settings"]["relearn_texts"] == 1  # a quarter of the forget owner's 3 rows
    # The same model on both sides: every audit reads exactly what it reads on the yardstick.
    assert "excess" in out and "+0.000" in out
    report = (tmp_path / "a" / "report.md").read_text()
    assert "## Audits: does the unlearning hold?" in report and "Zhang et al., ICLR 2025" in report
    assert "(yardstick)" in report and (tmp_path / "a" / "audits.png").is_file()
    shown = out + err + report + (tmp_path / "a" / "audits.json").read_text()
    assert all(str(k) not in shown for k in KEYS)


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--forget-ids", 12345], "forget ids: id number 1 given owns no row of the data"),
        (["--audits", "pruning"], "unknown audit 'pruning'"),
        (["--quantization-bits", 3], "--quantization_bits may hold 8 and 4"),
        (["--relearn-share", 0], "--relearn_share must be in (0, 1]"),
        (["--model-name-or-path", "a=/no/such/folder"], "does not exist"),
    ],
)
def test_audit_bad_input_is_one_line_before_any_work(
    tiny_folder, owner_rows, tmp_path, flags, message, capsys
):
    code, out, err = run(audit_argv(tiny_folder, owner_rows, tmp_path / "a", *flags), capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "a").exists()


def test_audit_without_torchao_says_how_to_install_it(
    tiny_folder, owner_rows, tmp_path, monkeypatch, capsys
):
    monkeypatch.setitem(sys.modules, "torchao", None)  # as if not installed
    code, _, err = run(audit_argv(tiny_folder, owner_rows, tmp_path / "a"), capsys)
    assert code == 2 and 'pip install "waterdrum-hf[quantization]"' in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "a").exists()
