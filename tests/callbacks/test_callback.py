"""WaterDrumCallback: values in log_history and TensorBoard, undisturbed training, stopping,
key privacy, bad input, any Trainer (plain, unlearning, TRL, PEFT) and two processes."""

from __future__ import annotations

import copy
import json
import logging

import numpy as np
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
    IntervalConfig,
    NullConfig,
    SamplingConfig,
    WaterDrumCallback,
    WaterDrumConfig,
    WaterDrumResult,
    completion_queries,
    generate,
    waterdrum_metrics,
    waterdrum_result,
)
from waterdrum_hf.data import toy_corpus
from waterdrum_hf.scoring import owner_display_names

PLAN_FIELDS = ("eval_steps", "max_queries_per_owner", "stop_when", "save_on_stop", "model_card")

TWO_LOGGED_STEPS = {
    "max_steps": 2, "per_device_train_batch_size": 2, "report_to": "none", "logging_steps": 1,
    "use_cpu": True, "save_strategy": "no", "disable_tqdm": True,
}  # fmt: skip


KEYS = (2_876_543_219, 3_456_789_011, 4_012_345_677)  # distinctive: a leak would show


@pytest.fixture(scope="module")
def corpus():
    rows = toy_corpus(3, max_passages_per_owner=3)
    return Dataset.from_dict(
        {"text": rows["text"], "owner_id": [KEYS[o] for o in rows["owner_id"]]}
    )


@pytest.fixture(scope="module")
def train_set(tiny_model, corpus):
    _, tokenizer = tiny_model
    return corpus.map(
        lambda b: tokenizer(
            [t + tokenizer.eos_token for t in b["text"]], truncation=True, max_length=96
        ),
        batched=True,
        remove_columns=corpus.column_names,
    )


def make_callback(tiny_model, corpus, *, seed=0, confidence=None, prefix_tokens=8, **kwargs):
    """A callback on the corpus (owner KEYS[2] forgotten): one 8-token sample per query;
    ``kwargs`` are CallbackPlan fields (every 2 steps by default) or callback arguments."""
    _, tokenizer = tiny_model
    plan = {"eval_steps": 2} | {k: kwargs.pop(k) for k in PLAN_FIELDS if k in kwargs}
    interval = None if confidence is None else IntervalConfig(confidence, seed=seed)
    return WaterDrumCallback.from_dataset(
        corpus,
        [KEYS[2]],
        tokenizer,
        tokenizer,
        prefix_tokens=prefix_tokens,
        config=WaterDrumConfig(interval=interval),
        sampling=SamplingConfig(num_samples=1, max_new_tokens=8, seed=seed),
        plan=CallbackPlan(**plan),
        **kwargs,
    )


def make_trainer(tiny_model, train_set, tmp_path, callbacks=(), model=None, **args):
    base, tokenizer = tiny_model
    settings = {
        "output_dir": str(tmp_path),
        "max_steps": 4,
        "per_device_train_batch_size": 3,
        "learning_rate": 1e-3,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": "none",
        "use_cpu": True,
        "seed": 0,
        "disable_tqdm": True,
    }
    settings.update(args)
    trainer = Trainer(
        model=model if model is not None else copy.deepcopy(base).train(),
        args=TrainingArguments(**settings),
        train_dataset=train_set,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
        processing_class=tokenizer,
        callbacks=list(callbacks),
    )
    for callback in callbacks:  # a plain Trainer does not bind them itself
        if isinstance(callback, WaterDrumCallback):
            callback.bind(trainer)
    return trainer


def logged(trainer, name="waterdrum/forget"):
    return {entry["step"]: entry for entry in trainer.state.log_history if name in entry}


