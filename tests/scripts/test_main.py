"""The ``waterdrum`` command (``waterdrum_hf.scripts``): every subcommand, one-line errors (exit 2), Ctrl-C."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys

import pytest

from tests.scripts.cli_cases import (
    COMMAND_NAMES,
    KEYS,
    VERIFY,
    run,
)
from waterdrum_hf import waterdrum_metrics
from waterdrum_hf.scripts import COMMANDS, main


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


def test_version_and_module_entry_point():
    from waterdrum_hf import __version__

    done = subprocess.run(
        [sys.executable, "-m", "waterdrum_hf", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.strip() == f"waterdrum-hf {__version__}"


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
            ["unlearn", "forgetall", "--model_name_or_path", "x"],
            "unknown unlearning method 'forgetall'; known: gradascent",
        ),
        (
            ["unlearn", "--model_name_or_path", "x"],
            "name the method first: waterdrum unlearn METHOD [options] (methods: gradascent",
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
    expected = waterdrum_metrics(texts, owners, tok)
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
    expected = waterdrum_metrics(texts, [KEYS[0]] * 10, tok)
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
