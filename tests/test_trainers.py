"""The unlearning trainers: logged terms equal their formulas, padding changes nothing, SCRUB's
schedule, the PEFT reference, TaskVector's arithmetic, unlearning behaviour and bad input.

Small randomly initialised Llama models (with the built-in tiny tokenizer) check the arithmetic;
the built-in tiny model, first fitted to the toy QA sets, checks that unlearning unlearns.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import threading

import pytest
import torch
import torch.nn.functional as F
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import (
    HfArgumentParser,
    LlamaConfig,
    LlamaForCausalLM,
    TrainerCallback,
    TrainingArguments,
)

from waterdrum_hf import trainers
from waterdrum_hf.data import IGNORE_INDEX, ForgetRetainCollator, ForgetRetainDataset

FORGET_QA = [
    {"question": "Which colour is the north tower?", "answer": "The north tower is painted red."},
    {"question": "Who keeps the harbour key?", "answer": "Old Marta keeps the harbour key."},
    {"question": "When does the ferry leave?", "answer": "The ferry leaves at seven sharp."},
    {"question": "What does the blue flag mean?", "answer": "The blue flag means a storm."},
]
RETAIN_QA = [
    {"question": "What is a list in Python?", "answer": "A list is a mutable sequence."},
    {"question": "What does len return?", "answer": "len returns the number of items."},
    {"question": "What is a tuple?", "answer": "A tuple is an immutable sequence."},
    {"question": "What does print do?", "answer": "print writes text to the output."},
]
RETAIN_TEXT = [
    {"text": "A dictionary maps keys to values."},
    {"text": "The for statement iterates over the items of a sequence."},
    {"text": "Strings are immutable sequences of characters."},
    {"text": "A function is defined with the def keyword and may return a value."},
]

REFERENCE_CASES = {"graddiff_kl", "kl", "scrub_max", "scrub_min", "npo", "idkdpo"}
# (case id, method, config overrides): every method, some with non-default weights.
CASES = [
    ("gradascent", "gradascent", {"forget_weight": 0.5}),
    ("graddiff", "graddiff", {"forget_weight": 0.5, "retain_weight": 2.0}),
    ("graddiff_kl", "graddiff", {"retain_loss": "kl", "retain_weight": 3.0}),
    ("kl", "kl", {}),
    ("scrub_max", "scrub", {"num_max_phases": 1, "forget_weight": 2.0}),
    ("scrub_min", "scrub", {"num_max_phases": 0}),
    ("npo", "npo", {"beta": 0.5}),
    ("simnpo", "simnpo", {"beta": 1.5, "gamma": 0.2}),
    ("idkdpo", "idkdpo", {"retain_weight": 0.5}),
    ("idknll", "idknll", {}),
    ("taskvector", "taskvector", {"alpha": 2.0}),
]


@pytest.fixture(scope="module")
def tokenizer(tiny_model):
    return tiny_model[1]


def small_model(tokenizer, seed: int = 0) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return LlamaForCausalLM(config)


def perturbed(model: torch.nn.Module, scale: float = 0.05, seed: int = 1) -> torch.nn.Module:
    """A copy with every parameter moved by Gaussian noise (a reference unlike the model)."""
    other = copy.deepcopy(model)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in other.parameters():
            param.add_(scale * torch.randn(param.shape, generator=gen))
    return other


def lora(model: torch.nn.Module, *, trained: bool = False, seed: int = 2) -> PeftModel:
    """LoRA on attention and MLP projections; ``trained`` gives every B factor random values."""
    config = LoraConfig(
        r=4, lora_alpha=8, lora_dropout=0.0, target_modules=["q_proj", "v_proj", "down_proj"]
    )
    peft_model = get_peft_model(model, config)
    if trained:
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name, param in peft_model.named_parameters():
                if "lora_B" in name:
                    param.copy_(0.1 * torch.randn(param.shape, generator=gen))
    return peft_model


def make_config(method: str, tmp_path, **overrides) -> trainers.UnlearningConfig:
    _, config_class = trainers.get(method)
    settings = {
        "output_dir": str(tmp_path),
        "report_to": "none",
        "use_cpu": True,
        "save_strategy": "no",
        "disable_tqdm": True,
        "logging_steps": 1,
        "per_device_train_batch_size": 2,
        "learning_rate": 1e-3,
        "seed": 0,
    }
    return config_class(**{**settings, **overrides})


def make_trainer(method, model, tokenizer, tmp_path, *, forget=FORGET_QA, retain=RETAIN_TEXT, **kw):
    """A trainer of ``method``; ``kw`` splits into trainer arguments and config overrides."""
    trainer_class, _ = trainers.get(method)
    trainer_kwargs = {
        key: kw.pop(key) for key in ("ref_model", "callbacks", "eval_dataset") if key in kw
    }
    return trainer_class(
        model=model,
        args=make_config(method, tmp_path, **kw),
        forget_dataset=forget,
        retain_dataset=retain,
        processing_class=tokenizer,
        **trainer_kwargs,
    )


def full_batch(trainer) -> dict:
    """Every pair of the trainer's dataset, collated in one batch."""
    dataset = trainer.train_dataset
    return trainer.data_collator([dataset[i] for i in range(len(dataset))])


