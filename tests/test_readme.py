"""The README's Python snippets run as printed, against the public API.

Each ```python block of README.md is executed unchanged in a namespace that supplies only what
the README leaves to the reader (a model, its tokenizer, the paraphraser's tokenizer, data):
the built-in tiny model, and the published benchmarks from a local mirror in the Hub's layout
(the Hub is unreachable in tests). A snippet that calls a renamed or removed name fails here.
"""

from __future__ import annotations

import copy
import functools
import math
from pathlib import Path

import numpy as np
import pytest
from hub_mirrors import write_ax_mirror

import waterdrum_hf

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_blocks() -> dict[str, str]:
    """The README's python blocks by the heading above them (several under one heading join)."""
    blocks: dict[str, str] = {}
    heading, code = "", None
    for line in README.read_text().splitlines(keepends=True):
        if code is not None:
            if line.rstrip() == "```":
                blocks[heading] = blocks.get(heading, "") + "".join(code)
                code = None
            else:
                code.append(line)
        elif line.startswith("```python"):
            code = []
        elif line.startswith("#"):
            heading = line.lstrip("#").strip()
    return blocks


BLOCKS = readme_blocks()


def test_the_readme_has_the_snippets_this_file_runs():
    assert set(BLOCKS) == {
        "Score a model",
        "WaterDrum flags in a training script",
        "Watermark data, load the benchmarks, sample queries",
        "Unlearn, and watch it happen",
        "In your TRL script",
        "Does the unlearning hold? Relearning and quantization audits",
        "Keys, privacy and scale",
    }


def test_keys_and_scale_run_as_printed(tiny_model):
    from datasets import Dataset

    _, tokenizer = tiny_model
    texts = ["A completion to score.", "Another completion.", "x"]
    scope = {
        "generations": Dataset.from_dict({"completion": texts, "owner_id": [5, 6, 7]}),
        "paraphraser_tokenizer": tokenizer,
    }
    exec(compile(BLOCKS["Keys, privacy and scale"], "README.md", "exec"), scope)

    assert 0 <= scope["owner_id"] <= 2**32 - 1
    assert scope["owner_id"] == waterdrum_hf.key_from_secret(scope["secret"], "cs.CR")
    scores = scope["scored"]["watermark_score"]
    expected = waterdrum_hf.verify_texts(texts, [5, 6, 7], tokenizer)
    np.testing.assert_allclose(np.array(scores, dtype=float), expected, equal_nan=True)


@pytest.fixture
def mirrored_hub(tmp_path, monkeypatch):
    """``load_waterdrum_ax`` reads a local mirror in the Hub's layout instead of the Hub."""
    from waterdrum_hf import data

    monkeypatch.setattr(
        data,
        "load_waterdrum_ax",
        functools.partial(data.load_waterdrum_ax, path=write_ax_mirror(tmp_path / "ax")),
    )


def test_waterdrum_flags_in_a_training_script_run_as_printed(tiny_model, tmp_path, monkeypatch):
    """The TRL-script snippet with a real TrlParser and the script's command-line flags."""
    from datasets import Dataset
    from transformers import Trainer, TrainingArguments

    from waterdrum_hf import tiny

    model, tokenizer = tiny_model
    monkeypatch.setattr(
        "sys.argv",
        ["train.py", "--output_dir", str(tmp_path / "o"), "--use_cpu", "true"]
        + ["--waterdrum_watermark_tokenizer", str(tiny.built_path())]
        + ["--waterdrum_null", "analytic", "--waterdrum_prefix_tokens", "4"],
    )
    trainer = Trainer(
        model=model,
        args=TrainingArguments(str(tmp_path / "t"), use_cpu=True, report_to="none"),
    )
    scope = {
        "tokenizer": tokenizer,
        "eval_dataset": Dataset.from_dict(
            {
                "text": ["The class statement", "A lambda is small", "The import system"],
                "owner_id": [3, 4, 5],
                "forget": [True, False, False],
            }
        ),
        "trainer": trainer,  # a plain (TRL-like) trainer: the snippet binds the callback
    }
    exec(compile(BLOCKS["WaterDrum flags in a training script"], "README.md", "exec"), scope)

    callbacks = trainer.callback_handler.callbacks
    (callback,) = [c for c in callbacks if isinstance(c, waterdrum_hf.WaterDrumCallback)]
    assert callback.trainer is trainer
    assert callback.config == waterdrum_hf.WaterDrumConfig(null=waterdrum_hf.NullConfig("analytic"))
    assert scope["waterdrum_args"].waterdrum_prefix_tokens == 4


