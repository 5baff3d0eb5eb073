"""Names of models, tokenizers and data folders: ``"tiny"`` is the built-in model's wherever a
tokenizer is named, and a name that looks like a local path must exist: it fails at once, in one
line, before anything asks the Hub for it."""

from __future__ import annotations

import pytest
import transformers

from waterdrum_hf import load_metric, waterdrum_metrics
from waterdrum_hf.lm_eval_tasks import Source
from waterdrum_hf.scoring.verification import load_tokenizer
from waterdrum_hf.scripts import main
from waterdrum_hf.tiny import pretrained_location

TEXTS = [["the cat sat on the mat and the dog sat on the log"], ["a b c d e f g h i j k"]]


@pytest.fixture
def no_hub(monkeypatch):
    """Fails the test if anything reaches from_pretrained (where the Hub's retries start)."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"from_pretrained was called with {args}")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", refuse)


def test_tiny_names_the_built_in_tokenizer_in_the_evaluate_module(tiny_model):
    _, tokenizer = tiny_model
    expected = waterdrum_metrics(TEXTS, [7, 9], tokenizer, forget_ids=[9])
    with pytest.raises(ValueError, match=r"in Python pass waterdrum_hf.tiny.load\(\)\[1\]"):
        waterdrum_metrics(TEXTS, [7, 9], "tiny", forget_ids=[9])  # not a Hub lookup
    module = load_metric()
    got = module.compute(
        predictions=TEXTS, references=[7, 9], watermark_tokenizer="tiny", forget_ids=[9]
    )
    assert got["forget"] == expected["forget"] and got["retain"] == expected["retain"]


@pytest.mark.parametrize("name", ["./no-such-tokenizer", "~/no/such/folder", "/no/such/path"])
def test_a_local_looking_name_that_does_not_exist_fails_before_any_hub_call(name, no_hub):
    with pytest.raises(ValueError, match="does not exist"):
        load_tokenizer(name)


def test_a_file_is_not_a_model_folder(tmp_path, no_hub):
    file = tmp_path / "model.safetensors"
    file.write_bytes(b"")
    with pytest.raises(ValueError, match="is a file: name the folder"):
        load_tokenizer(str(file))


def test_hub_ids_and_existing_folders_pass_through(tmp_path):
    assert pretrained_location("meta-llama/Llama-3.1-8B-Instruct", "tokenizer") == (
        "meta-llama/Llama-3.1-8B-Instruct"
    )  # no local folder "meta-llama": a Hub id
    assert pretrained_location(str(tmp_path), "model") == str(tmp_path)


def test_the_lm_eval_task_says_no_such_folder_for_a_missing_dataset_path(no_hub):
    with pytest.raises(ValueError, match=r"dataset_path './WaterDrum-Ax' does not exist"):
        Source.from_metadata(
            {"benchmark": "waterdrum-ax", "config": "forget_01", "dataset_path": "./WaterDrum-Ax"}
        )


def test_the_command_line_says_no_such_folder_in_one_line(tmp_path, capsys, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the model was looked for")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", refuse)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"text": "a b c d", "owner_id": 7}\n')
    code = main(
        ["score", "--model-name-or-path", "./missing-model", "--dataset-name", str(rows),
         "--watermark-tokenizer", "tiny", "--output-dir", str(tmp_path / "out")]
    )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert (
        err == "waterdrum score: error: the model './missing-model' does not exist (no such folder)"
    )


def test_tiny_names_the_built_in_tokenizer_in_the_callback(tiny_model):
    from datasets import Dataset

    from waterdrum_hf import WaterDrumCallback

    _, tokenizer = tiny_model
    rows = Dataset.from_dict({"text": ["a b c d e f g h", "i j k l m n o p"], "owner_id": [7, 9]})
    callback = WaterDrumCallback.from_dataset(rows, [9], tokenizer, "tiny", prefix_tokens=4)
    assert callback.watermark_tokenizer.get_vocab() == tokenizer.get_vocab()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("no_rows.jsonl", "the dataset 'no_rows.jsonl' does not exist (no such file or folder)"),
        ("./no/rows", "the dataset './no/rows' does not exist (no such file or folder)"),
    ],
)
def test_unlearn_says_at_once_that_a_local_dataset_is_not_there(
    name, message, tmp_path, capsys, monkeypatch
):
    """A mistyped local file is not looked for on the Hub (no retries, no Hub wording)."""
    import datasets

    def refuse(*args, **kwargs):
        raise AssertionError("the Hub was asked")

    monkeypatch.setattr(datasets, "load_dataset", refuse)
    monkeypatch.chdir(tmp_path)
    argv = ["unlearn", "npo", "--model_name_or_path", "tiny", "--dataset_name", name]
    assert main([*argv, "--output_dir", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.strip() == f"waterdrum unlearn: error: {message}"


def test_a_library_loggers_own_lines_are_written_once():
    """huggingface_hub writes its retry warnings with its own handler and passes them up: the
    commands' root handler does not write them again; other loggers' lines it writes."""
    import io
    import logging

    from huggingface_hub.utils import logging as hub_logging

    from waterdrum_hf.utils.backend_logs import configure_command_logging

    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers = []  # a command's process: no handler yet
    try:
        configure_command_logging()
        (handler,) = root.handlers
        handler.stream = io.StringIO()
        hub_logging.get_logger("huggingface_hub.utils._http").warning("Retrying in 1s [Retry 1/5].")
        logging.getLogger("waterdrum_hf.generation.engine").warning("ours")
        assert handler.stream.getvalue() == "WARNING waterdrum_hf.generation.engine: ours\n"
        assert logging.getLogger("huggingface_hub").handlers  # it wrote the line itself
    finally:
        root.handlers = saved
