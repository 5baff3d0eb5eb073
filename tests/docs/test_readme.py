"""Every code block of the documentation runs, or is checked, as printed.

The pages are README.md, the metric card and every page under docs/. Each ```python block is
executed unchanged (blocks under one heading join, in order) in a namespace that supplies only
what the page leaves to the reader (a model, its tokenizer, the paraphraser's tokenizer, data):
the built-in tiny model, and the published benchmarks from a local mirror in the Hub's layout
(the Hub is unreachable in tests). A snippet that calls a renamed or removed name fails here.
A block that needs what tests do not have (your model, the Hub, a GPU, hours) is checked
another way: each line of a ```bash block by what it calls (a `waterdrum` command's flags by
that command's own parser, an `lm_eval` line by lm-eval's parser and the task folder, ...),
and a block run by another test file is listed in ``RUN_ELSEWHERE`` with that test.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest
from hub_mirrors import write_ax_mirror

import waterdrum_hf

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    "README.md",
    "metrics/waterdrum/README.md",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")),
]
FENCE = re.compile(r"^ *```(\w*)\n(.*?)^ *```\n", flags=re.S | re.M)


def code_blocks(language: str) -> dict[tuple[str, str], str]:
    """Each page's ``language`` blocks by (page, the heading above them); several under one
    heading join in order. A block indented in a list item is dedented."""
    blocks: dict[tuple[str, str], str] = {}
    for page in PAGES:
        heading, fence, code, indent = "", None, [], 0
        for line in (ROOT / page).read_text().splitlines(keepends=True):
            stripped = line.strip()
            if fence is not None:
                if stripped == "```":
                    if fence == language:
                        blocks[page, heading] = blocks.get((page, heading), "") + "".join(code)
                    fence = None
                else:
                    code.append(line[indent:])
            elif stripped.startswith("```"):
                fence, code, indent = stripped[3:], [], len(line) - len(line.lstrip())
            elif line.startswith("#"):
                heading = line.lstrip("#").strip()
    return blocks


BLOCKS = code_blocks("python")

#: Python blocks another test file runs as printed, with that test.
RUN_ELSEWHERE = {
    ("docs/guides/servers.md", "vLLM in this process"): (
        "tests/generation/test_vllm_engine.py::test_the_servers_guides_snippet_runs_as_printed"
    ),
    ("docs/guides/servers.md", "More than one server"): (
        "tests/generation/test_server.py::test_the_servers_guides_snippet_runs_as_printed"
    ),
    ("docs/guides/hub-results.md", "How to report the values"): (
        "tests/hub_results/test_publish.py::test_the_hub_guides_snippet_runs_as_printed"
    ),
}
#: Fence languages and how blocks of each are checked (python and bash: in this file).
OTHER_FENCES = {
    "diff": "the TRL patch: tests/trainers/test_trl_sft_script.py writes and compares it",
    "bibtex": "citations, not code",
    "": "listings (the source tree), not code",
    "text": "the commands' usage lines (docs/reference/commands.md, generated from the parsers "
    "and checked by tests/docs/test_docs_site.py)",
}


def pages_with(*headings: str) -> list[tuple[str, str]]:
    """The (page, heading) of every python block under one of ``headings``."""
    found = [key for key in BLOCKS if key[1] in headings]
    assert found, f"no python block under {headings}"
    return found


def run(page: str, heading: str, scope: dict) -> None:
    """Execute the block as printed, its file name saying where it is."""
    exec(compile(BLOCKS[page, heading], f"{page}: {heading}", "exec"), scope)


#: Every heading whose python blocks a test below runs.
RUN_HERE = {
    "Score generated text with the metric",
    "How to use",
    "Output values",
    "How sure is a value? Confidence intervals",
    "Score a model",
    "WaterDrum flags in a training script",
    "Log the curves with the callback in a TRL script",
    "Watermark data, load the benchmarks, sample queries",
    "Unlearn, and watch it happen",
    "In your TRL script",
    "Does the unlearning hold? Relearning and quantization audits",
    "Keys, privacy and scale",
}


def test_every_python_block_is_run():
    """A new snippet needs a test: every python block of every page is under a heading run
    here or is run by the test named in ``RUN_ELSEWHERE``; no runner is left without one."""
    here = {key for key in BLOCKS if key not in RUN_ELSEWHERE}
    assert {heading for _, heading in here} == RUN_HERE
    assert set(RUN_ELSEWHERE) <= set(BLOCKS)


def test_every_fence_is_python_bash_or_checked_elsewhere():
    fences = set()
    for page in PAGES:
        fences |= {m.group(1) for m in FENCE.finditer((ROOT / page).read_text())}
    assert fences <= {"python", "bash", *OTHER_FENCES}, fences


@pytest.fixture
def owners_texts(texts):
    """Four queries' texts and their owners, 19 (the snippets' forget owner) among them."""
    return texts[:4], [19, 19, 3, 4]


@pytest.mark.parametrize(("page", "heading"), pages_with("Score generated text with the metric"))
def test_quickstart_metric_runs_as_printed(page, heading, tiny_model, owners_texts):
    """The quickstart's metric snippet: its keywords give what the library gives for the same
    completions with the analytic null."""
    model, tokenizer = tiny_model
    texts, owner_ids = owners_texts
    scope = {
        "texts": texts,
        "owner_ids": owner_ids,
        "model": model,
        "model_tokenizer": tokenizer,
        "paraphraser_tokenizer": tokenizer,
    }
    run(page, heading, scope)

    assert len(scope["completions"]) == 4 and all(len(c) == 10 for c in scope["completions"])
    config = waterdrum_hf.WaterDrumConfig(null=waterdrum_hf.NullConfig("analytic"))
    expected = waterdrum_hf.waterdrum_metrics(
        scope["completions"], owner_ids, tokenizer, config=config, forget_ids=[19]
    )
    assert scope["results"] == pytest.approx(expected)
    assert "forget_p_value" in expected


def test_the_cards_usage_runs_as_printed(tiny_model, owners_texts):
    """The metric card's usage: 100 empirical null keys, so no p-value below 1 / 101."""
    model, tokenizer = tiny_model
    texts, owner_ids = owners_texts
    scope = {
        "forget_and_retain_texts": texts,
        "owner_id_per_query": owner_ids,
        "model": model,
        "model_tokenizer": tokenizer,
        "paraphraser_tokenizer": tokenizer,
    }
    run("metrics/waterdrum/README.md", "How to use", scope)
    assert scope["results"]["forget_p_value"] >= 1 / 101
    assert scope["results"]["num_queries"] == 4