def test_values_reach_log_history_and_tensorboard(tiny_model, corpus, train_set, tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    model, tokenizer = tiny_model
    callback = make_callback(tiny_model, corpus)
    # What step 0 must log: the untouched model's values, computed independently (the forget
    # owner's queries first, as the callback orders them).
    rows = sorted(range(len(corpus)), key=lambda i: corpus["owner_id"][i] != KEYS[2])
    queries = completion_queries([corpus["text"][i] for i in rows], tokenizer, 8)
    assert queries == callback.queries
    completions = generate(model, tokenizer, queries, num_samples=1, max_new_tokens=8, seed=0)
    owners = [corpus["owner_id"][i] for i in rows]
    expected = waterdrum_metrics(completions, owners, tokenizer, forget_ids=[KEYS[2]])

    trainer = make_trainer(tiny_model, train_set, tmp_path, [callback], report_to=["tensorboard"])
    trainer.train()
    entries = logged(trainer)
    assert sorted(entries) == [0, 2, 4]  # step 0, every eval_steps, the end
    assert entries[0]["waterdrum/forget"] == pytest.approx(expected["forget"])
    assert entries[0]["waterdrum/retain"] == pytest.approx(expected["retain"])
    for entry in entries.values():
        assert {"waterdrum/separability_auroc", "waterdrum/seconds", "waterdrum/num_scored"} <= set(
            entry
        )
        assert {f"waterdrum/owner/owner-{i}" for i in (1, 2, 3)} <= set(entry)
        assert entry["waterdrum/seconds"] > 0
    assert entries[4]["waterdrum/forget"] != entries[0]["waterdrum/forget"]  # the model moved
    assert [h["step"] for h in callback.history] == [0, 2, 4]
    # The trainer's own logs are all there (logging through it must not cancel them).
    assert [e["step"] for e in trainer.state.log_history if "loss" in e] == [1, 2, 3, 4]

    (event_dir,) = {p.parent for p in tmp_path.rglob("events.out.tfevents.*")}
    events = EventAccumulator(str(event_dir))
    events.Reload()
    series = events.Scalars("train/waterdrum/forget")  # integrations prefix train/
    assert [s.step for s in series] == [0, 2, 4]
    assert [s.value for s in series] == pytest.approx(
        [entries[s]["waterdrum/forget"] for s in (0, 2, 4)], abs=1e-6
    )
    assert "train/loss" in events.Tags()["scalars"]


def test_confidence_logs_the_metrics_intervals(tiny_model, corpus):
    """With ``confidence`` the callback logs the metric's intervals (its own seed resampling)."""
    model, tokenizer = tiny_model
    callback = make_callback(tiny_model, corpus, confidence=0.9, seed=3)
    values = callback.evaluate(model, tokenizer)
    completions = generate(
        model, tokenizer, callback.queries, num_samples=1, max_new_tokens=8, seed=3
    )
    owners = sorted(corpus["owner_id"], key=lambda owner: owner != KEYS[2])  # forget first
    expected = waterdrum_metrics(
        completions,
        owners,
        tokenizer,
        config=WaterDrumConfig(interval=IntervalConfig(0.9, seed=3)),
        forget_ids=[KEYS[2]],
    )
    names = [f"{s}_ci_{end}" for s in ("forget", "retain") for end in ("low", "high")]
    names += ["separability_auroc_ci_low", "separability_auroc_ci_high", "confidence"]
    assert {name: values[name] for name in names} == {name: expected[name] for name in names}
    assert values["forget_ci_low"] <= values["forget"] <= values["forget_ci_high"]
    assert callback.settings()["config"]["interval"]["confidence"] == 0.9
    plain = make_callback(tiny_model, corpus, seed=3)
    assert not any("ci_" in name for name in plain.evaluate(model, tokenizer))
    assert plain.settings()["config"]["interval"] is None


@pytest.mark.end_to_end
def test_the_last_values_go_into_the_output_dirs_model_card(
    tiny_model, corpus, train_set, tmp_path
):
    """With ``model_card`` in its plan, the callback writes the last evaluation's values into
    ``<output_dir>/README.md``'s model-index when training ends (keys never written)."""
    from huggingface_hub import ModelCard

    from waterdrum_hf import HubResultsConfig

    card = HubResultsConfig("local-owners", notes="1 sample of 8 tokens")
    callback = make_callback(tiny_model, corpus, eval_steps=2, model_card=card)
    make_trainer(tiny_model, train_set, tmp_path, [callback], max_steps=2).train()
    written = ModelCard.load(tmp_path / "README.md")
    values = {r.metric_type: r.metric_value for r in written.data.eval_results}
    last = callback.history[-1]
    assert values["waterdrum_forget"] == pytest.approx(last["forget"])
    assert values["waterdrum_retain"] == pytest.approx(last["retain"])
    text = (tmp_path / "README.md").read_text()
    assert not any(str(key) in text for key in KEYS)


@pytest.mark.end_to_end
def test_training_is_not_disturbed(tiny_model, corpus, train_set, tmp_path):
    """Same seed, with and without the callback: the same weights, bit for bit, with dropout
    and gradient checkpointing on; modes are back afterwards."""

    def run(callbacks):
        model = copy.deepcopy(tiny_model[0])
        for layer in model.model.layers:
            layer.self_attn.attention_dropout = 0.2  # training draws random numbers
        trainer = make_trainer(
            tiny_model,
            train_set,
            tmp_path,
            callbacks,
            model=model,
            gradient_checkpointing=True,
        )
        trainer.train()
        return trainer.model

    callback = make_callback(tiny_model, corpus, eval_steps=1)
    plain, monitored = run([]), run([callback])
    assert len(callback.history) == 5
    for (name, a), (_, b) in zip(
        plain.state_dict().items(), monitored.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name
    assert monitored.training and monitored.is_gradient_checkpointing
    assert tiny_model[1].padding_side == "left"


def test_ratios_are_shares_of_the_step_0_values(
    tiny_model, corpus, train_set, tmp_path, monkeypatch
):
    callback = make_callback(tiny_model, corpus, eval_steps=1)
    scripted = iter([(0.8, 0.5), (0.4, 0.5), (0.2, 0.45), (-0.1, 0.4), (0.0, 0.4)])

    def fake_evaluate(model, tokenizer, accelerator=None):
        forget, retain = next(scripted)
        return {"forget": forget, "retain": retain, "seconds": 0.01}

    monkeypatch.setattr(callback, "evaluate", fake_evaluate)
    trainer = make_trainer(tiny_model, train_set, tmp_path, [callback])
    trainer.train()
    entries = logged(trainer)
    assert [entries[s]["waterdrum/forget_ratio"] for s in range(5)] == pytest.approx(
        [1.0, 0.5, 0.25, -0.125, 0.0]
    )
    assert entries[2]["waterdrum/retain_ratio"] == pytest.approx(0.9)


@pytest.mark.parametrize("rule", ["dict", "callable"])
def test_stop_when_stops_saves_and_says_why(tiny_model, corpus, train_set, tmp_path, rule, caplog):
    stop_when = (
        {"min_retain": -1.0, "max_forget": 1.0} if rule == "dict" else (lambda v: v["retain"] > -1)
    )
    callback = make_callback(tiny_model, corpus, stop_when=stop_when, save_on_stop=True)
    trainer = make_trainer(tiny_model, train_set, tmp_path, [callback], max_steps=8)
    with caplog.at_level(logging.WARNING, logger="waterdrum_hf.callbacks.callback"):
        trainer.train()
    assert trainer.state.global_step == 2 and callback.stopped_at == 2  # not at step 0
    assert logged(trainer)[2]["waterdrum/stopped"] == 1.0
    assert "stopping at step 2" in caplog.text
    if rule == "dict":
        assert "retain" in callback.stop_reason and ">= -1" in callback.stop_reason
    saved = tmp_path / "waterdrum-stop-step-2"
    assert (saved / "config.json").is_file() and (saved / "model.safetensors").is_file()


def test_stop_when_needs_every_bound_and_a_value_on_its_bound_holds(
    tiny_model, corpus, train_set, tmp_path, monkeypatch
):
    """Scripted values, one evaluation per step: ``stop_when`` holds when all its bounds hold
    (step 1 meets only the forget bound, step 2 only the retain one), ``max_`` is ``<=`` and
    ``min_`` is ``>=`` (steps 3 and 4 miss a bound by 1e-9; step 5 sits on both: it stops)."""
    callback = make_callback(
        tiny_model, corpus, eval_steps=1, stop_when={"max_forget": 0.3, "min_retain": 0.4}
    )
    scripted = iter(
        [(0.8, 0.5), (0.2, 0.3), (0.5, 0.6), (0.3 + 1e-9, 0.6), (0.1, 0.4 - 1e-9), (0.3, 0.4)]
        + [(0.1, 0.9)] * 3  # would hold under a strict rule
    )

    def fake_evaluate(model, tokenizer, accelerator=None):
        forget, retain = next(scripted)
        return {"forget": forget, "retain": retain, "seconds": 0.01}

    monkeypatch.setattr(callback, "evaluate", fake_evaluate)
    trainer = make_trainer(tiny_model, train_set, tmp_path, [callback], max_steps=8)
    trainer.train()
    assert callback.stopped_at == 5 and trainer.state.global_step == 5
    assert callback.stop_reason == "forget 0.300 <= 0.3 and retain 0.400 >= 0.4"
    entries = logged(trainer)
    assert [s for s in entries if "waterdrum/stopped" in entries[s]] == [5]


def test_a_rule_that_never_holds_lets_training_finish(tiny_model, corpus, train_set, tmp_path):
    callback = make_callback(tiny_model, corpus, stop_when={"min_separability_auroc": 2.0})
    trainer = make_trainer(tiny_model, train_set, tmp_path, [callback])
    trainer.train()
    assert trainer.state.global_step == 4 and callback.stopped_at is None


def test_no_key_in_logs_repr_or_event_files(tiny_model, train_set, tmp_path, capsys, caplog):
    secret = int(np.random.default_rng(11).integers(2**31, 2**32))
    model, tokenizer = tiny_model
    texts = toy_corpus(2, max_passages_per_owner=2)["text"]
    callback = WaterDrumCallback(
        texts[:2],
        [secret, secret],
        texts[2:],
        [KEYS[0], KEYS[0]],
        tokenizer,
        config=WaterDrumConfig(null=NullConfig("empirical", 4)),
        sampling=SamplingConfig(num_samples=1, max_new_tokens=6, seed=0),
        plan=CallbackPlan(eval_steps=2),
    )
    with caplog.at_level(logging.DEBUG):
        trainer = make_trainer(
            tiny_model, train_set, tmp_path, [callback], report_to=["tensorboard"]
        )
        trainer.train()
    captured = capsys.readouterr()
    shown = "".join(
        [
            repr(callback),
            str(callback),
            json.dumps(trainer.state.log_history),
            captured.out,
            captured.err,
            caplog.text,
        ]
        + [p.read_bytes().decode("latin-1") for p in tmp_path.rglob("*") if p.is_file()]
    )
    assert "waterdrum/forget" in json.dumps(trainer.state.log_history)
    for form in (str(secret), f"{secret:x}", f"{secret:X}", f"{secret:#x}"):
        assert form not in shown


def test_owners_are_named_as_the_metric_names_them_in_the_datas_order(tiny_model, corpus):
    """The forget owner (KEYS[2], the data's third owner) is owner-3, as waterdrum_metrics
    names it on the same queries in order, not owner-1 for coming first in the forget set."""
    callback = make_callback(tiny_model, corpus)
    model, tokenizer = tiny_model
    values = callback.evaluate(model, tokenizer)
    owners = {name for name in values if name.startswith("owner/")}
    assert owners == {"owner/owner-1", "owner/owner-2", "owner/owner-3"}
    completions = generate(
        model, tokenizer, callback.queries, num_samples=1, max_new_tokens=8, seed=0
    )
    forget_first = sorted(corpus["owner_id"], key=lambda owner: owner != KEYS[2])
    ours = waterdrum_result(completions, forget_first, tokenizer, forget_ids=[KEYS[2]])
    in_order = owner_display_names(list(corpus["owner_id"]), None)
    assert values["owner/owner-3"] == pytest.approx(
        waterdrum_result(
            completions,
            forget_first,
            tokenizer,
            forget_ids=[KEYS[2]],
            owner_names=in_order,
            return_details=True,
        )
        .per_owner["owner-3"]
        .value
    )
    assert ours.forget.value == pytest.approx(values["forget"])


def stop(rule):
    return {"plan": lambda: CallbackPlan(stop_when=rule)}


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"forget_ids": [KEYS[2]]}, ValueError, "`forget_ids` has 1 entries but there are 2"),
        ({"retain_queries": [], "retain_ids": []}, ValueError, "`retain_queries` is empty"),
        ({"watermark_tokenizer": "/no/such/tokenizer"}, ValueError, "does not exist"),
        ({"plan": lambda: CallbackPlan(eval_steps=0)}, ValueError, "`eval_steps` must be >= 1"),
        ({"sampling": lambda: SamplingConfig(num_samples=0)}, ValueError, "`num_samples`"),
        ({"sampling": lambda: SamplingConfig(seed=None)}, ValueError, "SamplingConfig\\(seed="),
        ({"config": lambda: "kgw"}, TypeError, "`config` must be a WaterDrumConfig"),
        ({"forget_ids": [KEYS[2], -1]}, ValueError, r"`forget_ids\[1\]`"),
        ({"retain_ids": [KEYS[2], KEYS[0]]}, ValueError, "both the forget and the retain"),
        (stop({"forget_below": 0.1}), ValueError, "'max_<value>' or 'min_<value>'"),
        (stop({"max_foget_ratio": 0.1}), ValueError, "not a value the callback logs"),
        (stop({"max_forget": "low"}), ValueError, "finite number"),
        (stop(0.05), TypeError, "callable or a dict"),
        ({"owner_names": {KEYS[0]: "a", KEYS[2]: "a"}}, ValueError, "same name"),
        (
            {"plan": lambda: CallbackPlan(max_queries_per_owner=0)},
            ValueError,
            "`max_queries_per_owner`",
        ),
        (
            {"config": lambda: WaterDrumConfig(interval=IntervalConfig(95))},
            ValueError,
            "`confidence` must lie strictly between 0 and 1",
        ),
    ],
)
def test_bad_input_fails_at_construction(tiny_model, kwargs, error, match):
    arguments = {
        "forget_queries": ["The class", "A lambda"],
        "forget_ids": [KEYS[2], KEYS[2]],
        "retain_queries": ["The import", "A module"],
        "retain_ids": [KEYS[0], KEYS[0]],
        "watermark_tokenizer": tiny_model[1],
    }
    arguments.update(kwargs)
    with pytest.raises(error, match=match) as raised:
        built = {
            k: v() if getattr(v, "__name__", "") == "<lambda>" else v for k, v in arguments.items()
        }
        WaterDrumCallback(**built)
    assert not any(str(key) in str(raised.value) for key in KEYS)


