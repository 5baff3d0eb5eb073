"""CachedPipeline: saved models load on their own (tokenizer included), and an ordinary quiet
run writes nothing to stderr (no load/save bars, no deprecation or pin-memory warnings)."""

from __future__ import annotations

import warnings

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
