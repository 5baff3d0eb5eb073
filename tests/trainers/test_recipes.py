"""examples/recipes/<method>.yaml: TRL ``--config`` recipes at the paper's settings, one per
method, read by TRL's own parser in the patched ``sft.py`` and run by it."""

from __future__ import annotations

import importlib.util
import runpy
import sys
from pathlib import Path

import pytest
import yaml
from datasets import Dataset
from trainer_setup import FORGET_QA, RETAIN_QA
from trl_scripts import EXPECTED_TERMS, logged, patched_sft_script, script_args

from waterdrum_hf import trainers

RECIPES = Path(__file__).parents[2] / "examples" / "recipes"

PAPER = {  # REFERENCE section 6: the WaterDrum paper's unlearning settings
    "learning_rate": 1e-4,
    "num_train_epochs": 5,
    "per_device_train_batch_size * gradient_accumulation_steps": 32,
}
METHOD_SETTINGS = {
    "gradascent": {"forget_weight": 1.0, "retain_weight": 0.0},
    "graddiff": {"forget_weight": 1.0, "retain_weight": 1.0, "retain_loss": "nll"},
    "kl": {"forget_weight": 1.0, "retain_weight": 1.0},
    "scrub": {"retain_nll_weight": 0.99, "retain_kl_weight": 0.001, "num_max_phases": 5},
    "npo": {"beta": 0.1, "retain_weight": 1.0},
    "simnpo": {"beta": 2.5, "gamma": 0.0, "retain_weight": 1.0},
    "idkdpo": {"beta": 0.1, "retain_weight": 1.0},
    "idknll": {"retain_weight": 1.0},
    "taskvector": {"alpha": 5.0, "retain_weight": 0.0},
}