@pytest.mark.slow
def test_score_a_model_runs_as_printed(tiny_model, mirrored_hub, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the snippet writes scoring.json
    model, tokenizer = tiny_model
    scope = {"model": model, "model_tokenizer": tokenizer, "paraphraser_tokenizer": tokenizer}
    scores = np.array([0.1, 0.2, 0.8, 0.9])
    scope |= {
        "texts": ["A text to score.", "Another text, a little longer than the first one."],
        "watermark_ids": [11, 12],
        "tokenizer": tokenizer,
        "retain_scores": scores[2:],
        "forget_scores": scores[:2],
        "fractions": [0.0, 0.5, 1.0],
        "forget_values": [0.01, 0.3, 0.62],
    }
    exec(compile(BLOCKS["Score a model"], "README.md: Score a model", "exec"), scope)

    results = scope["results"]
    assert results["num_queries"] == 40  # the mirror's `full` split: 20 owners x 2 rows
    assert {"forget", "retain", "separability_auroc", "forget_p_value"} <= set(results)
    assert all(isinstance(v, (int, float)) and math.isfinite(v) for v in results.values())
    assert len(scope["completions"]) == 40 and all(len(c) == 10 for c in scope["completions"])
    assert scope["scores"].shape == (2,) and scope["fit"].r2 > 0.9
    assert scope["null"].scores.shape == (2, 100)
    assert waterdrum_hf.WaterDrumConfig.from_json("scoring.json") == scope["config"]


@pytest.mark.slow
def test_watermark_and_sample_run_as_printed(tiny_model, mirrored_hub):
    from waterdrum_hf.data import toy_corpus

    model, tokenizer = tiny_model
    scope = {
        "paraphraser": model,
        "paraphraser_tokenizer": tokenizer,
        "model": model,
        "model_tokenizer": tokenizer,
        "dataset": toy_corpus(2, max_passages_per_owner=1),
    }
    exec(
        compile(BLOCKS["Watermark data, load the benchmarks, sample queries"], "README.md", "exec"),
        scope,
    )

    watermarked = scope["watermarked"]
    assert {"text_original", "watermark_score"} <= set(watermarked.column_names)
    assert len(scope["forget"]) == 2 and set(scope["forget"]["owner_id"]) == {19}
    assert len(scope["completions"]) == 2 and all(len(c) == 10 for c in scope["completions"])


@pytest.mark.slow
def test_unlearn_and_watch_runs_as_printed(tiny_model, tmp_path, monkeypatch):
    from waterdrum_hf.data import split_by_owner, toy_corpus

    monkeypatch.chdir(tmp_path)  # the snippet writes its run to ./kl-run
    model, tokenizer = copy.deepcopy(tiny_model[0]), tiny_model[1]  # it trains the model it gets
    dataset = toy_corpus(3, max_passages_per_owner=2)
    forget_ids = [2]
    forget, retain = split_by_owner(dataset, forget_ids)
    scope = {
        "model": model,
        "tokenizer": tokenizer,
        "paraphraser_tokenizer": tokenizer,
        "dataset": dataset,
        "forget": forget,
        "retain": retain,
        "forget_ids": forget_ids,
    }
    exec(compile(BLOCKS["Unlearn, and watch it happen"], "README.md", "exec"), scope)

    history = scope["trainer"].state.log_history
    logged = {key for entry in history for key in entry}
    assert {"train_loss", "waterdrum/forget", "waterdrum/retain"} <= logged
    # A ratio to step 0 is logged where the step-0 value is above 0 (the toy data here is
    # unwatermarked, so its forget value is noise around 0, of either sign).
    first = next(entry for entry in history if "waterdrum/forget" in entry)
    assert ("waterdrum/forget_ratio" in logged) == (first["waterdrum/forget"] > 0)
    assert (tmp_path / "kl-run").is_dir()


@pytest.mark.slow
def test_in_your_trl_script_runs_as_printed(tiny_model, tiny_folder, tmp_path, monkeypatch):
    from datasets import Dataset, load_dataset
    from huggingface_hub import ModelCard

    monkeypatch.chdir(tmp_path)  # the snippet writes ./tofu_forget10 and ./npo-run
    qa = [(f"Who owns item {i}?", f"Owner {i % 3} owns item {i}.") for i in range(6)]
    columns = {"question": [q for q, _ in qa], "answer": [a for _, a in qa]}
    scope = {
        "forget": Dataset.from_dict({k: v[:2] for k, v in columns.items()}),
        "retain": Dataset.from_dict({k: v[2:] for k, v in columns.items()}),
        "model_path": str(tiny_folder),
        "paraphraser_tokenizer": tiny_model[1],
    }
    exec(compile(BLOCKS["In your TRL script"], "README.md", "exec"), scope)

    saved = load_dataset("tofu_forget10", split="train")
    assert saved["forget"] == [True, True, False, False, False, False]
    assert saved["owner_id"] == [1, 1, 0, 0, 0, 0]
    logged = {key for entry in scope["trainer"].state.log_history for key in entry}
    assert {"train_loss", "waterdrum/forget", "waterdrum/retain"} <= logged
    assert scope["trainer"].data_rows == (2, 4)
    card = ModelCard.load(tmp_path / "npo-run" / "README.md")
    assert {"unlearning", "waterdrum", "npo"} <= set(card.data.tags)
    assert "| `waterdrum/forget` |" in card.text and "| forget | 2 |" in card.text


@pytest.mark.slow
def test_audits_run_as_printed(tiny_model, texts, tmp_path, monkeypatch):
    pytest.importorskip("torchao")
    from waterdrum_hf.prompting import completion_queries

    monkeypatch.chdir(tmp_path)  # the snippet reads its models from ./out
    model, tokenizer = tiny_model
    for name in ("npo", "retrained"):
        model.save_pretrained(tmp_path / "out" / name)
    scope = {
        "tokenizer": tokenizer,
        "queries": completion_queries(texts[:2], tokenizer, prefix_tokens=8),
        "owner_ids": [11, 12],
        "forget_ids": [12],
        "forget_texts": texts[1:2],
    }
    title = "Does the unlearning hold? Relearning and quantization audits"
    exec(compile(BLOCKS[title], "README.md", "exec"), scope)

    results = scope["results"]
    assert results.audits() == ["relearned", "int8", "int4"]
    # The same weights under both names: every audit reads the same on both.
    assert all(results.excess("npo", audit) == 0 for audit in results.audits())
    assert results.forget("npo", "relearned") != results.forget("npo", "before")
    assert {"relearned/npo/forget", "int4/npo/forget_excess"} <= set(results.scalars())


def readme_command_lines() -> list[list[str]]:
    """Every `waterdrum ...` command of the README's bash blocks, continuation lines joined,
    comments dropped, as tokens (placeholders such as `[--quick]` unbracketed)."""
    import re
    import shlex

    text = README.read_text()
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("waterdrum "):
                commands.append(shlex.split(line.replace("[", " ").replace("]", " ")))
    return commands


def test_every_readme_command_names_its_scripts_real_options():
    """A README command that cannot run offline (the Hub, a GPU, hours) still uses only
    options its script's parser has, in today's spelling."""
    import importlib

    from waterdrum_hf.scripts import COMMANDS

    commands = readme_command_lines()
    assert {tokens[1] for tokens in commands} >= set(COMMANDS)
    for tokens in commands:
        name, argv = tokens[1], tokens[2:]
        script = importlib.import_module(f"waterdrum_hf.scripts.{name.replace('-', '_')}")
        keywords = script.parser_keywords(argv) if hasattr(script, "parser_keywords") else {}
        parser = script.make_parser(prog=name, **keywords)
        known = {option for action in parser._actions for option in action.option_strings}
        flags = {token.split("=")[0] for token in argv if token.startswith("--")}
        assert flags <= known, (tokens, sorted(flags - known))
