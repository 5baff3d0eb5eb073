"""The static, compiled KV-cache path of `generate`: the same tokens as the dynamic path
(greedy), the same distribution (sampling), a handful of compiled graphs for a whole run, none
more on a warm call, and a callback whose evaluations after the first compile nothing."""

from __future__ import annotations

import copy
import logging
import math
import warnings
from collections import Counter

import pytest
import torch
from datasets import Dataset
from transformers import (
    DataCollatorForLanguageModeling,
    Trainer,
    TrainerCallback,
    TrainingArguments,
)

from waterdrum_hf import (
    CallbackPlan,
    SamplingConfig,
    WaterDrumCallback,
    WaterDrumConfig,
    generate,
)
from waterdrum_hf.data import toy_corpus
from waterdrum_hf.generation.engine import compiled_graphs

EAGER = {"cache": "static", "compile_backend": "eager"}  # dynamo traces, no code generated


@pytest.fixture(scope="module")
def queries():
    """Prompts of different lengths (several prompt widths) from the toy corpus."""
    texts = toy_corpus(3, max_passages_per_owner=3)["text"]
    return [" ".join(text.split()[: 3 + 4 * i]) for i, text in enumerate(texts)]


def test_greedy_decoding_gives_the_same_tokens_on_the_static_path(tiny_model, queries):
    model, tokenizer = tiny_model
    settings = {"num_samples": 1, "greedy": True, "max_new_tokens": 16, "batch_size": 4}
    dynamic = generate(model, tokenizer, queries, cache="dynamic", **settings)
    static = generate(model, tokenizer, queries, **EAGER, **settings)
    assert static == dynamic  # 9 queries: batches of 4, 4 and 1 (filled to 4 on the static path)


def test_sampling_on_the_static_path_draws_from_the_same_distribution(tiny_model, queries):
    """Per-position frequencies of the first words written after one prompt, 240 samples on
    each path (other seeds), agree within 4 binomial standard deviations."""
    model, tokenizer = tiny_model
    settings = {"num_samples": 240, "max_new_tokens": 3, "batch_size": 60}
    dynamic = generate(model, tokenizer, queries[:1], cache="dynamic", seed=1, **settings)[0]
    static = generate(model, tokenizer, queries[:1], seed=2, **EAGER, **settings)[0]
    ids = {
        name: [tokenizer(text, add_special_tokens=False)["input_ids"][:3] for text in samples]
        for name, samples in (("dynamic", dynamic), ("static", static))
    }
    for position in range(2):
        counts = {
            n: Counter(row[position] for row in rows if len(row) > position)
            for n, rows in ids.items()
        }
        totals = {n: sum(c.values()) for n, c in counts.items()}
        for token in set(counts["dynamic"]) | set(counts["static"]):
            p = {n: counts[n][token] / totals[n] for n in counts}
            pooled = (counts["dynamic"][token] + counts["static"][token]) / sum(totals.values())
            sd = math.sqrt(pooled * (1 - pooled) * (1 / totals["dynamic"] + 1 / totals["static"]))
            assert abs(p["dynamic"] - p["static"]) <= 4 * sd + 1e-12, (position, token)


def test_a_run_compiles_a_handful_of_graphs_and_a_warm_call_none(tiny_model, queries, caplog):
    model, tokenizer = tiny_model
    torch.compiler.reset()  # graphs compiled by earlier tests would serve these shapes
    settings = {"num_samples": 2, "max_new_tokens": 8, "batch_size": 4, "seed": 0, **EAGER}
    start = compiled_graphs()
    with caplog.at_level(logging.INFO, logger="waterdrum_hf.generation.engine"):
        generate(model, tokenizer, queries, **settings)  # 18 rows: batches of 4, ..., 2 -> 4
    first = compiled_graphs() - start
    # One graph: every batch filled to 4 rows (the last has 2) and every prompt padded to the
    # one 64-token bucket, so one decoding shape; without either, a graph per shape.
    assert first == 1
    assert f"Static KV cache: {first} graphs compiled for 18 sequences" in caplog.text
    generate(model, tokenizer, queries[::-1], **settings)  # other prompts, same shapes
    assert compiled_graphs() - start == first