def test_the_cards_example_output_has_only_keys_a_result_has(tiny_model, owners_texts):
    """Each key of the card's example output is one the metric returns with a null (a renamed
    key fails here)."""
    _, tokenizer = tiny_model
    texts, owner_ids = owners_texts
    scope: dict = {}
    exec("example = " + BLOCKS["metrics/waterdrum/README.md", "Output values"].strip(), scope)
    result = waterdrum_hf.waterdrum_metrics(
        [[t] for t in texts],
        owner_ids,
        tokenizer,
        config=waterdrum_hf.WaterDrumConfig(null=waterdrum_hf.NullConfig("analytic")),
        forget_ids=[19],
    )
    assert set(scope["example"]) <= set(result)


@pytest.mark.parametrize(
    ("page", "heading"), pages_with("How sure is a value? Confidence intervals")
)
def test_intervals_run_as_printed(page, heading, tiny_model, owners_texts):
    _, tokenizer = tiny_model
    texts, owner_ids = owners_texts
    scope = {
        "metric": waterdrum_hf.load_metric(),
        "completions": [[t, t[::-1]] for t in texts],
        "owner_ids": owner_ids,
        "paraphraser_tokenizer": tokenizer,
    }
    run(page, heading, scope)
    results = scope["results"]
    assert results["forget_ci_low"] <= results["forget"] <= results["forget_ci_high"]
    assert results["confidence"] == 0.95


@pytest.mark.parametrize(("page", "heading"), pages_with("Keys, privacy and scale"))
def test_keys_and_scale_run_as_printed(page, heading, tiny_model):
    from datasets import Dataset

    _, tokenizer = tiny_model
    texts = ["A completion to score.", "Another completion.", "x"]
    scope = {
        "generations": Dataset.from_dict({"completion": texts, "owner_id": [5, 6, 7]}),
        "paraphraser_tokenizer": tokenizer,
    }
    run(page, heading, scope)

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