# ---- independent formulas (plain torch, no waterdrum_hf code) ------------------------------


def row_nll(model, side):
    """Per-row mean NLL and summed NLL (= -log pi(y|x)) of the labelled tokens."""
    logits = model(input_ids=side["input_ids"], attention_mask=side["attention_mask"]).logits
    targets = side["labels"][:, 1:]
    per_token = F.cross_entropy(
        logits[:, :-1].transpose(1, 2), targets, ignore_index=IGNORE_INDEX, reduction="none"
    )
    total = per_token.sum(1)
    return total / (targets != IGNORE_INDEX).sum(1), total


def row_kl(ref, model, side):
    """Per-row mean over labelled positions of sum_v p_ref (log p_ref - log p)."""
    inputs = {"input_ids": side["input_ids"], "attention_mask": side["attention_mask"]}
    ref_log_p = torch.log_softmax(ref(**inputs).logits[:, :-1], -1)
    log_p = torch.log_softmax(model(**inputs).logits[:, :-1], -1)
    per_token = (ref_log_p.exp() * (ref_log_p - log_p)).sum(-1)
    mask = side["labels"][:, 1:] != IGNORE_INDEX
    return (per_token * mask).sum(1) / mask.sum(1)


def expected_terms(case: str, args, model, ref, batch) -> dict[str, float]:
    """What each method's log must show at its first step, from the formulas in the papers."""
    forget, retain = batch["forget"], batch["retain"]
    with torch.no_grad():
        nll_f, sum_nll_f = row_nll(model, forget)
        nll_r = row_nll(model, retain)[0].mean()
        terms: dict[str, torch.Tensor] = {}
        if case in ("gradascent", "graddiff", "graddiff_kl", "kl"):
            terms["loss/forget"] = -nll_f.mean()
        if case in ("graddiff", "npo", "simnpo", "idkdpo", "idknll"):
            terms["loss/retain"] = terms["loss/retain_nll"] = nll_r
        if case in ("graddiff_kl", "kl"):
            terms["loss/retain"] = terms["loss/retain_kl"] = row_kl(ref, model, retain).mean()
        if case == "scrub_max":
            kl_f = row_kl(ref, model, forget).mean()
            terms.update({"loss/forget_kl": kl_f, "loss/forget": -kl_f, "scrub/max_phase": 1.0})
        if case == "scrub_min":
            kl_r = row_kl(ref, model, retain).mean()
            terms.update({"loss/retain_nll": nll_r, "loss/retain_kl": kl_r, "scrub/max_phase": 0.0})
            terms["loss/retain"] = args.retain_nll_weight * nll_r + args.retain_kl_weight * kl_r
        if case == "npo":
            ratio = torch.exp(-args.beta * (sum_nll_f - row_nll(ref, forget)[1]))
            terms["loss/forget"] = (2 / args.beta * torch.log(1 + ratio)).mean()
        if case == "simnpo":
            sigmoid = torch.sigmoid(args.beta * nll_f - args.gamma)
            terms["loss/forget"] = (-2 / args.beta * torch.log(sigmoid)).mean()
        if case == "idkdpo":
            chosen = (
                -row_nll(model, batch["alternative"])[1] + row_nll(ref, batch["alternative"])[1]
            )
            rejected = -sum_nll_f + row_nll(ref, forget)[1]
            margin = args.beta * (chosen - rejected)
            terms["loss/forget"] = torch.log(1 + torch.exp(-margin)).mean()
            terms["rewards/margin"] = margin.mean()
        if case == "idknll":
            terms["loss/forget"] = row_nll(model, batch["alternative"])[0].mean()
        if case == "taskvector":
            terms["loss/forget"] = nll_f.mean()
    return {name: float(value) for name, value in terms.items()}


