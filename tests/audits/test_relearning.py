"""The relearning audit's slice and fine-tune: the library's GD trainer on a few forget texts."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from waterdrum_hf.audits import AuditConfig, relearn, relearning_slice

TEXTS = [
    "A dictionary maps keys to values.",
    "Strings are immutable sequences of characters.",
    "The for statement iterates over the items of a sequence.",
    "A list is a mutable sequence.",
    "A tuple is an immutable sequence.",
]


def test_the_slice_is_the_first_share_of_the_forget_texts_and_never_empty():
    assert relearning_slice(TEXTS, 0.25) == TEXTS[:2]  # ceil(1.25)
    assert relearning_slice(TEXTS, 0.01) == TEXTS[:1]
    assert relearning_slice(TEXTS, 1.0) == TEXTS
    with pytest.raises(ValueError, match="needs the forget set's texts"):
        relearning_slice([], 0.25)
    with pytest.raises(TypeError):
        relearning_slice("one text", 0.25)


def nll(model, tokenizer, texts):
    batch = tokenizer(texts, return_tensors="pt", padding=True)
    labels = batch.input_ids.masked_fill(batch.attention_mask == 0, -100)
    with torch.no_grad():
        return model(**batch, labels=labels).loss.item()


def test_relearning_fits_the_slice_on_a_copy(tiny_model):
    model, tokenizer = tiny_model
    config = AuditConfig(relearn_steps=6, relearn_learning_rate=2e-3, relearn_batch_size=2)
    relearned = relearn(model, tokenizer, TEXTS[:2], config, show_progress=False)
    assert relearned is not model  # the shared model is checked untouched by conftest
    assert nll(relearned, tokenizer, TEXTS[:2]) < 0.7 * nll(model, tokenizer, TEXTS[:2])
    with pytest.raises(ValueError, match="at least one text"):
        relearn(model, tokenizer, [], config)


def test_the_share_must_be_in_the_half_open_unit_interval():
    for share in (0.0, -0.1, 1.01):
        with pytest.raises(ValueError, match=r"`share` must be in \(0, 1\], got"):
            relearning_slice(TEXTS, share)
    assert relearning_slice(TEXTS, 0.6) == TEXTS[:3]  # ceil(3.0), not ceil(0.6 / 5)
    with pytest.raises(TypeError, match=r"forget_texts\[1\] must be a str, got int"):
        relearning_slice([TEXTS[0], 3], 0.5)


def test_bad_texts_are_refused_under_their_name(tiny_model):
    model, tokenizer = tiny_model
    with pytest.raises(TypeError, match=r"^texts must be a list of strings, not a single string"):
        relearn(model, tokenizer, TEXTS[0])
    with pytest.raises(TypeError, match=r"^texts\[1\] must be a str, got int$"):
        relearn(model, tokenizer, [TEXTS[0], 3])


@pytest.fixture
def trainers(monkeypatch, tmp_path):
    """The GD trainers that relearn builds, kept for reading back what they trained, with the
    temporary folders made under ``tmp_path``."""
    import tempfile

    import waterdrum_hf.trainers

    built = []

    class Kept(waterdrum_hf.trainers.GradDiffTrainer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setattr(waterdrum_hf.trainers, "GradDiffTrainer", Kept)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "scratch"))
    (tmp_path / "scratch").mkdir()
    return built


def test_one_step_is_plain_nll_on_the_texts_at_the_asked_rate(tiny_model, trainers, tmp_path):
    model, tokenizer = tiny_model
    original = copy.deepcopy(model)
    text = TEXTS[2]
    config = AuditConfig(relearn_steps=1, relearn_learning_rate=4e-4, relearn_batch_size=1)
    relearned = relearn(model, tokenizer, [text], config, show_progress=False)
    (trainer,) = trainers
    (step, _) = trainer.state.log_history
    # The loss of the one step is the NLL of the text and its end token under the model as
    # given (no forget term, weight 1), computed here by the model itself.
    ids = tokenizer(text + tokenizer.eos_token, return_tensors="pt").input_ids
    with torch.no_grad():
        expected = original(input_ids=ids, labels=ids).loss.item()
    assert step["loss"] == pytest.approx(expected, rel=1e-5)
    assert "loss/forget" not in step and step["loss/retain"] == step["loss"]
    # Adam's first step moves every weight with a non-zero gradient by the learning rate.
    moved = max(
        (after - before).abs().max().item()
        for before, after in zip(original.parameters(), relearned.parameters(), strict=True)
    )
    assert moved == pytest.approx(4e-4, rel=1e-3)
    # A deep copy was trained: the model given kept its weights.
    for before, after in zip(original.parameters(), model.parameters(), strict=True):
        assert torch.equal(before, after)
    # Its scratch folder was the relearning one, and is gone.
    output_dir = Path(trainer.args.output_dir)
    assert output_dir.parent == tmp_path / "scratch"
    assert output_dir.name.startswith("waterdrum-relearn-")
    assert list((tmp_path / "scratch").iterdir()) == []


@pytest.mark.parametrize(("steps", "logged"), [(1, [1]), (3, [1, 2, 3]), (4, [2, 4])])
def test_the_asked_steps_at_a_constant_rate_logged_twice(tiny_model, trainers, steps, logged):
    model, tokenizer = tiny_model
    config = AuditConfig(
        relearn_steps=steps, relearn_learning_rate=1e-3, relearn_batch_size=2, seed=3
    )
    relearn(model, tokenizer, TEXTS[:3], config, show_progress=steps == 4)
    (trainer,) = trainers
    assert trainer.state.global_step == steps
    entries = [e for e in trainer.state.log_history if "loss" in e]
    # Logged every steps // 2 steps (at least every step), at the one constant rate.
    assert [e["step"] for e in entries] == logged
    assert [e["learning_rate"] for e in entries] == [1e-3] * len(logged)
    # Three texts in batches of two: two steps an epoch.
    assert [e["epoch"] for e in entries] == [s / 2 for s in logged]
    args = trainer.args
    # On the CPU exactly when there is no GPU (a bare "not a GPU" would also pass None).
    assert args.seed == 3 and args.use_cpu is (not torch.cuda.is_available())
    assert args.save_strategy == "no" and args.report_to == []
    assert args.disable_tqdm is (steps != 4)  # bars only when asked for