def test_flat_keywords_are_refused(tiny_model):
    """The callback takes plan=, sampling= and config=; no flat keyword reaches it unseen."""
    arguments = (["The class"], [KEYS[2]], ["The import"], [KEYS[0]], tiny_model[1])
    with pytest.raises(TypeError, match="eval_steps"):
        WaterDrumCallback(*arguments, eval_steps=3)


def test_stop_when_accepts_every_logged_value_and_nothing_else(tiny_model):
    arguments = {
        "forget_queries": ["The class"], "forget_ids": [KEYS[2]],
        "retain_queries": ["The import"], "retain_ids": [KEYS[0]],
        "watermark_tokenizer": tiny_model[1], "owner_names": {KEYS[2]: "ann", KEYS[0]: "bo"},
    }  # fmt: skip
    logged = [
        *WaterDrumResult.scalar_names(),
        "forget_ratio",
        "retain_ratio",
        "owner/ann",
        "owner/bo",
    ]
    for name in logged:
        plan = CallbackPlan(stop_when={f"max_{name}": 1.0, f"min_{name}": 0.0})
        WaterDrumCallback(**arguments, plan=plan)
    for name in (
        "owner/cy",
        "owner/",
        "seconds",
        "per_owner",
        "scores",
        "overall_ratio",
        "forget_p",
    ):
        with pytest.raises(ValueError, match="not a value the callback logs"):
            WaterDrumCallback(**arguments, plan=CallbackPlan(stop_when={f"max_{name}": 1.0}))