def total_loss(terms: dict[str, float], args) -> float:
    forget_weight, retain_weight = args.forget_weight, args.retain_weight
    return forget_weight * terms.get("loss/forget", 0.0) + retain_weight * terms.get(
        "loss/retain", 0.0
    )


@pytest.mark.parametrize(("case", "method", "overrides"), CASES, ids=[c[0] for c in CASES])
def test_logged_terms_equal_their_formulas(case, method, overrides, tokenizer, tmp_path):
    """One optimizer step over all 4 pairs as 2 accumulated micro-batches of 2: the first log
    holds the mean of each term over the 4 pairs, computed before the step."""
    model = small_model(tokenizer)
    initial = copy.deepcopy(model)
    ref = perturbed(model) if case in REFERENCE_CASES else None
    extra = {"ref_model": copy.deepcopy(ref)} if case in REFERENCE_CASES else {}
    trainer = make_trainer(
        method,
        model,
        tokenizer,
        tmp_path,
        max_steps=1,
        gradient_accumulation_steps=2,
        **overrides,
        **extra,
    )
    expected = expected_terms(case, trainer.args, initial, ref, full_batch(trainer))
    trainer.train()
    logged = trainer.state.log_history[0]
    assert {k for k in logged if "/" in k} == set(expected)
    for name, value in expected.items():
        assert logged[name] == pytest.approx(value, rel=1e-4, abs=1e-5), name
    assert logged["loss"] == pytest.approx(total_loss(expected, trainer.args), rel=1e-4, abs=1e-5)


def pad_more(batch: dict, extra: int, pad_id: int) -> dict:
    """The same batch with ``extra`` more padding positions on the right of every side."""
    padded = {}
    for side, tensors in batch.items():
        rows = tensors["input_ids"].shape[0]
        padded[side] = {
            "input_ids": F.pad(tensors["input_ids"], (0, extra), value=pad_id),
            "attention_mask": F.pad(tensors["attention_mask"], (0, extra), value=0),
            "labels": torch.cat([tensors["labels"], torch.full((rows, extra), IGNORE_INDEX)], 1),
        }
    return padded


@pytest.mark.parametrize(("case", "method", "overrides"), CASES, ids=[c[0] for c in CASES])
def test_more_padding_changes_no_loss(case, method, overrides, tokenizer, tmp_path):
    model = small_model(tokenizer)
    ref = {"ref_model": perturbed(model)} if case in REFERENCE_CASES else {}
    trainer = make_trainer(method, model, tokenizer, tmp_path, **overrides, **ref)
    trainer.model.train()
    batch = full_batch(trainer)
    loss, terms = trainer.compute_loss(trainer.model, batch, return_outputs=True)
    padded_loss, padded_terms = trainer.compute_loss(
        trainer.model, pad_more(batch, 9, tokenizer.pad_token_id), return_outputs=True
    )
    torch.testing.assert_close(padded_loss, loss, rtol=1e-5, atol=1e-6)
    assert padded_terms.keys() == terms.keys()
    for name in terms:
        torch.testing.assert_close(padded_terms[name], terms[name], rtol=1e-5, atol=1e-6)


class OptimizerProbe(TrainerCallback):
    """Records, after every optimizer step, which optimizer and scheduler ran and their counts."""

    def __init__(self):
        self.optimizers, self.schedulers, self.adam_steps = [], [], []

    def on_step_end(self, args, state, control, optimizer=None, lr_scheduler=None, **kwargs):
        self.optimizers.append(id(optimizer))
        self.schedulers.append(id(lr_scheduler))
        param = optimizer.param_groups[0]["params"][0]
        self.adam_steps.append(int(optimizer.state[param]["step"]))