@pytest.mark.parametrize(
    ("page", "heading"),
    pages_with(
        "WaterDrum flags in a training script", "Log the curves with the callback in a TRL script"
    ),
)
def test_waterdrum_flags_in_a_training_script_run_as_printed(
    page, heading, tiny_model, tmp_path, monkeypatch
):
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
    run(page, heading, scope)

    callbacks = trainer.callback_handler.callbacks
    (callback,) = [c for c in callbacks if isinstance(c, waterdrum_hf.WaterDrumCallback)]
    assert callback.trainer is trainer
    assert callback.config == waterdrum_hf.WaterDrumConfig(null=waterdrum_hf.NullConfig("analytic"))
    assert scope["waterdrum_args"].waterdrum_prefix_tokens == 4


@pytest.mark.end_to_end
@pytest.mark.parametrize(("page", "heading"), pages_with("Score a model"))
def test_score_a_model_runs_as_printed(
    page, heading, tiny_model, mirrored_hub, tmp_path, monkeypatch
):
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
    run(page, heading, scope)

    results = scope["results"]
    assert results["num_queries"] == 40  # the mirror's `full` split: 20 owners x 2 rows
    assert {"forget", "retain", "separability_auroc", "forget_p_value"} <= set(results)
    assert all(isinstance(v, (int, float)) and math.isfinite(v) for v in results.values())
    assert len(scope["completions"]) == 40 and all(len(c) == 10 for c in scope["completions"])
    assert scope["scores"].shape == (2,) and scope["fit"].r2 > 0.9
    assert scope["null"].scores.shape == (2, 100)
    assert waterdrum_hf.WaterDrumConfig.from_json("scoring.json") == scope["config"]


@pytest.mark.end_to_end
@pytest.mark.parametrize(
    ("page", "heading"), pages_with("Watermark data, load the benchmarks, sample queries")
)
def test_watermark_and_sample_run_as_printed(page, heading, tiny_model, mirrored_hub):
    from waterdrum_hf.data import toy_corpus

    model, tokenizer = tiny_model
    scope = {
        "paraphraser": model,
        "paraphraser_tokenizer": tokenizer,
        "model": model,
        "model_tokenizer": tokenizer,
        "dataset": toy_corpus(2, max_passages_per_owner=1),
    }
    run(page, heading, scope)

    watermarked = scope["watermarked"]
    assert {"text_original", "watermark_score"} <= set(watermarked.column_names)
    assert len(scope["forget"]) == 2 and set(scope["forget"]["owner_id"]) == {19}
    assert len(scope["completions"]) == 2 and all(len(c) == 10 for c in scope["completions"])


@pytest.mark.end_to_end
@pytest.mark.parametrize(("page", "heading"), pages_with("Unlearn, and watch it happen"))
def test_unlearn_and_watch_runs_as_printed(page, heading, tiny_model, tmp_path, monkeypatch):
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
    run(page, heading, scope)

    history = scope["trainer"].state.log_history
    logged = {key for entry in history for key in entry}
    assert {"train_loss", "waterdrum/forget", "waterdrum/retain"} <= logged
    # A ratio to step 0 is logged where the step-0 value is above 0 (the toy data here is
    # unwatermarked, so its forget value is noise around 0, of either sign).
    first = next(entry for entry in history if "waterdrum/forget" in entry)
    assert ("waterdrum/forget_ratio" in logged) == (first["waterdrum/forget"] > 0)
    assert (tmp_path / "kl-run").is_dir()


