"""Queries and sampling, on the built-in tiny model."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch

from waterdrum_hf import completion_queries, generate, qa_queries
from waterdrum_hf._torch_plumbing import _checkpointing_kwargs, torch_threads
from waterdrum_hf.data import toy_corpus
from waterdrum_hf.prompting import completion_queries_and_continuations


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return toy_corpus()["text"][:6]


def test_completion_queries_are_the_first_tokens(tiny_model, texts):
    _, tokenizer = tiny_model
    queries = completion_queries(texts, tokenizer, prefix_tokens=12)
    for query, text in zip(queries, texts, strict=True):
        assert text.startswith(query)
        assert len(tokenizer(query, add_special_tokens=False)["input_ids"]) == 12
    assert completion_queries(["short text"], tokenizer, prefix_tokens=50) == ["short text"]


def test_max_fraction_leaves_part_of_every_text_to_complete(tiny_model, texts):
    _, tokenizer = tiny_model
    short = "The with statement is used to wrap the execution of a block."
    length = len(tokenizer(short, add_special_tokens=False)["input_ids"])
    [query] = completion_queries([short], tokenizer, prefix_tokens=50, max_fraction=0.5)
    assert short.startswith(query)
    assert len(tokenizer(query, add_special_tokens=False)["input_ids"]) == length // 2
    # Long texts keep their prefix_tokens; the cap only bites below 2 * prefix_tokens.
    assert completion_queries(texts, tokenizer, 12, max_fraction=0.5) == completion_queries(
        texts, tokenizer, 12
    )
    with pytest.raises(ValueError, match="max_fraction"):
        completion_queries([short], tokenizer, max_fraction=0)


def test_continuations_are_the_tokens_right_after_each_query(tiny_model, texts):
    """One rule for the demo's queries (max_fraction=0.5) and the reproduction's queries and
    ROUGE references: cut at min(prefix_tokens, half the text), at least one token."""
    _, tokenizer = tiny_model
    corpus = [*texts[:3], "The with statement is used to wrap the execution of a block.", "x"]
    queries, continuations = completion_queries_and_continuations(
        corpus, tokenizer, 12, max_fraction=0.5, continuation_tokens=5
    )
    assert queries == completion_queries(corpus, tokenizer, 12, max_fraction=0.5)
    for text, query, continuation in zip(corpus, queries, continuations, strict=True):
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        cut = max(1, min(12, len(ids) // 2))
        assert tokenizer(query, add_special_tokens=False)["input_ids"] == ids[:cut]
        assert tokenizer(continuation, add_special_tokens=False)["input_ids"] == ids[cut : cut + 5]
        assert text.startswith(query + continuation)
    assert completion_queries_and_continuations(corpus, tokenizer, 12)[1] == [""] * len(corpus)
    with pytest.raises(ValueError, match="continuation_tokens"):
        completion_queries_and_continuations(corpus, tokenizer, 12, continuation_tokens=-1)


def test_qa_queries_use_the_chat_template_or_a_plain_form(tiny_model):
    _, tokenizer = tiny_model
    [chat] = qa_queries(["What is a lambda?"], tokenizer)
    assert chat == "<s><|user|>What is a lambda?</s><|assistant|>"
    plain = copy.copy(tokenizer)
    plain.chat_template = None
    assert qa_queries(["Why?"], plain) == ["Question: Why?\nAnswer:"]


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda t: completion_queries("one text", t), TypeError, "texts must be a list of strings"),
        (lambda t: completion_queries(["a", 3], t), TypeError, r"texts\[1\] must be a str"),
        (lambda t: completion_queries(["a"], t, prefix_tokens=0), ValueError, "prefix_tokens"),
        (lambda t: qa_queries([None], t), TypeError, r"questions\[0\]"),
    ],
)
def test_queries_reject_bad_input(tiny_model, call, error, match):
    with pytest.raises(error, match=match):
        call(tiny_model[1])


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


def test_generation_leaves_gradient_checkpointing_as_it_was(tiny_model):
    """Generation runs in eval mode, where checkpointing is idle: with an accelerator (not
    ZeRO-3) the model's checkpointing is not switched off and back on (which would lose
    per-layer settings)."""
    from accelerate import Accelerator

    model, tokenizer = tiny_model
    model = copy.deepcopy(model).train()
    with warnings.catch_warnings():  # deprecated alias in transformers 5; the only one in 4.x
        warnings.simplefilter("ignore", FutureWarning)
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
    model.model.layers[1].gradient_checkpointing = False  # only some layers checkpointed
    generate(
        model,
        tokenizer,
        ["The"],
        num_samples=1,
        max_new_tokens=2,
        accelerator=Accelerator(cpu=True),
    )
    assert [layer.gradient_checkpointing for layer in model.model.layers] == [True, False]
    assert model.training


def test_checkpointing_kwargs_still_live_where_transformers_keeps_them(tiny_model):
    """The private hook behind ZeRO-3 generation: TRL re-enables checkpointing with what this
    reads. Fails loudly if transformers stops keeping the arguments there."""
    model = copy.deepcopy(tiny_model[0])
    assert _checkpointing_kwargs(model) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
    assert _checkpointing_kwargs(model) == {"use_reentrant": True}


def test_torch_threads_restores_the_count_even_on_error():
    before = torch.get_num_threads()
    target = 2 if before == 1 else 1
    with torch_threads(target):
        assert torch.get_num_threads() == target
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError, match="boom"), torch_threads(target):
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before


@pytest.mark.slow
def test_two_processes_split_the_queries_and_all_get_every_answer(
    tiny_model, tmp_path, run_two_processes
):
    """Each process samples its contiguous share with seed + rank; all get the whole result."""
    import json
    from pathlib import Path

    script = Path(__file__).parent / "scripts" / "distributed_generate.py"
    out = tmp_path / "seen.json"
    run_two_processes(script, out)
    report = json.loads(out.read_text())
    model, tokenizer = tiny_model
    queries = ["The class", "A lambda", "The import", "Exceptions are", "A module"]
    kwargs = {"num_samples": 2, "max_new_tokens": 6}
    expected = generate(model, tokenizer, queries[:3], seed=0, **kwargs) + generate(
        model, tokenizer, queries[3:], seed=1, **kwargs
    )
    assert report["processes"] == 2
    for seen in report["seen"]:
        assert seen["together"] == expected
        # A wrapped model without an accelerator: unwrapped, all queries on each process.
        assert seen["everything"] == generate(model, tokenizer, queries, seed=0, **kwargs)


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
