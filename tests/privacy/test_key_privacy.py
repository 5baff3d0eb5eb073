"""Watermark keys stay secret: `key_from_secret` derives them (checked against `hmac`), and a
whole watermark -> train with the callback -> metric -> verify_dataset run never shows a key, in
decimal or hex, in its output, logs, warnings, progress bars, exceptions, reprs, files or file
names.

`run_pipeline` runs the steps and returns what they showed; a new step (the report) is one more
block there."""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import secrets
import warnings
from collections.abc import Iterator
from pathlib import Path

import datasets
import pytest
import transformers
from datasets import Dataset, load_from_disk
from transformers import DataCollatorForLanguageModeling, Trainer, TrainingArguments

from waterdrum_hf import (
    Verifier,
    WaterDrumCallback,
    WaterfallLogitsProcessor,
    WatermarkedDataset,
    key_from_secret,
    load_metric,
    verify_dataset,
    verify_texts,
    waterdrum_metrics,
)
from waterdrum_hf.callbacks.plan import CallbackPlan
from waterdrum_hf.config import NullConfig, WaterDrumConfig
from waterdrum_hf.data import toy_corpus
from waterdrum_hf.generation.engine import SamplingConfig
from waterdrum_hf.report import write_report


def leak_forms(key: int) -> list[str]:
    """How a key could show: decimal, hex (lower, upper, 0x-prefixed), each distinct form once
    (a key whose hex has no letter reads the same in lower and upper case)."""
    return list(dict.fromkeys([str(key), f"{key:x}", f"{key:X}", f"{key:#x}", f"{key:#X}"]))


def find_leaks(text: str, key: int) -> list[str]:
    return [form for form in leak_forms(key) if form in text]


def files_and_names(*roots: Path) -> str:
    """Every file's path and content (bytes as latin-1) under ``roots``."""
    shown = []
    for root in roots:
        for path in sorted(Path(root).rglob("*")):
            shown.append(str(path))
            if path.is_file():
                shown.append(path.read_bytes().decode("latin-1"))
    return "\n".join(shown)


@contextlib.contextmanager
def all_library_logs() -> Iterator[list[str]]:
    """DEBUG logs of datasets and transformers reach the root logger (caplog); warnings are
    recorded. Yields the list the warnings' messages are appended to."""
    shown: list[str] = []
    libraries = (datasets.utils.logging, transformers.utils.logging)
    verbosity = [library.get_verbosity() for library in libraries]
    for library in libraries:
        library.set_verbosity_debug()
        library.enable_propagation()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield shown
        shown += [str(w.message) for w in caught]
    finally:
        for library, level in zip(libraries, verbosity, strict=True):
            library.set_verbosity(level)
            library.disable_propagation()


def run_pipeline(key: int, other: int, root: Path, model, tokenizer) -> list[str]:
    """Watermark (saved datasets, so cache files are written), train with the callback
    (TensorBoard, a checkpoint), score with the metric and verify_dataset; every bad-input
    error along the way. Returns what the objects and errors showed."""
    shown: list[str] = []
    texts = toy_corpus(2, max_passages_per_owner=2)["text"]
    Dataset.from_dict({"text": texts, "owner_id": [key, other, key, other]}).save_to_disk(
        root / "corpus"
    )
    corpus = load_from_disk(str(root / "corpus"))
    fast = {"num_beam_groups": 2, "beams_per_group": 1, "max_new_tokens": 12}

    # 1. Watermark: keys from the id column, and one fixed secret id; progress bars on.
    by_column = WatermarkedDataset(model, tokenizer, show_progress=True, **fast)
    watermarked = corpus.map(by_column, batched=True, batch_size=2)
    fixed = WatermarkedDataset(model, tokenizer, watermark_id=key, show_progress=True, **fast)
    corpus.select_columns(["text"]).map(fixed, batched=True, batch_size=4)
    processor = WaterfallLogitsProcessor(tokenizer.vocab_size, [key, other])
    shown += [repr(by_column), repr(fixed), str(fixed), repr(processor), fixed.fingerprint]
    shown += [repr(fixed.config), repr(Verifier(tokenizer))]

    # 2. Train with the callback; TensorBoard and a checkpoint on disk.
    callback = WaterDrumCallback.from_dataset(
        watermarked,
        [key],
        tokenizer,
        tokenizer,
        prefix_tokens=8,
        config=WaterDrumConfig(null=NullConfig("empirical", 3)),
        sampling=SamplingConfig(num_samples=1, max_new_tokens=8, seed=0),
        plan=CallbackPlan(eval_steps=2),
    )
    train_set = watermarked.map(
        lambda b: tokenizer(
            [t + tokenizer.eos_token for t in b["text"]], max_length=64, truncation=True
        ),
        batched=True,
        remove_columns=watermarked.column_names,
    )
    arguments = TrainingArguments(
        output_dir=str(root / "run"),
        max_steps=4,
        per_device_train_batch_size=2,
        learning_rate=1e-3,
        logging_steps=1,
        save_strategy="steps",
        save_steps=4,
        report_to=["tensorboard"],
        use_cpu=True,
        seed=0,
    )
    trainer = Trainer(
        model=copy.deepcopy(model).train(),
        args=arguments,
        train_dataset=train_set,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
        processing_class=tokenizer,
        callbacks=[callback],
    )
    callback.bind(trainer)  # a plain Trainer does not bind it
    trainer.train()
    shown += [repr(callback), str(callback.history), str(trainer.state.log_history)]
    assert any("waterdrum/forget" in entry for entry in trainer.state.log_history)

    # 3. The metric, directly and as the evaluate module; a forget id that owns nothing.
    completions = [[t] for t in watermarked["text"]]
    owners = list(watermarked["owner_id"])
    result = waterdrum_metrics(
        completions,
        owners,
        tokenizer,
        config=WaterDrumConfig.from_keywords(dict(null_keys=3)),
        forget_ids=[key, key ^ 1],
        return_details=True,
    )
    shown.append(repr(result))
    # ... and its report (JSON, Markdown, plots) with the callback's curve.
    report = {
        "models": {"original": result, "retrained": result},
        "curves": {"run": callback.history},
    }
    write_report(report, root / "report")
    shown.append(
        repr(
            load_metric().compute(
                predictions=completions,
                references=owners,
                watermark_tokenizer=tokenizer,
                forget_ids=[key],
            )
        )
    )

    # 4. verify_dataset on the watermarked dataset (its cache file next to the corpus).
    scored = verify_dataset(
        watermarked,
        text_column="text",
        id_column="owner_id",
        watermark_tokenizer=tokenizer,
        batch_size=2,
        score_column="q",
    )
    shown.append(repr(scored))

    # 5. Errors where a key is at hand.
    for call in (
        lambda: verify_texts(["a b c"], [key, key], tokenizer),
        lambda: waterdrum_metrics(["a b"], [key], tokenizer, owner_names={key: ""}),
        lambda: fixed({"body": ["x"]}),
        lambda: WaterDrumCallback(["q"], [key], ["r"], [key], tokenizer),
        lambda: verify_dataset(
            watermarked,
            text_column="text",
            id_column="owner_id",
            watermark_tokenizer=tokenizer,
            score_column="owner_id",
        ),
    ):
        with pytest.raises((ValueError, TypeError)) as raised:
            call()
        shown.append(f"{raised.value!r} {raised.value}")
    return shown