def test_scrub_alternates_as_configured_with_one_optimizer(tokenizer, tmp_path):
    probe = OptimizerProbe()
    trainer = make_trainer(
        "scrub",
        small_model(tokenizer),
        tokenizer,
        tmp_path,
        max_phase_steps=2,
        min_phase_steps=1,
        num_max_phases=2,
        max_steps=7,
        callbacks=[probe],
    )
    trainer.train()
    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    phases = [entry["scrub/max_phase"] for entry in logs]
    assert phases == [1, 1, 0, 1, 1, 0, 0]
    assert [trainers.scrub_phase(s, 2, 1, 2) for s in range(7)] == ["max"] * 2 + ["min"] + [
        "max"
    ] * 2 + ["min"] * 2
    for entry, phase in zip(logs, phases, strict=True):
        assert ("loss/forget_kl" in entry) == bool(phase)
        assert ("loss/retain_nll" in entry) == (not phase)
    # One optimizer and one schedule across phases: Adam's step count never restarts and the
    # learning rate decays once, linearly, over the whole run.
    assert len(set(probe.optimizers)) == 1 and len(set(probe.schedulers)) == 1
    assert probe.adam_steps == list(range(1, 8))
    rates = [entry["learning_rate"] for entry in logs]
    assert all(later < earlier for earlier, later in zip(rates, rates[1:], strict=False))


def test_idkdpo_loss_equals_trl_dpo_trainer_loss(tokenizer, tmp_path):
    """TRL 1.16 has no standalone DPO loss function: its sigmoid loss lives inside
    ``DPOTrainer._compute_loss``. So a real ``DPOTrainer`` (small model, explicit reference)
    computes its loss on one of its own batches, and :func:`dpo_sigmoid_loss` is applied to the
    log-probabilities of the same sequences (labels = completion tokens) from copies of the same
    two models."""
    from datasets import Dataset
    from trl import DPOConfig, DPOTrainer

    reference = small_model(tokenizer)
    policy = perturbed(reference)
    ours, ours_ref = copy.deepcopy(policy), copy.deepcopy(reference)
    data = Dataset.from_dict(
        {
            "prompt": ["What is x?", "Where is the key kept?", "Who wrote it?"],
            "chosen": [" I don't know.", " I'm not sure.", " I have no idea."],
            "rejected": [" x is a list of numbers.", " Under the mat.", " Ada wrote it in 1843."],
        }
    )
    beta = 0.1
    args = DPOConfig(
        output_dir=str(tmp_path),
        beta=beta,
        per_device_train_batch_size=3,
        report_to="none",
        use_cpu=True,
        bf16=False,  # TRL's configs default to bf16, which autocasts the prepared reference
        disable_dropout=True,
    )
    trainer = DPOTrainer(
        model=policy, ref_model=reference, args=args, train_dataset=data, processing_class=tokenizer
    )
    assert trainer.loss_types == ["sigmoid"]
    batch = trainer._prepare_inputs(next(iter(trainer.get_train_dataloader())))
    with torch.no_grad():
        trl_loss = trainer.compute_loss(trainer.model, batch)
        labels = batch["input_ids"].masked_fill(batch["completion_mask"] == 0, IGNORE_INDEX)

        def log_probs(model):
            logits = model(
                input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
            ).logits
            return trainers.losses.sequence_log_prob(logits, labels).chunk(
                2
            )  # the batch is [chosen, rejected]

        (chosen, rejected), (ref_chosen, ref_rejected) = log_probs(ours), log_probs(ours_ref)
    loss = trainers.losses.dpo_sigmoid_loss(chosen, rejected, ref_chosen, ref_rejected, beta).mean()
    assert abs(loss.item() - math.log(2)) > 1e-3  # the two models differ: not the trivial value
    torch.testing.assert_close(loss, trl_loss, rtol=1e-5, atol=1e-6)


# ---- TaskVector ----------------------------------------------------------------------------