def scripted_values(model, tokenizer, accelerator=None):
    """What a callback's `evaluate` returns, without generating."""
    return {"forget": 0.5, "retain": 0.5, "seconds": 0.01}


def test_transformers_hands_callbacks_no_trainer(tiny_model, train_set, tmp_path):
    """Why the callback is bound to its trainer: transformers passes it none. If this fails,
    transformers now does: take the trainer from the event's keyword arguments instead."""
    received = {}

    class Probe(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            received.update(kwargs)

    make_trainer(tiny_model, train_set, tmp_path, [Probe()], max_steps=1).train()
    assert "model" in received and "trainer" not in received


def test_an_unbound_callback_stops_before_the_first_step(
    tiny_model, corpus, train_set, tmp_path, monkeypatch
):
    """`Trainer(callbacks=[callback])` without binding: one clear error when training begins,
    saying what to write, and no step taken."""
    callback = make_callback(tiny_model, corpus)
    monkeypatch.setattr(callback, "evaluate", scripted_values)
    trainer = make_trainer(tiny_model, train_set, tmp_path)
    trainer.add_callback(callback)
    with pytest.raises(RuntimeError, match=r"bound to no trainer.*callback\.bind\(trainer\)"):
        trainer.train()
    assert trainer.state.global_step == 0 and not callback.history
    other = make_trainer(tiny_model, train_set, tmp_path)
    callback.bind(other)  # a trainer that does not run it
    with pytest.raises(RuntimeError, match="bound to a trainer that does not run it"):
        trainer.train()
    assert trainer.state.global_step == 0
    with pytest.raises(TypeError, match="takes a transformers Trainer, got str"):
        callback.bind("trainer")


@pytest.mark.parametrize("how", ["trainer=", "bind"])
def test_a_bound_callback_logs_through_its_trainer(
    tiny_model, corpus, train_set, tmp_path, monkeypatch, how
):
    """The two ways for any Trainer: `trainer.add_callback(WaterDrumCallback(..., trainer=
    trainer))`, or `callback.bind(trainer)` once the trainer has it (`Trainer(callbacks=[...])`
    or `add_callback`)."""
    if how == "trainer=":
        trainer = make_trainer(tiny_model, train_set, tmp_path, max_steps=2)
        callback = make_callback(tiny_model, corpus, trainer=trainer)
        trainer.add_callback(callback)
    else:
        callback = make_callback(tiny_model, corpus)
        trainer = make_trainer(tiny_model, train_set, tmp_path, max_steps=2)
        trainer.add_callback(callback)
        callback.bind(trainer)
    monkeypatch.setattr(callback, "evaluate", scripted_values)
    assert callback.trainer is trainer
    trainer.train()
    assert sorted(logged(trainer)) == [0, 2]


def test_the_unlearning_trainers_bind_it_themselves(tiny_model, corpus, tmp_path, monkeypatch):
    """Given in `callbacks=[...]` or added with `add_callback`, a callback is bound to the
    unlearning trainer that runs it (rebinding one bound to another trainer)."""
    from waterdrum_hf.data import split_by_owner
    from waterdrum_hf.trainers import GradDiffConfig, GradDiffTrainer

    _, tokenizer = tiny_model
    forget, retain = split_by_owner(corpus, [KEYS[2]])
    given, added = make_callback(tiny_model, corpus), make_callback(tiny_model, corpus)
    added.bind(make_trainer(tiny_model, None, tmp_path / "elsewhere"))
    trainer = GradDiffTrainer(
        model=copy.deepcopy(tiny_model[0]).train(),
        args=GradDiffConfig(output_dir=str(tmp_path), **TWO_LOGGED_STEPS),
        forget_dataset=forget.remove_columns("owner_id"),
        retain_dataset=retain.remove_columns("owner_id"),
        processing_class=tokenizer,
        callbacks=[given],
    )
    assert given.trainer is trainer
    trainer.add_callback(added)
    assert added.trainer is trainer
    for callback in (given, added):
        monkeypatch.setattr(callback, "evaluate", scripted_values)
    trainer.train()
    assert given.history and added.history
    assert [e["step"] for e in given.history] == [e["step"] for e in added.history] == [0, 2]


def test_from_dataset_builds_the_papers_queries_and_subsamples(tiny_model, corpus):
    _, tokenizer = tiny_model
    callback = make_callback(tiny_model, corpus, max_queries_per_owner=2, prefix_tokens=5)
    owners = np.array(corpus["owner_id"])
    queries = completion_queries(corpus["text"], tokenizer, 5)
    forget = [q for q, o in zip(queries, owners, strict=True) if o == KEYS[2]]
    assert len(callback.queries) == 6  # two per owner
    assert set(callback.queries[:2]) <= set(forget)
    assert set(callback.queries[2:]).isdisjoint(forget)
    qa = Dataset.from_dict({"question": ["What is a class?", "Why?"], "owner_id": [1, 2]})
    qa_callback = WaterDrumCallback.from_dataset(qa, [2], tokenizer, tokenizer)
    assert qa_callback.queries == [
        "<s><|user|>Why?</s><|assistant|>",
        "<s><|user|>What is a class?</s><|assistant|>",
    ]
    with pytest.raises(ValueError, match="neither a 'text' nor a 'question' column"):
        WaterDrumCallback.from_dataset(qa.rename_column("question", "q"), [2], tokenizer, tokenizer)


def test_unlearning_trainer_with_a_peft_model(tiny_model, corpus, tmp_path):
    peft = pytest.importorskip("peft")
    from waterdrum_hf.data import split_by_owner
    from waterdrum_hf.trainers import KLConfig, KLTrainer

    model, tokenizer = tiny_model
    lora = peft.get_peft_model(
        copy.deepcopy(model), peft.LoraConfig(r=4, target_modules=["q_proj", "v_proj"])
    )
    forget, retain = split_by_owner(corpus, [KEYS[2]])
    callback = make_callback(tiny_model, corpus)
    trainer = KLTrainer(
        model=lora,
        args=KLConfig(
            output_dir=str(tmp_path),
            **TWO_LOGGED_STEPS,
        ),
        forget_dataset=forget.remove_columns("owner_id"),
        retain_dataset=retain.remove_columns("owner_id"),
        processing_class=tokenizer,
        callbacks=[callback],
    )
    trainer.train()
    assert sorted(logged(trainer)) == [0, 2]
    losses = [e for e in trainer.state.log_history if "loss" in e]
    assert losses and all("loss/forget" in e for e in losses)


def test_trl_sft_trainer(tiny_model, corpus, tmp_path):
    from trl import SFTConfig, SFTTrainer

    model, tokenizer = tiny_model
    callback = make_callback(tiny_model, corpus)
    trainer = SFTTrainer(
        model=copy.deepcopy(model),
        args=SFTConfig(
            output_dir=str(tmp_path),
            **TWO_LOGGED_STEPS,
            max_length=96,
        ),
        train_dataset=corpus.remove_columns("owner_id"),
        processing_class=tokenizer,
        callbacks=[callback],
    )
    callback.bind(trainer)  # TRL's trainers, as transformers', do not bind it
    trainer.train()
    assert sorted(logged(trainer)) == [0, 2]


def test_trl_dpo_trainer(tiny_model, corpus, tmp_path):
    from trl import DPOConfig, DPOTrainer

    model, tokenizer = tiny_model
    preferences = Dataset.from_dict(
        {
            "prompt": ["What is a class?", "What is a lambda?"],
            "chosen": [" A blueprint for objects.", " An anonymous function."],
            "rejected": [" I don't know.", " I don't know."],
        }
    )
    callback = make_callback(tiny_model, corpus)
    trainer = DPOTrainer(
        model=copy.deepcopy(model),
        ref_model=copy.deepcopy(model),
        args=DPOConfig(
            output_dir=str(tmp_path),
            **TWO_LOGGED_STEPS,
            bf16=False,
        ),
        train_dataset=preferences,
        processing_class=tokenizer,
        callbacks=[callback],
    )
    callback.bind(trainer)
    trainer.train()
    assert sorted(logged(trainer)) == [0, 2]