def test_auto_is_dynamic_on_a_cpu_and_static_refuses_a_model_that_cannot_compile(
    tiny_model, queries, monkeypatch
):
    model, tokenizer = tiny_model
    start = compiled_graphs()
    generate(model, tokenizer, queries[:2], num_samples=1, max_new_tokens=4, cache="auto")
    assert compiled_graphs() == start
    monkeypatch.setattr(type(model), "_can_compile_fullgraph", False)
    with pytest.raises(ValueError, match="does not support a static KV cache"):
        generate(model, tokenizer, queries[:2], num_samples=1, max_new_tokens=4, **EAGER)


@pytest.mark.parametrize(
    ("settings", "match"),
    [({"cache": "paged"}, "cache must be one of"), ({"compile_backend": ""}, "compile_backend")],
)
def test_bad_cache_settings_are_refused(settings, match):
    with pytest.raises(ValueError, match=match):
        SamplingConfig(**settings)


def test_the_callbacks_later_evaluations_compile_nothing(tiny_model, tmp_path):
    """Three evaluations during training on the static path: the first compiles, the
    second and third reuse its graphs (the trained model is the same module)."""
    base, tokenizer = tiny_model
    rows = toy_corpus(2, max_passages_per_owner=2)
    corpus = Dataset.from_dict(
        {"text": rows["text"], "owner_id": [11 + o for o in rows["owner_id"]]}
    )
    callback = WaterDrumCallback.from_dataset(
        corpus,
        [12],
        tokenizer,
        tokenizer,
        prefix_tokens=8,
        config=WaterDrumConfig(),
        sampling=SamplingConfig(num_samples=1, max_new_tokens=6, seed=0, batch_size=4, **EAGER),
        plan=CallbackPlan(eval_steps=2),
    )
    train_set = corpus.map(
        lambda b: tokenizer(b["text"], truncation=True, max_length=48),
        batched=True,
        remove_columns=corpus.column_names,
    )
    counts = []

    class Count(TrainerCallback):  # after ours: reads the count when its values are logged
        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "waterdrum/forget" in logs:
                counts.append(compiled_graphs())

    trainer = Trainer(
        model=copy.deepcopy(base).train(),
        args=TrainingArguments(
            output_dir=str(tmp_path),
            max_steps=4,
            per_device_train_batch_size=2,
            learning_rate=1e-3,
            save_strategy="no",
            report_to="none",
            use_cpu=True,
            disable_tqdm=True,
            logging_steps=1,
        ),  # fmt: skip
        train_dataset=train_set,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
        callbacks=[callback, Count()],
    )
    callback.bind(trainer)
    torch.compiler.reset()
    start = compiled_graphs()
    trainer.train()
    assert len(counts) == 3  # steps 0, 2 and 4
    assert counts[0] > start and counts[1] == counts[0] and counts[2] == counts[0]


def test_the_compilers_notices_are_dropped_on_the_static_path_alone(
    tiny_model, queries, monkeypatch
):
    """torch's compile-time hint (TF32), its own imports' deprecation and its empty CUDA graph,
    raised inside the static path's ``generate``, do not reach the caller; any other warning
    does, and on the dynamic path nothing is dropped."""
    from waterdrum_hf.generation.engine import COMPILER_NOTICES

    model, tokenizer = tiny_model
    original = model.generate
    tf32, script_method, empty_graph = COMPILER_NOTICES

    def noisy_generate(*args, **kwargs):
        warnings.warn(tf32 + ". Consider setting ...", UserWarning, stacklevel=1)
        warnings.warn(script_method + ". Please switch ...", DeprecationWarning, stacklevel=1)
        warnings.warn(empty_graph + ". This usually means ...", UserWarning, stacklevel=1)
        warnings.warn("something else", RuntimeWarning, stacklevel=1)
        return original(*args, **kwargs)

    monkeypatch.setattr(model, "generate", noisy_generate)
    settings = {"num_samples": 1, "max_new_tokens": 2, "batch_size": 2}
    seen = {}
    for cache, extra in (("static", EAGER), ("dynamic", {"cache": "dynamic"})):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            generate(model, tokenizer, queries[:2], **extra, **settings)
        seen[cache] = [type(w.message) for w in caught]
    assert seen == {
        "static": [RuntimeWarning],
        "dynamic": [UserWarning, DeprecationWarning, UserWarning, RuntimeWarning],
    }
