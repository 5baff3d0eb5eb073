"""generate(): the paper's unfiltered sampling, padding, seeds, modes, PEFT models, bad input."""

from __future__ import annotations

import copy
import logging
import warnings

import pytest
import torch

from waterdrum_hf import completion_queries, generate
from waterdrum_hf.generation.engine import CACHE_KEYWORD


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
        ({"batch_size": "largest"}, ValueError, 'batch_size must be a positive integer or "auto"'),
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


def _plain_generate(model, tokenizer, queries, num_samples, batch_sizes, seed, max_new_tokens=6):
    """transformers' own ``generate`` on the batches ``generate`` makes (left-padded rows of
    each query repeated ``num_samples`` times, cut into ``batch_sizes``): the samples that
    ``generate`` gave before it shared prefills or sized batches itself."""
    from waterdrum_hf.generation.prompting import prompt_token_ids
    from waterdrum_hf.generation.sampling import unfiltered_sampling_config

    rows = [prompt_token_ids(tokenizer, q) for q in queries for _ in range(num_samples)]
    config = unfiltered_sampling_config(
        max_new_tokens=max_new_tokens, pad_token_id=tokenizer.pad_token_id
    )
    texts, start = [], 0
    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for size in batch_sizes:
            batch = rows[start : start + size]
            start += size
            width = max(map(len, batch))
            ids = torch.tensor([[tokenizer.pad_token_id] * (width - len(r)) + r for r in batch])
            mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in batch])
            out = model.generate(input_ids=ids, attention_mask=mask, generation_config=config)
            texts += tokenizer.batch_decode(out[:, width:], skip_special_tokens=True)
    assert start == len(rows)
    return [texts[i : i + num_samples] for i in range(0, len(texts), num_samples)]


@pytest.fixture
def mixed_queries(tiny_model, texts):
    """Queries of different lengths (so batches are padded)."""
    _, tokenizer = tiny_model
    return [
        *completion_queries(texts[:2], tokenizer, prefix_tokens=5),
        *completion_queries(texts[2:4], tokenizer, prefix_tokens=17),
    ]


def test_shared_prefill_gives_the_samples_of_plain_generate(tiny_model, mixed_queries, monkeypatch):
    """Each query's prompt is prefilled once (generate gets a cache one token short of the
    prompt, copied to its samples) and the samples equal transformers' plain path, also with
    a query's samples split over two batches."""
    model, tokenizer = tiny_model
    caches = []
    plain = model.generate

    def recording(**kwargs):
        cache = kwargs.get(CACHE_KEYWORD)
        caches.append(
            None if cache is None else (kwargs["input_ids"].shape, cache.get_seq_length())
        )
        return plain(**kwargs)

    monkeypatch.setattr(model, "generate", recording)
    kwargs = {"num_samples": 3, "max_new_tokens": 6, "seed": 5, "batch_size": 4}
    shared = generate(model, tokenizer, mixed_queries, **kwargs)
    assert [shape[0] for shape, _ in caches] == [4, 4, 4]
    assert [length for _, length in caches] == [shape[1] - 1 for shape, _ in caches]
    expected = _plain_generate(model, tokenizer, mixed_queries, 3, [4, 4, 4], seed=5)
    assert shared == expected
    caches.clear()
    assert generate(model, tokenizer, mixed_queries, shared_prefill=False, **kwargs) == expected
    assert caches == [None] * 3


def test_the_shared_prefill_uses_the_current_cache_api(tiny_model, mixed_queries, caplog):
    """No deprecation from transformers: the cache goes by the installed version's name (5.24
    renamed ``past_key_values`` to ``cache``) and is a ``DynamicCache``."""
    model, tokenizer = tiny_model
    kwargs = {"num_samples": 3, "max_new_tokens": 4, "seed": 1, "batch_size": 6}
    with warnings.catch_warnings(), caplog.at_level(logging.WARNING, logger="transformers"):
        warnings.simplefilter("error")
        shared = generate(model, tokenizer, mixed_queries, **kwargs)
    assert not [r for r in caplog.records if "deprecated" in r.getMessage()]
    assert shared == generate(model, tokenizer, mixed_queries, shared_prefill=False, **kwargs)


def test_auto_batch_size_halves_on_out_of_memory_and_rewinds(
    tiny_model, mixed_queries, monkeypatch
):
    """A device that holds 3 sequences: "auto" tries all 12, then 6, then keeps 3; the result is
    complete, in order, and equal to batch_size=3. An int batch size is never changed."""
    import waterdrum_hf.generation.engine as generation

    model, tokenizer = tiny_model
    queries = mixed_queries[:3]
    sizes = []
    plain = model.generate

    def small_device(**kwargs):
        sizes.append(kwargs["input_ids"].shape[0])
        if sizes[-1] > 3:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return plain(**kwargs)

    monkeypatch.setattr(model, "generate", small_device)
    monkeypatch.setattr(generation, "CPU_BATCH_SIZE", 64)
    kwargs = {"num_samples": 4, "max_new_tokens": 6, "seed": 2}
    out = generate(model, tokenizer, queries, **kwargs)
    assert sizes == [12, 6, 3, 3, 3, 3]
    assert out == _plain_generate(model, tokenizer, queries, 4, [3] * 4, seed=2)
    with pytest.raises(torch.OutOfMemoryError):
        generate(model, tokenizer, queries, batch_size=4, **kwargs)


def test_an_out_of_memory_midway_retries_that_batch_only(tiny_model, mixed_queries, monkeypatch):
    """The second batch fails once: it is retried in halves from the random state it started
    with, the first batch's samples stay, and the smaller size is kept to the end."""
    import waterdrum_hf.generation.engine as generation

    model, tokenizer = tiny_model
    calls = []
    plain = model.generate

    def flaky_device(**kwargs):
        calls.append(kwargs["input_ids"].shape[0])
        if len(calls) == 2:
            torch.rand(7)  # it failed after drawing random numbers
            raise RuntimeError("CUDA error: out of memory.")
        return plain(**kwargs)

    monkeypatch.setattr(model, "generate", flaky_device)
    monkeypatch.setattr(generation, "CPU_BATCH_SIZE", 8)
    out = generate(model, tokenizer, mixed_queries, num_samples=5, max_new_tokens=6, seed=9)
    assert calls == [8, 8, 4, 4, 4]
    assert out == _plain_generate(model, tokenizer, mixed_queries, 5, [8, 4, 4, 4], seed=9)


def test_auto_batch_size_fits_the_free_memory(tiny_model, monkeypatch):
    """The estimate per sequence covers the KV cache a real prefill builds (twice over); the
    batch is what 80 % (GPU) or 50 % (CPU) of the free memory holds, within the limits."""
    import waterdrum_hf.generation.engine as generation

    model, _ = tiny_model
    per_sequence = generation._bytes_per_sequence(model, 30, 70)
    with torch.no_grad():
        out = model(input_ids=torch.ones((2, 100), dtype=torch.long), use_cache=True)
    kv_bytes = sum(
        t.numel() * t.element_size() for k, v, _ in getattr(out, CACHE_KEYWORD) for t in (k, v)
    )
    assert per_sequence > 2 * kv_bytes / 2
    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    for free, device, expected in [
        (100 * per_sequence, cuda, 80),
        (10**15, cuda, generation.AUTO_BATCH_SIZE_LIMIT),
        (20 * per_sequence, cpu, 10),
        (10**15, cpu, generation.CPU_BATCH_SIZE),
        (0, cpu, 1),
    ]:
        monkeypatch.setattr(generation, "free_memory", lambda _, free=free: free)
        assert generation.auto_batch_size(model, 30, 70, device) == expected
