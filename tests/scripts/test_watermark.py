"""``waterdrum watermark``: a file of owners' rows watermarked."""

from __future__ import annotations

import json

import pytest

from tests.scripts.cli_cases import (
    run,
)


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