def parse(script: Path, argv: list[str]):
    spec = importlib.util.spec_from_file_location(script.stem, script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_parser().parse_args_and_config(argv)


def test_there_is_one_recipe_per_method():
    assert sorted(p.stem for p in RECIPES.glob("*.yaml")) == sorted(trainers.available())


@pytest.mark.parametrize("method", trainers.available())
def test_recipes_hold_the_papers_settings(method, tmp_path):
    script = patched_sft_script(method, tmp_path)
    recipe = RECIPES / f"{method}.yaml"
    assert yaml.safe_load(recipe.read_text())["bf16"] is True  # for the GPU it is meant for
    argv = ["--config", str(recipe), "--model_name_or_path", "m", "--bf16", "false"]
    script_args, config, model_args, _ = parse(script, argv)
    assert isinstance(config, trainers.get(method)[1])
    assert config.learning_rate == PAPER["learning_rate"]
    assert config.num_train_epochs == PAPER["num_train_epochs"]
    assert config.per_device_train_batch_size * config.gradient_accumulation_steps == 32
    assert (model_args.use_peft, model_args.lora_r, model_args.lora_alpha) == (True, 8, 32)
    assert model_args.lora_dropout == 0.05 and model_args.lora_target_modules == "all-linear"
    assert (config.question_column, config.answer_column, config.forget_column) == (
        "question",
        "answer",
        "forget",
    )
    for name, value in METHOD_SETTINGS[method].items():
        assert getattr(config, name) == value, name
    assert script_args.dataset_name == "tofu_forget10"


def tofu_folder(folder: Path) -> Path:
    folder.mkdir()
    rows = FORGET_QA + RETAIN_QA
    Dataset.from_dict(
        {
            "question": [r["question"] for r in rows],
            "answer": [r["answer"] for r in rows],
            "forget": [True] * len(FORGET_QA) + [False] * len(RETAIN_QA),
        }
    ).to_parquet(folder / "train.parquet")
    return folder


@pytest.mark.end_to_end
@pytest.mark.parametrize("method", trainers.available())
def test_recipes_run_in_trls_script(method, tiny_folder, tmp_path, monkeypatch):
    script = patched_sft_script(method, tmp_path)
    output = tmp_path / "out"
    data = tofu_folder(tmp_path / "tofu")
    argv = [
        "--config", str(RECIPES / f"{method}.yaml"),
        # The recipe, on a CPU for two steps of two pairs instead of the paper's GPU run.
        *script_args(method, "full", tiny_folder, data, output),
        "--bf16", "false", "--dtype", "float32", "--gradient_accumulation_steps", "1",
    ]  # fmt: skip
    monkeypatch.setattr(sys, "argv", [str(script), *argv])
    runpy.run_path(str(script), run_name="__main__")
    terms = set().union(*(e for e in logged(output) if "loss" in e))
    assert EXPECTED_TERMS[method] <= terms
    assert (output / "README.md").exists()
    # The recipe's LoRA (TaskVector saves the merged model).
    assert (output / "adapter_config.json").exists() == (method != "taskvector")


def unlearn(method: str, argv: list[str]) -> int:
    from waterdrum_hf.scripts import main

    return main(["unlearn", method, "--config", str(RECIPES / f"{method}.yaml"), *argv])


# Every recipe is read and trained in TRL's script above, and the command's path is the same
# for every method: another method's run here only repeats npo's (`slow`).
@pytest.mark.parametrize(
    "method",
    [pytest.param(m, marks=[] if m == "npo" else pytest.mark.slow) for m in trainers.available()],
)
def test_recipes_run_as_they_are_in_waterdrum_unlearn(method, tiny_folder, tmp_path):
    """`waterdrum unlearn M --config recipe.yaml` reads the recipe with TRL's own groups
    (ScriptArguments, ModelConfig: the recipe's LoRA) and trains with every loss term logged."""
    output = tmp_path / "out"
    data = tofu_folder(tmp_path / "tofu")
    argv = [
        *script_args(method, "full", tiny_folder, data, output),
        "--bf16", "false", "--dtype", "float32", "--gradient_accumulation_steps", "1",
    ]  # fmt: skip
    assert unlearn(method, argv) == 0
    terms = set().union(*(e for e in logged(output) if "loss" in e))
    assert EXPECTED_TERMS[method] <= terms
    assert (output / "adapter_config.json").exists() == (method != "taskvector")


def test_waterdrum_settings_add_the_callback_its_curves_and_card_values(tiny_folder, tmp_path):
    """Any --waterdrum_* setting adds the WaterDrumCallback: its values are logged at every
    evaluation step and the last ones go into the model card."""
    output = tmp_path / "out"
    data = tofu_folder(tmp_path / "tofu")
    rows = Dataset.from_parquet(str(data / "train.parquet"))
    owners = [1000 + i % 3 if forget else 2000 + i % 2 for i, forget in enumerate(rows["forget"])]
    rows.add_column("owner_id", owners).to_parquet(data / "train.parquet")
    argv = [
        *script_args("npo", "full", tiny_folder, data, output),
        "--bf16", "false", "--dtype", "float32", "--gradient_accumulation_steps", "1",
        "--waterdrum_watermark_tokenizer", "tiny", "--waterdrum_eval_steps", "1",
        "--waterdrum_max_new_tokens", "4", "--waterdrum_prefix_tokens", "4",
    ]  # fmt: skip
    assert unlearn("npo", argv) == 0
    curve = [e for e in logged(output) if "waterdrum/forget" in e]
    assert [e["step"] for e in curve] == [0, 1, 2]  # before training, then every step
    assert {"waterdrum/retain", "waterdrum/forget_p_value"} <= set(curve[-1])
    card = (output / "README.md").read_text()
    assert f"| `waterdrum/forget` | {curve[-1]['waterdrum/forget']:.4f} |" in card


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nope"], "unknown unlearning method 'nope'; known: gradascent"),
        ([], "name the method first: waterdrum unlearn METHOD"),
        (["npo", "--waterdrum_null_keys", "5"], "give --waterdrum_watermark_tokenizer"),
        (["npo", "--model_name_or_path", "./no/such"], "does not exist"),
    ],
)
def test_unlearn_refuses_bad_input_in_one_line(argv, message, tmp_path, capsys):
    from waterdrum_hf.scripts import main

    base = [
        "--dataset_name",
        str(tofu_folder(tmp_path / "tofu")),
        "--output_dir",
        str(tmp_path / "o"),
    ]
    capsys.readouterr()  # the data's own progress bars
    if "--model_name_or_path" not in argv:
        base += ["--model_name_or_path", "tiny"]
    try:
        code = main(["unlearn", *argv, *base])
    except SystemExit as exit_:  # argparse's own errors exit
        code = exit_.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def readme_unlearn_line() -> list[str]:
    """The README's "Unlearn with a recipe" command, its words as printed."""
    import re
    import shlex

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("### Unlearn with a recipe", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)[1]
    return shlex.split(block.replace("\\\n", " "))


@pytest.mark.end_to_end
def test_the_readmes_unlearn_command_runs_as_printed_on_a_cpu(
    tiny_folder, tmp_path, monkeypatch, capsys
):
    """Only the names the README leaves to the user are filled in (M: the model, rows.jsonl:
    the data, T: the watermarking tokenizer, out: the output folder); the recipe's bf16, meant
    for a GPU, is turned off with a warning instead of stopping the run."""
    from trainer_setup import FORGET_QA, RETAIN_QA

    from waterdrum_hf.scripts import main

    words = readme_unlearn_line()
    assert words[:2] == ["waterdrum", "unlearn"]
    rows = tmp_path / "rows.jsonl"
    Dataset.from_list(
        [
            {**row, "forget": forget, "owner_id": 1000 + i % 2 if forget else 2000 + i % 3}
            for i, (row, forget) in enumerate(
                [(r, True) for r in FORGET_QA] + [(r, False) for r in RETAIN_QA]
            )
        ]
    ).to_json(rows)
    filled = {"M": str(tiny_folder), "rows.jsonl": str(rows), "T": str(tiny_folder)}
    filled["out"] = str(tmp_path / "out")
    argv = [filled.get(word, word) for word in words[1:]]
    assert sum(word in filled for word in words) == 4  # each placeholder, once
    monkeypatch.chdir(Path(__file__).parents[2])  # the recipe's path, as printed
    with pytest.warns(UserWarning, match="bf16 turned off: no GPU here runs bf16"):
        assert main(argv) == 0
    assert (tmp_path / "out" / "adapter_config.json").exists()
    assert "waterdrum/forget" in (tmp_path / "out" / "README.md").read_text()
