"""``waterdrum score``: flags, the report, saved generations, the Hub formats, adapters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.scripts.cli_cases import (
    KEYS,
    SCORE_SAVED,
    lm_eval_samples,
    run,
)
from waterdrum_hf import waterdrum_metrics
from waterdrum_hf.scripts import main


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


@pytest.mark.end_to_end
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
    expected = waterdrum_metrics(
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
