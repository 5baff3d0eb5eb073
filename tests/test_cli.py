"""The ``waterdrum`` command: every subcommand, and one-line errors (exit 2) for bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from tokenizer_builders import word_texts, word_tokenizer

from waterdrum_hf import compute_waterdrum
from waterdrum_hf.cli import main

KEYS = [3_000_000_017, 3_999_999_929]  # distinctive, so a leak would show in the output


@pytest.fixture
def scored_file(tmp_path):
    tok = word_tokenizer(4096)
    tok.save_pretrained(tmp_path / "tok")
    texts = word_texts(4096, 10, 30, seed=5)
    owners = [KEYS[i % 2] for i in range(10)]
    path = tmp_path / "outputs.jsonl"
    path.write_text("\n".join(json.dumps({"text": t, "owner_id": o}) for t, o in zip(texts, owners, strict=True)))
    (tmp_path / "forget.txt").write_text(f"{KEYS[1]}\n")
    return tmp_path, texts, owners, tok


@pytest.fixture(scope="module")
def tiny_folder(tiny_model, tmp_path_factory):
    """The tiny model saved as a local model folder, as a user would pass it."""
    folder = tmp_path_factory.mktemp("tiny")
    model, tokenizer = tiny_model
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def owner_rows(tiny_model, tmp_path_factory):
    """A local dataset: toy passages with an owner id column (two owners)."""
    from waterdrum_hf.data import toy_corpus

    corpus = toy_corpus(2, max_passages_per_owner=3)
    path = tmp_path_factory.mktemp("rows") / "rows.jsonl"
    path.write_text("\n".join(
        json.dumps({"text": t, "owner_id": KEYS[o]})
        for t, o in zip(corpus["text"], corpus["owner_id"], strict=True)
    ))
    return path


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", [[], ["--help"], ["-h"]])
def test_help_lists_every_command(argv, capsys):
    if argv:
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 0
        out = capsys.readouterr().out
    else:
        code, out, _ = run(argv, capsys)
        assert code == 0
    for command in ("demo", "score", "verify", "watermark", "unlearn"):
        assert command in out


@pytest.mark.parametrize("command", ["demo", "score", "verify", "watermark", "unlearn"])
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

    done = subprocess.run([sys.executable, "-m", "waterdrum_hf", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == f"waterdrum-hf {__version__}"


def test_verify_prints_scores_summary_and_p_values(scored_file, capsys):
    tmp_path, texts, owners, tok = scored_file
    code, out, _ = run([
        "verify", tmp_path / "outputs.jsonl", "--watermark-tokenizer", tmp_path / "tok",
        "--id-column", "owner_id", "--forget-ids-file", tmp_path / "forget.txt",
        "--null-keys", 9, "--output", tmp_path / "r.json",
    ], capsys)
    expected = compute_waterdrum(texts, owners, tok, forget_ids=[KEYS[1]], null_keys=9)
    assert code == 0
    assert f"forget: {expected['forget']:.4f}" in out and "num_skipped: 0" in out
    assert f"retain_p_value: {expected['retain_p_value']:.4f}" in out
    assert "retain: watermark" in out and "None" not in out
    assert all(str(k) not in out for k in KEYS)
    written = json.loads((tmp_path / "r.json").read_text())
    assert written["retain"] == pytest.approx(expected["retain"]) and len(written["scores"]) == 10
    assert set(written["per_owner"]) == {"owner-1", "owner-2"}


def test_verify_a_plain_text_file_with_one_id(scored_file, capsys):
    tmp_path, texts, _, tok = scored_file
    (tmp_path / "texts.txt").write_text("\n".join(texts[:3]) + "\n\n")
    (tmp_path / "key.txt").write_text("7\n")
    code, out, _ = run([
        "verify", tmp_path / "texts.txt", "--watermark-tokenizer", tmp_path / "tok", "--id-file",
        tmp_path / "key.txt", "--null-keys", 0,
    ], capsys)
    expected = compute_waterdrum(texts[:3], [7] * 3, tok)
    assert code == 0 and f"overall: {expected['overall']:.4f}" in out and "num_queries: 3" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["verify", "{tmp}/missing.jsonl", "--watermark-tokenizer", "{tmp}/tok", "--id", "1"], "does not exist"),
        (["verify", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/nope", "--id", "1"], "tokenizer '{tmp}/nope' does not exist"),
        (["verify", "{tmp}/empty.jsonl", "--watermark-tokenizer", "{tmp}/tok", "--id", "1"], "is empty"),
        (["verify", "{tmp}/broken.jsonl", "--watermark-tokenizer", "{tmp}/tok", "--id", "1"], "could not be read"),
        (["verify", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/tok", "--id-column", "owner_id", "--forget-ids-file", "{tmp}/none.txt"], "file '{tmp}/none.txt' does not exist"),
        (["verify", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/tok", "--id", "-3"], "0..2**32-1"),
        (["verify", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/tok", "--id", "x"], "non-integer"),
        (["verify", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/tok", "--id", "1", "--k-p", "0"], "must be >= 1"),
        (["verify", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/tok", "--id", "1", "--null-keys", "-5"], "must be >= 0"),
        (["verify", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/tok", "--id", "1", "--vocab-size", "50000"], "does not match the tokenizer's vocab_size"),
        (["verify", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/tok", "--id-column", "owner"], "no column 'owner'"),
        (["verify", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/tok", "--id", "1", "--forget-ids-f", "x"], "unrecognized arguments: --forget-ids-f"),
        (["unlearn", "--method", "kl", "--model", "{tmp}/tok", "--data", "{tmp}/outputs.jsonl", "--forget-ids", "1", "--output_dir", "{tmp}/u", "--max_steps", "x"], "invalid int value"),
        (["unlearn", "--method", "kl", "--model", "{tmp}/tok", "--forget-data", "{tmp}/outputs.jsonl", "--forget-ids", "1", "--output_dir", "{tmp}/u"], "with --forget-data every row is forgotten"),
        (["watermark", "--model", "{tmp}/tok", "--in", "{tmp}/outputs.jsonl", "--out", "{tmp}/w.jsonl", "--id-file", "{tmp}/none.txt"], "does not exist"),
        (["verify", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/tok"], "one of the arguments --id --id-file --id-column is required"),
        (["demo", "--bogus", "1"], "2 unrecognized arguments: --bogus"),
        (["verify", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/tok", "--id", "1", "3999999929"], "1 unrecognized arguments"),
        (["demo", "--owners", "0"], "must be >= 2"),
        (["demo", "--methods", "kl,forgetall"], "unknown unlearning method 'forgetall'"),
        (["score", "--dataset", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/tok", "--model", "{tmp}/no-model", "--out", "{tmp}/o"], "model '{tmp}/no-model' does not exist"),
        (["score", "--dataset", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/tok", "--generations", "{tmp}/g.jsonl", "--id-column", "who", "--out", "{tmp}/o"], "no column 'who'"),
        (["score", "--dataset", "waterdrum-ax", "--config", "forget_99", "--watermark-tokenizer", "{tmp}/tok", "--generations", "{tmp}/g.jsonl", "--out", "{tmp}/o"], "unknown config 'forget_99'"),
        (["score", "--dataset", "{tmp}/outputs.jsonl", "--watermark-tokenizer", "{tmp}/tok", "--out", "{tmp}/o"], "give --model"),
        (["unlearn", "--method", "forgetall", "--model", "x"], "unknown unlearning method 'forgetall'; known: gradascent"),
        (["unlearn", "--model", "x"], "--method is required"),
        (["watermark", "--model", "{tmp}/no-model", "--in", "{tmp}/outputs.jsonl", "--out", "{tmp}/w.txt"], "use a .jsonl"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(scored_file, argv, message, capsys):
    tmp_path, *_ = scored_file
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "broken.jsonl").write_text('{"text": "w1 w2", "owner_id": 1}\n{"text": \n')
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
    assert all(str(k) not in err for k in KEYS)


def test_score_writes_the_report_and_rescores_saved_generations(tiny_folder, owner_rows, tmp_path, capsys):
    common = ["--dataset", owner_rows, "--watermark-tokenizer", tiny_folder, "--forget-ids", KEYS[1],
              "--null-keys", 9, "--prefix-tokens", 8]
    code, out, _ = run(["score", "--model", tiny_folder, *common, "--num-samples", 2,
                        "--max-new-tokens", 8, "--out", tmp_path / "a"], capsys)
    assert code == 0 and "forget: " in out
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
    code, _, _ = run(["score", *common, "--generations", tmp_path / "a" / "generations.jsonl",
                      "--out", tmp_path / "b"], capsys)
    again = json.loads((tmp_path / "b" / "report.json").read_text())["models"]["model"]
    assert code == 0 and again["forget"] == pytest.approx(result["forget"])


def test_score_loads_a_peft_adapter_folder(tiny_folder, owner_rows, tmp_path, capsys):
    peft = pytest.importorskip("peft")
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(tiny_folder)
    adapter = peft.get_peft_model(base, peft.LoraConfig(r=2, target_modules=["q_proj"]))
    adapter.save_pretrained(tmp_path / "adapter")
    code, out, _ = run(["score", "--model", tmp_path / "adapter", "--dataset", owner_rows,
                        "--watermark-tokenizer", tiny_folder, "--num-samples", 1, "--max-new-tokens", 6,
                        "--null-keys", 0, "--out", tmp_path / "o"], capsys)
    assert code == 0 and "overall: " in out


def test_watermark_a_file(tiny_folder, owner_rows, tmp_path, capsys):
    from waterdrum_hf import verify_texts

    code, out, _ = run(["watermark", "--model", tiny_folder, "--in", owner_rows, "--out", tmp_path / "w.jsonl",
                        "--num-beam-groups", 1, "--beams-per-group", 2, "--max-new-tokens", 16,
                        "--no-repeat-ngram-size", 3, "--seed", 0], capsys)
    assert code == 0 and "Watermarked 6 rows" in out
    rows = [json.loads(line) for line in (tmp_path / "w.jsonl").read_text().splitlines()]
    assert {"text", "owner_id", "text_original", "watermark_score"} <= set(rows[0])
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_folder)
    scores = verify_texts([r["text"] for r in rows], [r["owner_id"] for r in rows], tokenizer)
    assert scores == pytest.approx([r["watermark_score"] for r in rows])


def test_unlearn_with_a_registered_method(tiny_folder, owner_rows, tmp_path, capsys):
    from transformers import AutoModelForCausalLM

    code, out, _ = run(["unlearn", "--method", "kl", "--model", tiny_folder, "--data", owner_rows,
                        "--forget-ids", KEYS[1], "--output_dir", tmp_path / "kl", "--max_steps", 2,
                        "--per_device_train_batch_size", 2, "--use_cpu", "true", "--report_to", "none",
                        "--save_strategy", "no"], capsys)
    assert code == 0 and "saved to" in out
    unlearned = AutoModelForCausalLM.from_pretrained(tmp_path / "kl")
    original = AutoModelForCausalLM.from_pretrained(tiny_folder)
    changed = [not (a == b).all() for a, b in zip(unlearned.parameters(), original.parameters(), strict=True)]
    assert any(changed)
    try:
        code = main(["unlearn", "--method", "npo", "--help"])
    except SystemExit as exit_:
        code = exit_.code
    assert code == 0 and "--beta" in capsys.readouterr().out