@pytest.mark.end_to_end
@pytest.mark.parametrize(("page", "heading"), pages_with("In your TRL script"))
def test_in_your_trl_script_runs_as_printed(
    page, heading, tiny_model, tiny_folder, tmp_path, monkeypatch
):
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
    run(page, heading, scope)

    saved = load_dataset("tofu_forget10", split="train")
    assert saved["forget"] == [True, True, False, False, False, False]
    assert saved["owner_id"] == [1, 1, 0, 0, 0, 0]
    logged = {key for entry in scope["trainer"].state.log_history for key in entry}
    assert {"train_loss", "waterdrum/forget", "waterdrum/retain"} <= logged
    assert scope["trainer"].data_rows == (2, 4)
    card = ModelCard.load(tmp_path / "npo-run" / "README.md")
    assert {"unlearning", "waterdrum", "npo"} <= set(card.data.tags)
    assert "| `waterdrum/forget` |" in card.text and "| forget | 2 |" in card.text


@pytest.mark.end_to_end
@pytest.mark.parametrize(
    ("page", "heading"), pages_with("Does the unlearning hold? Relearning and quantization audits")
)
def test_audits_run_as_printed(page, heading, tiny_model, texts, tmp_path, monkeypatch):
    pytest.importorskip("torchao")
    from waterdrum_hf.generation.prompting import completion_queries

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
    run(page, heading, scope)

    results = scope["results"]
    assert results.audits() == ["relearned", "int8", "int4"]
    # The same weights under both names: every audit reads the same on both.
    assert all(results.excess("npo", audit) == 0 for audit in results.audits())
    assert results.forget("npo", "relearned") != results.forget("npo", "before")
    assert {"relearned/npo/forget", "int4/npo/forget_excess"} <= set(results.scalars())


# ---------------------------------------------------------------------------------------------
# Shell blocks: each line checked by what it calls


def shell_lines() -> list[tuple[str, str]]:
    """Every command line of every page's bash blocks, as (page, line): continuation lines
    joined, comments dropped."""
    lines = []
    for (page, _), block in code_blocks("bash").items():
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line:
                lines.append((page, line))
    return lines


SHELL = shell_lines()
#: Lines of the TRL drop-in recipe: tests/trainers/test_trl_sft_script.py runs the commands
#: that write sft_npo.py and runs that script (fully, with LoRA, on two processes).
TRL_SCRIPT = ("sft=", "sed ", "python sft_npo.py", "accelerate launch")


def tokens(line: str) -> list[str]:
    """``line`` as words, the task folder substituted for ``$(waterdrum lm-eval-tasks)``."""
    from waterdrum_hf.lm_eval_tasks import tasks_path

    line = line.replace('"$(waterdrum lm-eval-tasks)"', str(tasks_path()))
    words = shlex.split(line)
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):  # VAR=value command ...
        words = words[1:]
    return words


def check_waterdrum(argv: list[str]) -> None:
    """The subcommand's own parser has every option (placeholders such as ``[--quick]`` and
    ``...`` pass); a ``--config`` file is in the repository."""
    import importlib

    argv = [w.replace("[", "").replace("]", "") for w in argv if w not in ("[", "]", "...")]
    name, argv = argv[0], argv[1:]
    script = importlib.import_module(f"waterdrum_hf.scripts.{name.replace('-', '_')}")
    keywords, argv = script.subcommand(argv) if hasattr(script, "subcommand") else ({}, argv)
    parser = script.make_parser(prog=name, **keywords)
    known = {option for action in parser._actions for option in action.option_strings}
    flags = {token.split("=")[0] for token in argv if token.startswith("--")}
    assert flags <= known, (name, sorted(flags - known))
    for config in (argv[i + 1] for i, t in enumerate(argv[:-1]) if t == "--config"):
        assert (ROOT / config).is_file(), f"--config {config} is not in the repository"


def check_lm_eval(argv: list[str], monkeypatch) -> None:
    """lm-eval's own parser takes the line; its tasks are ours and its metadata is JSON."""
    from lm_eval._cli import HarnessCLI

    from waterdrum_hf.lm_eval_tasks import tasks_path

    monkeypatch.setattr(sys, "argv", ["lm_eval", *argv])
    args = HarnessCLI().parse_args()
    ours = {p.stem for p in tasks_path().glob("waterdrum_*.yaml")}
    tasks = args.tasks if isinstance(args.tasks, list) else args.tasks.split(",")
    assert {t for task in tasks for t in task.split(",")} <= ours, args.tasks
    if "--metadata" in argv:
        json.loads(argv[argv.index("--metadata") + 1])


