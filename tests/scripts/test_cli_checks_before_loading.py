"""Input a command can check without the model's weights is checked before they load: the one
error line is not preceded by a loading bar, and a mistake costs no loading time."""

from __future__ import annotations

import json

import pytest
from transformers import AutoModelForCausalLM

from waterdrum_hf.data import toy_corpus
from waterdrum_hf.scripts import main

KEY = 3_000_000_017


@pytest.fixture
def no_weights(monkeypatch):
    """Loading any causal LM's weights fails the test."""

    def load(*args, **kwargs):
        raise AssertionError("the model's weights were loaded before the input was checked")

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", load)


def run(argv, capsys):
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


def rows_file(path, **columns):
    corpus = toy_corpus(2, max_passages_per_owner=2)
    rows = [{"text": text, **columns} for text in corpus["text"]]
    path.write_text("\n".join(json.dumps(row) for row in rows))
    return path


def test_unlearn_checks_the_callbacks_data_before_the_weights(
    tiny_folder, tmp_path, no_weights, capsys
):
    """The rows have a forget column but no owner ids: the callback cannot find the forget
    owners, which it says before the trainer loads the model."""
    rows = rows_file(tmp_path / "rows.jsonl", forget=True)
    argv = ["unlearn", "kl", "--model_name_or_path", tiny_folder]
    argv += ["--dataset_name", rows, "--output_dir", tmp_path / "out", "--use_cpu", "true"]
    code, err = run([*argv, "--waterdrum_watermark_tokenizer", tiny_folder], capsys)
    assert code == 2
    assert "owner_id" in err and len(err.strip().splitlines()) == 1


def test_unlearn_checks_the_forget_column_before_the_weights(
    tiny_folder, tmp_path, no_weights, capsys
):
    rows = rows_file(tmp_path / "rows.jsonl", forget="yes")
    argv = ["unlearn", "kl", "--model_name_or_path", tiny_folder]
    argv += ["--dataset_name", rows, "--output_dir", tmp_path / "out", "--use_cpu", "true"]
    code, err = run(argv, capsys)
    assert code == 2 and "forget" in err and "bool" in err
    assert len(err.strip().splitlines()) == 1


def test_score_checks_the_queries_before_the_weights(tiny_folder, tmp_path, no_weights, capsys):
    """The rows' questions are numbers: no query can be made of them."""
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps({"question": n, "owner_id": KEY}) for n in (5, 7)))
    argv = ["score", "--model-name-or-path", tiny_folder, "--dataset-name", rows]
    code, err = run(
        [*argv, "--watermark-tokenizer", tiny_folder, "--output-dir", tmp_path / "o"], capsys
    )
    assert code == 2 and "questions[0] must be a str, got int" in err
    assert len(err.strip().splitlines()) == 1


def test_watermark_checks_the_n_gram_before_the_weights(tiny_folder, tmp_path, no_weights, capsys):
    rows = rows_file(tmp_path / "rows.jsonl", owner_id=KEY)
    argv = ["watermark", "--model-name-or-path", tiny_folder, "--dataset-name", rows]
    code, err = run([*argv, "--output-file", tmp_path / "w.jsonl", "--n-gram", 100_000], capsys)
    assert code == 2 and "--n-gram 100000 is longer than every text" in err
