"""The ``waterdrum`` command line."""

from __future__ import annotations

import json

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


def test_verify_prints_set_values_and_writes_the_full_result(scored_file, capsys):
    tmp_path, texts, owners, tok = scored_file
    code = main([
        "verify", str(tmp_path / "outputs.jsonl"), "--tokenizer", str(tmp_path / "tok"),
        "--forget-ids-file", str(tmp_path / "forget.txt"), "--output", str(tmp_path / "r.json"),
    ])
    printed = capsys.readouterr().out
    expected = compute_waterdrum(texts, owners, tok, forget_ids=[KEYS[1]])
    assert code == 0
    assert f"forget: {expected['forget']:.4f}" in printed and "num_skipped: 0" in printed
    assert "None" not in printed
    assert all(str(k) not in printed for k in KEYS)
    written = json.loads((tmp_path / "r.json").read_text())
    assert written["retain"] == pytest.approx(expected["retain"]) and len(written["scores"]) == 10
    assert set(written["per_owner"]) == {"owner-1", "owner-2"}


def test_verify_with_null_keys_prints_p_values_and_no_none(scored_file, capsys):
    tmp_path, *_ = scored_file
    (tmp_path / "forget.txt").write_text("123\n")  # owns no row: no forget value at all
    with pytest.warns(UserWarning, match="1 of 1 forget_ids own no query"):
        code = main([
            "verify", str(tmp_path / "outputs.jsonl"), "--tokenizer", str(tmp_path / "tok"),
            "--forget-ids-file", str(tmp_path / "forget.txt"), "--null-keys", "9",
        ])
    printed = capsys.readouterr().out
    assert code == 0 and "retain_p_value: " in printed and "num_missing_forget_ids: 1" in printed
    assert "None" not in printed and "forget: " not in printed


def test_verify_rejects_a_missing_column(scored_file):
    tmp_path, *_ = scored_file
    with pytest.raises(SystemExit):
        main(["verify", str(tmp_path / "outputs.jsonl"), "--tokenizer", str(tmp_path / "tok"),
              "--id-column", "owner"])


def test_unknown_command_is_a_usage_error(capsys):
    assert main(["frobnicate"]) == 2
    assert "usage: waterdrum" in capsys.readouterr().err
