"""The small owner data the vLLM tests score: two owners' toy passages (ids 1000 and 1001)
as the JSON Lines file ``waterdrum score --dataset-name`` and the lm-eval tasks take, and the
forget ids file naming the second owner; and the check that an lm-eval run's values are those
``waterdrum score`` gives its samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FORGET_ID = 1001


def owner_files(folder: Path, passages: int = 2) -> tuple[Any, Path, Path]:
    """``(corpus, rows.jsonl, forget.txt)`` written into ``folder``."""
    from waterdrum_hf.data import toy_corpus

    corpus = toy_corpus(2, max_passages_per_owner=passages)
    rows = folder / "rows.jsonl"
    rows.write_text("".join(
        json.dumps({"text": text, "owner_id": 1000 + owner}) + "\n"
        for text, owner in zip(corpus["text"], corpus["owner_id"], strict=True)
    ))  # fmt: skip
    forget = folder / "forget.txt"
    forget.write_text(f"{FORGET_ID}\n")
    return corpus, rows, forget


def assert_lm_eval_values_are_scores(output: Path, rows: Path, forget: Path, out: Path) -> None:
    """The WaterDrum values lm-eval wrote under ``output`` equal ``waterdrum score
    --generations`` on the samples file it wrote there (report in ``out``)."""
    from waterdrum_hf.scripts import main

    [results] = output.rglob("results_*.json")
    [samples] = output.rglob("samples_waterdrum_local_*.jsonl")
    code = main([
        "score", "--dataset-name", str(rows), "--watermark-tokenizer", "tiny", "--forget-ids-file",
        str(forget), "--generations", str(samples), "--null-keys", "0", "--output-dir", str(out),
    ])  # fmt: skip
    assert code == 0
    ours = json.loads((out / "report.json").read_text())["models"]["model"]
    reported = json.loads(results.read_text())["results"]["waterdrum_local"]
    for name in ("forget", "retain", "separability_auroc"):
        assert reported[f"{name},all_samples"] == ours[name], name
