"""What the command tests share: owner keys, the runner, the commands' config cases."""

from __future__ import annotations

import dataclasses
import json

import pytest

from waterdrum_hf.audits import AuditConfig
from waterdrum_hf.experiments.demo import DemoConfig
from waterdrum_hf.experiments.reproduction import ReproductionConfig
from waterdrum_hf.scripts import COMMANDS, main
from waterdrum_hf.watermarking.config import WatermarkingConfig

KEYS = [3_000_000_017, 3_999_999_929]  # distinctive, so a leak would show in the output


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


COMMAND_NAMES = list(COMMANDS)


CONFIGS = {
    "audit": AuditConfig,
    "demo": DemoConfig,
    "reproduce": ReproductionConfig,
    "watermark": WatermarkingConfig,
}


@dataclasses.dataclass
class Settings:
    steps: int = 1


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
    monkeypatch.setattr(
        trainers, "trainer_for", lambda config: lambda **kwargs: capture(kwargs["args"])
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


SCORE_SAVED = ["score", "--generations", "x.jsonl", "--dataset-name", "d.jsonl"]


SCORE_SAVED += ["--watermark-tokenizer", "tiny", "--output-dir", "o"]


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


def help_text(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    assert code == 0
    return capsys.readouterr().out


def audit_argv(tiny_folder, owner_rows, out, *flags):
    return [
        "audit", "--model-name-or-path", f"unlearned={tiny_folder}", "--retrained", tiny_folder,
        "--dataset-name", owner_rows, "--watermark-tokenizer", "tiny", "--forget-ids", KEYS[1],
        "--prefix-tokens", 8, "--num-samples", 1, "--max-new-tokens", 12, "--null-keys", 5,
        "--relearn-steps", 2, "--quantization-bits", 8, "--show-progress", "false", "--output-dir", out,
        *flags,
    ]  # fmt: skip
