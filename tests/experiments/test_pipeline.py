"""CachedPipeline: saved models load on their own (tokenizer included), and an ordinary quiet
run writes nothing to stderr (no load/save bars, no deprecation or pin-memory warnings);
TrainingSettings names a bad argument."""

from __future__ import annotations

import warnings

import pytest
from transformers import AutoTokenizer

from waterdrum_hf.experiments.pipeline import CachedPipeline
from waterdrum_hf.experiments.training import TrainingSettings

TEXTS = [
    "A dictionary maps keys to values.",
    "Strings are immutable sequences of characters.",
    "The for statement iterates over the items of a sequence.",
    "A list is a mutable sequence.",
]


def test_quiet_stages_save_the_tokenizer_and_write_nothing_to_stderr(tiny_model, tmp_path, capsys):
    model, tokenizer = tiny_model
    pipeline = CachedPipeline(model, tokenizer, tmp_path, show_progress=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        original = pipeline.finetune(
            "original", TEXTS, epochs=1, training=TrainingSettings(2, 1e-3, seed=0)
        )
        unlearned, _ = pipeline.unlearn(
            "kl", original, TEXTS[:2], TEXTS[2:], steps=2, training=TrainingSettings(2, 1e-4, 0)
        )
        pipeline.load(unlearned)
    out, err = capsys.readouterr()
    assert err == ""
    assert "'loss'" not in out  # the Trainer's log lines stay in log_history
    noise = [str(w.message) for w in caught if "checkpointing" in str(w.message)]
    noise += [str(w.message) for w in caught if "pin_memory" in str(w.message)]
    assert noise == []
    for stage in (original, unlearned):
        saved = AutoTokenizer.from_pretrained(stage.path)
        assert saved("a def b")["input_ids"] == tokenizer("a def b")["input_ids"]


@pytest.mark.parametrize(
    ("settings", "error", "match"),
    [
        ({"batch_size": 0, "learning_rate": 1e-3}, ValueError, "`batch_size` must be >= 1"),
        ({"batch_size": 2.0, "learning_rate": 1e-3}, TypeError, "`batch_size` must be an integer"),
        ({"batch_size": 2, "learning_rate": 0.0}, ValueError, "`learning_rate` must be > 0"),
    ],
)
def test_training_settings_name_the_bad_argument(settings, error, match):
    with pytest.raises(error, match=match):
        TrainingSettings(**settings, seed=0)
