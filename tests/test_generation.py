"""generate(): the paper's unfiltered sampling, padding, seeds, modes, PEFT models, bad input."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch

from waterdrum_hf import completion_queries, generate


def test_generate_returns_only_completions_and_reproduces_with_a_seed(tiny_model, texts):
    model, tokenizer = tiny_model
    queries = completion_queries(texts[:3], tokenizer, prefix_tokens=8)
    out = generate(model, tokenizer, queries, num_samples=3, max_new_tokens=6, seed=7, batch_size=4)
    assert [len(samples) for samples in out] == [3, 3, 3]
    for samples in out:
        for completion in samples:
            assert 0 < len(tokenizer(completion, add_special_tokens=False)["input_ids"]) <= 8
    assert out == generate(
        model, tokenizer, queries, num_samples=3, max_new_tokens=6, seed=7, batch_size=4
    )
    assert out != generate(
        model, tokenizer, queries, num_samples=3, max_new_tokens=6, seed=8, batch_size=4
    )


def test_left_padding_gives_the_same_answer_as_alone(tiny_model, texts):
    model, tokenizer = tiny_model
    [short] = completion_queries(texts[:1], tokenizer, prefix_tokens=5)
    [long] = completion_queries(texts[2:3], tokenizer, prefix_tokens=30)
    kwargs = {"num_samples": 1, "max_new_tokens": 8, "temperature": 1e-4, "seed": 0}
    together = generate(model, tokenizer, [short, long], batch_size=2, **kwargs)
    alone = [generate(model, tokenizer, [q], batch_size=1, **kwargs)[0] for q in (short, long)]
    assert together == alone


def test_no_hidden_top_k(tiny_model, texts):
    """With the checkpoint's own top_k=1 (greedy), samples would all be equal."""
    model, tokenizer = tiny_model
    model = copy.deepcopy(model)
    model.generation_config.top_k = 1
    [samples] = generate(model, tokenizer, [texts[0][:40]], num_samples=6, max_new_tokens=8, seed=0)
    assert len(set(samples)) > 1


def test_modes_are_restored(tiny_model):
    model, tokenizer = tiny_model
    model = copy.deepcopy(model)
    model.train()
    generate(model, tokenizer, ["The"], num_samples=1, max_new_tokens=2)
    assert model.training and torch.is_grad_enabled()
    model.eval()
    generate(model, tokenizer, ["The"], num_samples=1, max_new_tokens=2)
    assert not model.training


def test_peft_models_work(tiny_model):
    peft = pytest.importorskip("peft")
    model, tokenizer = tiny_model
    lora = peft.get_peft_model(
        copy.deepcopy(model), peft.LoraConfig(r=2, target_modules=["q_proj", "v_proj"])
    )
    out = generate(lora, tokenizer, ["The"], num_samples=2, max_new_tokens=3, seed=0)
    assert len(out[0]) == 2 and lora.training


def test_a_query_without_tokens_is_refused(tiny_model):
    model, tokenizer = tiny_model
    tokenizer = copy.deepcopy(tokenizer)
    tokenizer.add_bos_token = False
    with pytest.raises(ValueError, match=r"queries\[1\] give no tokens"):
        generate(model, tokenizer, ["The", ""], num_samples=1, max_new_tokens=2)


def test_long_queries_are_cut_from_the_left_with_one_warning(tiny_model, texts):
    model, tokenizer = tiny_model
    context = model.config.max_position_embeddings
    with pytest.warns(UserWarning, match="2 of 2 queries exceed the 4 tokens") as record:
        out = generate(
            model,
            tokenizer,
            texts[:2],
            num_samples=1,
            max_new_tokens=context - 4,
            seed=0,
            batch_size=2,
            temperature=1e-4,
        )
    assert len([w for w in record if "exceed" in str(w.message)]) == 1
    assert len(out) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        generate(model, tokenizer, ["The"], num_samples=1, max_new_tokens=2)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"queries": "The"}, TypeError, "queries must be a list of strings"),
        ({"num_samples": 0}, ValueError, "num_samples"),
        ({"max_new_tokens": 0}, ValueError, "max_new_tokens"),
        ({"max_new_tokens": 10**6}, ValueError, "smaller than the model's context"),
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"temperature": 0.0}, ValueError, "temperature"),
        ({"top_p": 0.0}, ValueError, "top_p"),
    ],
)
def test_generate_rejects_bad_input(tiny_model, kwargs, error, match):
    model, tokenizer = tiny_model
    kwargs = {"queries": ["The"], **kwargs}
    with pytest.raises(error, match=match):
        generate(model, tokenizer, **kwargs)


def test_a_single_process_accelerator_changes_nothing(tiny_model, texts):
    from accelerate import Accelerator

    model, tokenizer = tiny_model
    queries = completion_queries(texts[:3], tokenizer, prefix_tokens=8)
    kwargs = {"num_samples": 2, "max_new_tokens": 6, "seed": 3}
    accelerator = Accelerator(cpu=True)
    assert generate(model, tokenizer, queries, accelerator=accelerator, **kwargs) == generate(
        model, tokenizer, queries, **kwargs
    )


def test_greedy_is_the_most_likely_continuation(tiny_model, texts):
    model, tokenizer = tiny_model
    [query] = completion_queries(texts[:1], tokenizer, prefix_tokens=8)
    [[greedy]] = generate(model, tokenizer, [query], num_samples=1, max_new_tokens=6, greedy=True)
    ids = tokenizer(query, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        for _ in range(6):
            ids = torch.cat([ids, model(input_ids=ids).logits[:, -1:].argmax(-1)], dim=1)
    prompt_length = tokenizer(query, return_tensors="pt")["input_ids"].shape[1]
    assert greedy == tokenizer.decode(ids[0, prompt_length:], skip_special_tokens=True)
    with pytest.raises(ValueError, match="num_samples must be 1"):
        generate(model, tokenizer, [query], num_samples=2, greedy=True)


def test_a_model_owners_watermark_processor_applies_to_every_batch(tiny_model, texts):
    """Sampling through WaterfallLogitsProcessor (kappa 6) reads high under its key."""
    from waterdrum_hf import WaterfallLogitsProcessor, verify_texts

    model, tokenizer = tiny_model
    queries = completion_queries(texts[:4], tokenizer, prefix_tokens=8)
    processor = WaterfallLogitsProcessor(tokenizer.vocab_size, 1234, kappa=6.0)
    kwargs = {"num_samples": 1, "max_new_tokens": 24, "seed": 0, "batch_size": 2}
    marked = [
        s[0] for s in generate(model, tokenizer, queries, logits_processor=[processor], **kwargs)
    ]
    plain = [s[0] for s in generate(model, tokenizer, queries, **kwargs)]
    assert verify_texts(marked, 1234, tokenizer).mean() > 0.5  # batches 1 and 2 alike
    assert verify_texts(marked[2:], 1234, tokenizer).mean() > 0.5
    assert abs(verify_texts(plain, 1234, tokenizer).mean()) < 0.3