def random_key() -> int:
    """A 32-bit key with 10 decimal digits, derived from a fresh secret."""
    while (key := key_from_secret(secrets.token_hex(16), "owner")) < 2**31:
        pass
    return key


@pytest.mark.end_to_end
def test_no_key_anywhere_in_a_watermark_train_report_verify_run(
    tiny_model, tmp_path, capsys, caplog
):
    model, tokenizer = tiny_model
    key, other = random_key(), random_key()
    with caplog.at_level(logging.DEBUG), all_library_logs() as warned:
        shown = run_pipeline(key, other, tmp_path, model, tokenizer)
    captured = capsys.readouterr()
    files = files_and_names(tmp_path, Path(os.environ["HF_DATASETS_CACHE"]))
    everything = "\n".join([*shown, *warned, captured.out, captured.err, caplog.text, files])
    # The capture did see the run: cache files, event files, progress bars and debug logs.
    assert "cache-" in files and "events.out.tfevents" in files and "checkpoint-4" in files
    assert "report.md" in files and "per_owner.png" in files
    assert "Watermarking" in captured.err and "Verifying watermarks" in captured.err
    assert "own no query" in everything and caplog.records
    assert find_leaks(everything, key) == [] and find_leaks(everything, other) == []


@pytest.mark.parametrize("kind", ["random", "hex without letters"])
def test_the_leak_search_covers_logs_files_and_names(tmp_path, caplog, kind):
    """The search itself: a key planted in each channel is found, each form once, also for a
    key whose hex has no letter (about 1 % of :func:`random_key`'s keys: 2/8 * (10/16) ** 7)."""
    key = random_key() if kind == "random" else 0x9876_5432
    (tmp_path / f"cache-{key:x}.arrow").write_bytes(b"\x00")
    (tmp_path / "state.json").write_text(f'{{"id": {key}}}')
    files = files_and_names(tmp_path)
    assert find_leaks(files.split(str(key))[0], key) == [f"{key:x}"]  # the name alone
    assert str(key) in find_leaks(files, key)
    with caplog.at_level(logging.DEBUG), all_library_logs():
        datasets.utils.logging.get_logger("datasets").debug("key %#X", key)
    assert find_leaks(caplog.text, key) == [f"{key:X}", f"{key:#X}"]


def test_split_by_owner_never_shows_the_ids_it_refuses():
    """Regression: a numpy id (or a bool among ids) used to be echoed in the TypeError."""
    import numpy as np

    from waterdrum_hf.data import split_by_owner

    key = random_key()
    dataset = Dataset.from_dict({"text": ["a"], "owner_id": [key]})
    for forget_ids in ([np.int64(key)], [key, True], (np.uint32(key),)):
        with pytest.raises(TypeError, match="non-empty list of ints") as raised:
            split_by_owner(dataset, forget_ids)
        assert find_leaks(str(raised.value), key) == []


def test_the_metric_grouping_of_queries_has_no_revealing_repr():
    """Regression: the dataclass holding each query's owner used the default repr, keys and all
    (shown by debuggers and `pytest --showlocals`)."""
    from waterdrum_hf.scoring.inputs import group_queries

    key = random_key()
    queries = group_queries([["w1 w2"], ["w3"]], [key, key], None)
    assert queries.watermark_ids.tolist() == [key, key]
    assert find_leaks(repr(queries), key) == [] and find_leaks(str(queries), key) == []
