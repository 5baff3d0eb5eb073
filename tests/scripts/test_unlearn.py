"""``waterdrum unlearn``: a registered method, its flags and its help."""

from __future__ import annotations

import dataclasses

from tests.scripts.cli_cases import (
    KEYS,
    UNLEARN_METHOD_FLAGS,
    captured_config,
    help_text,
    run,
)
from waterdrum_hf.scripts import main


def test_unlearn_method_flags_build_what_hf_argument_parser_builds(monkeypatch, tmp_path):
    from transformers import HfArgumentParser

    from waterdrum_hf import trainers

    (expected,) = HfArgumentParser(trainers.get("kl")[1]).parse_args_into_dataclasses(
        UNLEARN_METHOD_FLAGS
    )
    config = captured_config(
        "unlearn",
        ["kl", "--model_name_or_path", "tiny", "--dataset_name", "{rows}",
         *UNLEARN_METHOD_FLAGS],
        monkeypatch,
        tmp_path,
    )  # fmt: skip
    loading = {"model_init_kwargs"}  # the script fills it from ModelConfig, as TRL's sft.py does
    assert {k: v for k, v in config.to_dict().items() if k not in loading} == {
        k: v for k, v in expected.to_dict().items() if k not in loading
    }
    assert config.max_steps == 2 and config.model_init_kwargs["dtype"] is not None


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
        code = main(["unlearn", "npo", "--help"])
    except SystemExit as exit_:
        code = exit_.code
    assert code == 0 and "--beta" in capsys.readouterr().out


def test_unlearn_help_leaves_transformers_general_flags_to_help_all(capsys):
    """``--help`` shows the method's, TRL's and WaterDrum's flags and the few training flags a
    recipe sets; ``--help-all`` adds the rest of ``TrainingArguments``, which are taken either
    way."""
    from transformers import TrainingArguments

    from waterdrum_hf.scripts.unlearn import TRAINING_FLAGS_SHOWN

    brief = help_text(["unlearn", "npo", "--help"], capsys)
    full = help_text(["unlearn", "npo", "--help-all"], capsys)
    for flag in ("--beta", "--forget_weight", "--model_name_or_path", "--output_dir",
                 "--learning_rate", "--waterdrum_watermark_tokenizer", "--help-all"):  # fmt: skip
        assert flag in brief and flag in full
    hidden = [f.name for f in dataclasses.fields(TrainingArguments)]
    hidden = [name for name in hidden if name not in TRAINING_FLAGS_SHOWN]
    assert not [name for name in hidden if f"--{name} " in brief]
    assert all(f"--{name} " in full or f"--{name}\n" in full for name in hidden)
    assert brief.count("\n") < full.count("\n") / 2
    assert brief.startswith("usage: waterdrum unlearn npo [--config recipe.yaml]")
    shared = help_text(["unlearn", "--help"], capsys)  # no method yet: what every method takes
    assert shared.startswith("usage: waterdrum unlearn METHOD [--config recipe.yaml]")
    assert "--beta" not in shared and "methods: gradascent, graddiff" in shared