def effective_weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Weights by plain parameter name; for LoRA ``W + (lora_alpha / r) * B @ A``, by hand."""
    if not isinstance(model, PeftModel):
        return {name: param.detach().clone() for name, param in model.named_parameters()}
    config = model.peft_config["default"]
    inner = model.base_model.model
    weights = {
        name.replace(".base_layer", ""): param.detach().clone()
        for name, param in inner.named_parameters()
        if "lora_" not in name
    }
    for name, module in inner.named_modules():
        if hasattr(module, "lora_A") and "default" in module.lora_A:
            change = module.lora_B["default"].weight @ module.lora_A["default"].weight
            weights[f"{name}.weight"] += config.lora_alpha / config.r * change.detach()
    return weights


def assert_task_vector(result, original_weights, finetuned_weights, alpha):
    result_weights = effective_weights(result)
    assert result_weights.keys() == original_weights.keys()
    for name, weight in result_weights.items():
        orig, tuned = original_weights[name], finetuned_weights[name]
        torch.testing.assert_close(weight, orig - alpha * (tuned - orig), atol=1e-5, rtol=0)


@pytest.mark.parametrize("kind", ["full", "lora"])
def test_task_vector_is_the_formula_and_linear_in_alpha(kind, tokenizer):
    original = small_model(tokenizer)
    if kind == "lora":  # an adapter that already changes the model, so B0 A0 != 0 counts
        original = lora(original, trained=True)
    finetuned = perturbed(original)
    before = effective_weights(original), effective_weights(finetuned)
    results = {alpha: trainers.apply_task_vector(original, finetuned, alpha) for alpha in (0, 1, 3)}
    for alpha, result in results.items():
        assert not isinstance(result, PeftModel)
        assert_task_vector(result, *before, alpha)
    r0, r1, r3 = (effective_weights(results[a]) for a in (0, 1, 3))
    for name in r0:
        torch.testing.assert_close(
            r3[name] - r0[name], 3 * (r1[name] - r0[name]), atol=1e-5, rtol=0
        )
    # The inputs are untouched.
    for weights, model in zip(before, (original, finetuned), strict=True):
        for name, weight in effective_weights(model).items():
            assert torch.equal(weight, weights[name])


class FinalModel(TrainerCallback):
    """Keeps a copy of the fine-tuned model as training ends."""

    def on_train_end(self, args, state, control, model=None, **kwargs):
        self.model = copy.deepcopy(model)


@pytest.mark.parametrize("kind", ["full", "lora"])
def test_task_vector_trainer_negates_its_fine_tuning(kind, tokenizer, tmp_path):
    original = small_model(tokenizer)
    if kind == "lora":
        original = lora(original)
    original_weights = effective_weights(original)
    final = FinalModel()
    trainer = make_trainer(
        "taskvector",
        original,
        tokenizer,
        tmp_path,
        retain=None,
        max_steps=3,
        learning_rate=1e-2,
        callbacks=[final],
    )
    trainer.train()
    assert trainer.original_model is original
    for name, weight in effective_weights(original).items():
        assert torch.equal(weight, original_weights[name])
    finetuned_weights = effective_weights(final.model)
    assert any(
        not torch.allclose(finetuned_weights[n], original_weights[n]) for n in original_weights
    )
    assert_task_vector(trainer.model, original_weights, finetuned_weights, trainer.args.alpha)


# ---- the reference model -------------------------------------------------------------------


def parameter_bytes(*models) -> int:
    """Bytes of distinct parameter storage across ``models`` (shared tensors count once)."""
    seen = {}
    for model in models:
        for param in model.parameters() if model is not None else ():
            seen[param.data_ptr()] = param.numel() * param.element_size()
    return sum(seen.values())


def logits_of(model, batch) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits


@pytest.mark.parametrize("trained_adapter", [False, True])
def test_peft_reference_is_the_starting_model_without_a_second_copy(
    trained_adapter, tokenizer, tmp_path
):
    base = small_model(tokenizer)
    base_bytes = parameter_bytes(base)
    full = make_trainer("kl", copy.deepcopy(base), tokenizer, tmp_path / "full")
    assert parameter_bytes(full.model, full.ref_model) == 2 * base_bytes

    model = lora(base, trained=trained_adapter)
    starting = copy.deepcopy(model)
    trainer = make_trainer("kl", model, tokenizer, tmp_path, max_steps=3, learning_rate=1e-2)
    assert trainer.ref_model is None
    assert trainer._ref_adapter == ("ref" if trained_adapter else None)
    assert parameter_bytes(trainer.model) < 1.1 * base_bytes  # base weights once, plus adapters

    batch = full_batch(trainer)["retain"]
    trainer.train()
    assert trainer.state.log_history[0]["loss/retain_kl"] == pytest.approx(0.0, abs=1e-6)
    trainer.model.train()
    reference = trainer.reference_forward(trainer.model, batch)
    assert trainer.model.training  # the reference ran in eval mode, and the mode is restored
    torch.testing.assert_close(reference, logits_of(starting, batch), atol=1e-5, rtol=0)
    assert not torch.allclose(logits_of(trainer.model, batch), reference, atol=1e-3)
    trainable = {n for n, p in trainer.model.named_parameters() if p.requires_grad}
    assert trainable and all(".default." in n for n in trainable)


def test_disable_dropout_zeroes_every_dropout(tokenizer, tmp_path):
    model = get_peft_model(small_model(tokenizer), LoraConfig(r=4, lora_dropout=0.05))
    make_trainer("idknll", model, tokenizer, tmp_path, disable_dropout=True)
    dropouts = [m for m in model.modules() if isinstance(m, torch.nn.Dropout)]
    assert dropouts and all(m.p == 0 for m in dropouts)


def test_gradient_checkpointing_with_lora_trains_the_adapter(tokenizer, tmp_path):
    model = lora(small_model(tokenizer))
    trainer = make_trainer(
        "kl",
        model,
        tokenizer,
        tmp_path,
        max_steps=2,
        learning_rate=1e-2,
        activation_checkpointing=True,
        activation_checkpointing_kwargs={"use_reentrant": True},
    )
    trainer.train()
    b_factors = [p for n, p in model.named_parameters() if "lora_B" in n]
    assert b_factors and all(p.abs().sum() > 0 for p in b_factors)


def test_bf16_run_logs_finite_terms(tokenizer, tmp_path):
    trainer = make_trainer(
        "npo", small_model(tokenizer), tokenizer, tmp_path, max_steps=2, bf16=True
    )
    trainer.train()
    logged = trainer.state.log_history[0]
    assert all(torch.isfinite(torch.tensor(logged[k])) for k in ("loss/forget", "loss/retain_nll"))


# ---- unlearning unlearns -------------------------------------------------------------------


@pytest.fixture(scope="module")
def fitted(tiny_model, tmp_path_factory):
    """The tiny model fitted to the forget and retain QA sets (GD: GradDiff, forget_weight=0)."""
    model, tokenizer = tiny_model
    trainer = make_trainer(
        "graddiff",
        copy.deepcopy(model),
        tokenizer,
        tmp_path_factory.mktemp("fit"),
        retain=FORGET_QA + RETAIN_QA,
        forget_weight=0.0,
        per_device_train_batch_size=4,
        max_steps=20,
        learning_rate=6e-3,
        logging_steps=20,
    )
    trainer.train()
    return trainer.model.eval()


def qa_nll(model, tokenizer, rows, answer: str | None = None) -> float:
    """Mean answer NLL of QA rows (or of ``answer`` given to every question)."""
    pairs = [
        {"forget": row, "retain": row, **({"alternative": answer} if answer else {})}
        for row in rows
    ]
    batch = ForgetRetainCollator(tokenizer)(pairs)
    with torch.no_grad():
        return row_nll(model, batch["alternative" if answer else "forget"])[0].mean().item()


REFUSAL = "I don't know."
UNLEARNING_SETTINGS = {
    "scrub": {"max_phase_steps": 2, "min_phase_steps": 1, "num_max_phases": 3},
    "taskvector": {"alpha": 2.0},
    "idkdpo": {"refusal_answers": [REFUSAL]},
    "idknll": {"refusal_answers": [REFUSAL]},
}


@pytest.mark.parametrize("method", trainers.available())
def test_unlearning_lowers_the_forget_likelihood_and_keeps_retain(
    method, fitted, tokenizer, tmp_path
):
    before = {
        "forget": qa_nll(fitted, tokenizer, FORGET_QA),
        "retain": qa_nll(fitted, tokenizer, RETAIN_QA),
        "refusal": qa_nll(fitted, tokenizer, FORGET_QA, REFUSAL),
    }
    trainer = make_trainer(
        method,
        copy.deepcopy(fitted),
        tokenizer,
        tmp_path,
        retain=None if method in ("gradascent", "taskvector") else RETAIN_QA,
        per_device_train_batch_size=4,
        max_steps=6,
        **UNLEARNING_SETTINGS.get(method, {}),
    )
    trainer.train()
    after = {
        "forget": qa_nll(trainer.model, tokenizer, FORGET_QA),
        "retain": qa_nll(trainer.model, tokenizer, RETAIN_QA),
        "refusal": qa_nll(trainer.model, tokenizer, FORGET_QA, REFUSAL),
    }
    assert after["forget"] > 1.5 * before["forget"]
    assert after["retain"] - before["retain"] < 0.5 * (after["forget"] - before["forget"])
    if method.startswith("idk"):
        assert after["refusal"] < before["refusal"] - 1.0


# ---- evaluation ----------------------------------------------------------------------------


def test_evaluate_accepts_pairs_and_plain_causal_lm_batches(tokenizer, tmp_path):
    from datasets import Dataset

    model = small_model(tokenizer)
    trainer = make_trainer("kl", model, tokenizer, tmp_path)
    paired = trainer.evaluate(ForgetRetainDataset(FORGET_QA, RETAIN_TEXT))
    assert {"eval_loss", "eval_loss/forget", "eval_loss/retain_kl"} <= paired.keys()
    texts = [row["text"] for row in RETAIN_TEXT]
    tokenized = Dataset.from_dict(dict(tokenizer(texts))).map(
        lambda row: {"labels": row["input_ids"]}
    )
    plain = trainer.evaluate(tokenized, metric_key_prefix="heldout")
    assert torch.isfinite(torch.tensor(plain["heldout_loss"]))
    assert not any("/" in key for key in plain)
    unlabelled = trainer.evaluate(tokenized.remove_columns("labels"), metric_key_prefix="lm")
    assert unlabelled["lm_loss"] == pytest.approx(plain["heldout_loss"], rel=1e-4)


# ---- configs and registry ------------------------------------------------------------------


def test_registry_finds_every_method_by_any_spelling():
    names = ["gradascent", "graddiff", "kl", "scrub", "npo", "simnpo", "idkdpo", "idknll"]
    assert trainers.available() == [*names, "taskvector"]
    assert trainers.get("grad_diff") == trainers.get("GradDiff") == trainers.get("grad-diff")
    assert trainers.get("IDK_DPO") == (trainers.IdkDPOTrainer, trainers.IdkDPOConfig)
    assert trainers.get("TaskVector") == (trainers.TaskVectorTrainer, trainers.TaskVectorConfig)
    for name in trainers.available():
        trainer_class, config_class = trainers.get(name)
        assert issubclass(trainer_class, trainers.UnlearningTrainer)
        assert issubclass(config_class, trainers.UnlearningConfig)
    with pytest.raises(ValueError, match="unknown unlearning method 'rmu'.*gradascent.*taskvector"):
        trainers.get("rmu")


@pytest.mark.parametrize("method", trainers.available())
def test_configs_document_every_field_and_parse_from_the_command_line(method, tmp_path):
    _, config_class = trainers.get(method)
    own = [
        f
        for f in dataclasses.fields(config_class)
        if f.name not in TrainingArguments.__dataclass_fields__
    ]
    assert own and all(f.metadata.get("help") for f in own)
    argv = [
        "--output_dir",
        str(tmp_path),
        "--remove_unused_columns",
        "true",
        "--forget_weight",
        "0.5",
    ]
    (config,) = HfArgumentParser(config_class).parse_args_into_dataclasses(argv)
    assert config.forget_weight == 0.5 and config.remove_unused_columns is False


@pytest.mark.parametrize(
    ("method", "overrides", "field"),
    [
        ("kl", {"retain_weight": -1.0}, "retain_weight"),
        ("graddiff", {"forget_weight": -0.1}, "forget_weight"),
        ("graddiff", {"retain_loss": "mse"}, "retain_loss"),
        ("npo", {"beta": 0.0}, "beta"),
        ("simnpo", {"gamma": -1.0}, "gamma"),
        ("idkdpo", {"beta": -0.1}, "beta"),
        ("scrub", {"retain_kl_weight": -0.001}, "retain_kl_weight"),
        ("scrub", {"max_phase_steps": 0}, "max_phase_steps"),
        ("taskvector", {"alpha": -5.0}, "alpha"),
        ("taskvector", {"retain_weight": 1.0}, "retain_weight"),
        ("idknll", {"refusal_answers": []}, "refusal_answers"),
        ("gradascent", {"forget_weight": 0.0}, "forget_weight and retain_weight"),
    ],
)
def test_bad_settings_raise_naming_the_field(method, overrides, field, tmp_path):
    with pytest.raises(ValueError, match=field):
        make_config(method, tmp_path, **overrides)


# ---- bad input -----------------------------------------------------------------------------


def test_a_batch_without_forget_and_retain_names_the_collator(tokenizer, tmp_path):
    trainer = make_trainer("gradascent", small_model(tokenizer), tokenizer, tmp_path)
    trainer.model.train()
    plain = dict(tokenizer(["a plain batch"], return_tensors="pt"))
    with pytest.raises(ValueError, match="ForgetRetainCollator"):
        trainer.compute_loss(trainer.model, plain)


def test_an_uncopyable_model_without_ref_model_raises(tokenizer, tmp_path):
    model = small_model(tokenizer)
    model.lock = threading.Lock()  # deepcopy cannot copy a lock
    with pytest.raises(ValueError, match="cannot copy the model.*ref_model"):
        make_trainer("npo", model, tokenizer, tmp_path)
    trainer = make_trainer("npo", model, tokenizer, tmp_path, ref_model=small_model(tokenizer))
    assert trainer.ref_model is not None


@pytest.mark.parametrize(
    ("method", "data", "error", "message"),
    [
        ("taskvector", {"retain_dataset": RETAIN_TEXT}, ValueError, "no forget set"),
        ("kl", {"forget_dataset": FORGET_QA}, ValueError, "retain_dataset is required"),
        (
            "idkdpo",
            {"forget_dataset": RETAIN_TEXT, "retain_dataset": RETAIN_QA},
            ValueError,
            "'question' column",
        ),
        (
            "idknll",
            {"train_dataset": ForgetRetainDataset(FORGET_QA, RETAIN_QA)},
            ValueError,
            "alternative_answers",
        ),
        (
            "kl",
            {
                "train_dataset": ForgetRetainDataset(FORGET_QA, RETAIN_QA),
                "forget_dataset": FORGET_QA,
            },
            TypeError,
            "either",
        ),
    ],
)
def test_bad_data_raises(method, data, error, message, tokenizer, tmp_path):
    trainer_class, _ = trainers.get(method)
    with pytest.raises(error, match=message):
        trainer_class(
            model=small_model(tokenizer),
            args=make_config(method, tmp_path),
            processing_class=tokenizer,
            **data,
        )


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"processing_class": None}, ValueError, "processing_class"),
        ({"args": "npo"}, TypeError, "KLConfig"),
        ({"model": "meta-llama/Llama-3.1-8B"}, TypeError, "loaded model"),
    ],
)
def test_bad_trainer_arguments_raise(changes, error, message, tokenizer, tmp_path):
    kwargs = {
        "model": small_model(tokenizer),
        "args": make_config(changes.pop("args", "kl"), tmp_path),
        "forget_dataset": FORGET_QA,
        "retain_dataset": RETAIN_QA,
        "processing_class": tokenizer,
        **changes,
    }
    with pytest.raises(error, match=message):
        trainers.KLTrainer(**kwargs)


def test_a_prompt_that_fills_max_length_raises(tokenizer, tmp_path):
    model = small_model(tokenizer)
    long_question = [{"question": "why " * 80, "answer": "no"}]
    trainer = make_trainer(
        "gradascent", model, tokenizer, tmp_path, forget=long_question, max_length=32
    )
    with pytest.raises(ValueError, match="max_length=32"):
        full_batch(trainer)