def check_line(words: list[str], monkeypatch) -> None:
    program, argv = words[0], words[1:]
    if program == "waterdrum":
        check_waterdrum(argv)
    elif program == "lm_eval":
        check_lm_eval(argv, monkeypatch)
    elif program == "bash":
        assert argv[0] == "dev.sh" and f"\n    {argv[1]})" in (ROOT / "dev.sh").read_text(), argv
    elif program == "pip":
        import tomllib

        extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
        for word in argv[1:]:
            if word.startswith("torch=="):  # the release dev.sh installs first
                assert f'"{word}"' in (ROOT / "dev.sh").read_text(), word
                continue
            found = re.fullmatch(r"waterdrum-hf(?:\[(.+)\])?|-e|\.(?:\[(.+)\])?", word)
            assert found, word
            wanted = (found.group(1) or found.group(2) or "").split(",")
            assert set(filter(None, wanted)) <= set(extras["optional-dependencies"]), word
    elif program == "python" and argv[:2] == ["-m", "venv"]:
        assert len(argv) == 3, argv  # the standard library's venv
    elif program.endswith("/bin/pip"):  # vLLM's own environment: the pins `dev.sh vllm` tests
        recipe = (ROOT / "dev.sh").read_text()
        assert all(word in recipe for word in argv[1:] if not word.startswith("-")), argv
    elif program.endswith("/bin/python") and argv[:2] == [
        "-m",
        "vllm.entrypoints.openai.api_server",
    ]:
        served = (ROOT / "waterdrum_hf" / "generation" / "vllm_process.py").read_text()
        assert all(f'"{w}"' in served for w in argv if w.startswith("--")), argv
    elif program == "python" and argv[0] == "train.py":  # a TRL script with WaterDrumArguments
        from dataclasses import fields

        names = {f"--{f.name}" for f in fields(waterdrum_hf.WaterDrumArguments)}
        assert {w for w in argv if w.startswith("--waterdrum")} <= names
    elif program == "python":  # a benchmark script: it exists and knows each of its options
        path = argv[1].replace(".", "/") + ".py" if argv[0] == "-m" else argv[0]
        source = ROOT / path
        if source.name == "gpu.py" and not source.is_file():
            source = ROOT / "benchmarks" / "gpu" / "__main__.py"
        assert source.is_file(), path
        code = "".join(p.read_text() for p in [source, *source.parent.glob("*.py")])
        wrapped = re.search(r'main\(\["([\w-]+)"', source.read_text())
        if wrapped:  # `waterdrum NAME` as a script
            check_waterdrum([wrapped.group(1), *argv[1:]])
            return
        assert all(f'"{w.split("=")[0]}"' in code for w in argv if w.startswith("--")), argv
    else:
        raise AssertionError(f"no check for {' '.join(words)}")


@pytest.mark.parametrize(("page", "line"), SHELL, ids=[f"{p}: {text[:40]}" for p, text in SHELL])
def test_every_shell_line_is_checked(page, line, monkeypatch):
    """A shell line that cannot run offline (the Hub, a GPU, hours) still uses only options
    its program has, in today's spelling, and names files the repository has."""
    if line.startswith(TRL_SCRIPT):
        return  # run by tests/trainers/test_trl_sft_script.py
    check_line(tokens(line), monkeypatch)


SETUP = ("bash dev.sh", "pip install")
"""Lines a reader runs as printed to set up: checked above, and run by CI (``bash .ci/run``)."""


def test_each_docs_page_says_why_its_shell_lines_are_not_run():
    """A docs page with a shell line the tests do not run as printed says so, and how it is
    checked, in a "Not run as printed" note."""
    pages = {page for page, line in SHELL if not line.startswith(SETUP)}
    for page in sorted(p for p in pages if p.startswith("docs/")):
        assert '!!! note "Not run as printed"' in (ROOT / page).read_text(), page


def test_the_pages_name_every_waterdrum_command():
    from waterdrum_hf.scripts import COMMANDS

    named = {tokens(line)[1] for _, line in SHELL if line.startswith("waterdrum ")}
    assert named >= set(COMMANDS)
