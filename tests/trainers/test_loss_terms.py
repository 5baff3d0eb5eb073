"""Every method's logged loss terms equal independent formulas, and padding changes no loss
(``trainers/base.py`` and the methods' ``compute_loss``)."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from trainer_setup import (
    full_batch,
    make_trainer,
    perturbed,
    row_nll,
    small_model,
)

from waterdrum_hf.data import IGNORE_INDEX

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
