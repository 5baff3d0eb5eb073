"""The built-in tiny model: shipped (the same weights everywhere), rebuilt bit for bit under
the pinned kernels; other sizes built once per kernel set under HF_HOME; varied, deterministic."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from waterdrum_hf import completion_queries, generate, tiny
from waterdrum_hf.data import toy_corpus
from waterdrum_hf.utils.torch_plumbing import cpu_vendor, mkl_branch

SMALL = tiny._Recipe(steps=2, batch_size=1, block_size=64)


def test_the_default_loads_from_the_shipped_folder_and_reloads_with_auto_classes(tiny_model):
    model, tokenizer = tiny_model
    path = tiny.cache_path()
    assert path == tiny.SHIPPED == Path(tiny.__file__).parent / "tiny_model"
    assert path.is_absolute() and model.name_or_path == str(path)

    reloaded = AutoModelForCausalLM.from_pretrained(path)
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, reloaded.state_dict()[name]), name
    assert type(reloaded).__name__ == "LlamaForCausalLM" and not model.training
    assert 5e5 < model.num_parameters() < 2e6
    assert model.config.max_position_embeddings >= 512

    tok = AutoTokenizer.from_pretrained(path)
    assert tok.vocab_size == 4096
    assert (tok.bos_token, tok.eos_token, tok.pad_token) == ("<s>", "</s>", "<pad>")
    assert tok("Python")["input_ids"][0] == tok.bos_token_id
    assert tok.chat_template == tokenizer.chat_template == tiny.CHAT_TEMPLATE


def test_models_load_in_eval_mode_on_the_right_device(tiny_model):
    from waterdrum_hf.utils.torch_plumbing import load_causal_lm

    assert tiny_model[0].device.type == "cpu"  # the tiny model stays a CPU model
    model = load_causal_lm(
        tiny.cache_path()
    )  # what stages, the CLI and --model-name-or-path load with
    assert not model.training
    assert model.device.type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert load_causal_lm(tiny.cache_path(), device="cpu").device.type == "cpu"


def test_the_default_is_never_built_and_a_cached_build_is_reused(tiny_model, tmp_path, monkeypatch):
    size = tiny.TinySize(steps=2)
    built, _ = tiny.load(tmp_path, size=size, show_progress=False)
    monkeypatch.setattr(tiny, "_build", lambda *a, **k: pytest.fail("built a model again"))
    model, _ = tiny.load(tmp_path)
    assert torch.equal(model.lm_head.weight, tiny_model[0].lm_head.weight)
    assert list(tmp_path.iterdir()) == [tiny.cache_path(tmp_path, size=size)]  # default: none
    again, _ = tiny.load(tmp_path, size=size, show_progress=False)
    assert torch.equal(again.lm_head.weight, built.lm_head.weight)


def test_the_shipped_weights_are_those_their_build_record_names(tiny_model):
    """The digest in ``build.json`` is the loaded weights' (a changed file is caught), and the
    digest sees one changed value or another dtype."""
    model = tiny_model[0]
    info = tiny.shipped_build_info()
    assert tiny.weights_digest(model) == info["digest"]
    avx2 = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
    assert info["kernels"] == tiny.BUILD_KERNELS == avx2
    copy = copy_of(model)
    with torch.no_grad():
        copy.model.norm.weight[0] += 1e-7 * copy.model.norm.weight[0].abs().clamp(min=1)
    assert tiny.weights_digest(copy) != info["digest"]
    assert tiny.weights_digest(copy_of(model).double()) != info["digest"]


def copy_of(model):
    import copy

    return copy.deepcopy(model)


@pytest.mark.end_to_end
def test_a_reproducible_build_gives_the_shipped_weights_bit_for_bit(tiny_model, tmp_path):
    """Built in a child process under the pinned kernels (whatever this processor's own),
    the recipe gives exactly the shipped files: where the corpus and versions are the shipped
    build's, else the test says which differ."""
    info = tiny.shipped_build_info()
    context = tiny.build_context()
    differ = {key: context[key] for key in context if context[key] != info[key]}
    if differ:
        pytest.skip(f"this environment is not the shipped build's: {differ}")
    if mkl_branch(tiny.BUILD_KERNELS["MKL_CBWR"]) != "avx2":  # its refusal: the test below
        pytest.skip(f"MKL pins its AVX2 branch on Intel processors only, not {cpu_vendor()}")
    built = tiny.build_reproducibly(tmp_path / "tiny", show_progress=False)
    for file in ("model.safetensors", "tokenizer.json", "config.json"):
        assert (built / file).read_bytes() == (tiny.SHIPPED / file).read_bytes(), file
    assert tiny.weights_digest(AutoModelForCausalLM.from_pretrained(built)) == info["digest"]
    with pytest.raises(ValueError, match="exists"):
        tiny.build_reproducibly(built)


def test_a_reproducible_build_is_refused_where_mkl_cannot_take_its_branch(tmp_path, monkeypatch):
    """On a processor not made by Intel, MKL runs its own branch under MKL_CBWR=AVX2: the
    build says so before it starts a child or makes the folder."""
    from waterdrum_hf.utils import torch_plumbing

    for module in (torch_plumbing, tiny):
        monkeypatch.setattr(module, "cpu_vendor", lambda: "AuthenticAMD")
    monkeypatch.setattr(tiny.subprocess, "run", lambda *a, **k: pytest.fail("a child started"))
    with pytest.raises(RuntimeError, match="Intel processors only; this one is AuthenticAMD"):
        tiny.build_reproducibly(tmp_path / "tiny")
    assert not (tmp_path / "tiny").exists()


def test_it_learned_the_corpus(tiny_model):
    """Per-token loss on corpus passages: ln(4096) = 8.3 for a random init, ~4 trained."""
    model, tokenizer = tiny_model
    batch = tokenizer(toy_corpus()["text"][::40], return_tensors="pt", padding=True)
    labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
    with torch.no_grad():
        assert model(**batch, labels=labels).loss.item() < 5.0


def test_sampled_text_is_varied(tiny_model):
    model, tokenizer = tiny_model
    queries = completion_queries(toy_corpus()["text"][::200], tokenizer, prefix_tokens=20)
    samples = generate(model, tokenizer, queries, num_samples=2, max_new_tokens=60, seed=0)
    ids = [t for per_query in samples for s in per_query for t in tokenizer(s)["input_ids"][1:]]
    assert len(ids) > 200
    assert len(set(ids)) / len(ids) > 0.4


def test_paraphrase_prompt_gives_varied_text_even_with_beam_search(tiny_model):
    """A random init, or this model without its repetition penalty, loops under beam search."""
    model, tokenizer = tiny_model
    passage = toy_corpus()["text"][5]
    messages = [
        {"role": "system", "content": tiny.PARAPHRASE_PROMPT},
        {"role": "user", "content": passage},
    ]
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    [samples] = generate(model, tokenizer, [prompt], num_samples=6, max_new_tokens=60, seed=0)
    words = sorted(len(sample.split()) for sample in samples)
    assert words[3] > 10 and len(set(samples)) == 6

    inputs = tokenizer(
        prompt + tiny.PARAPHRASE_PREFILL, return_tensors="pt", add_special_tokens=False
    )
    # The end token is held back for 40 tokens: a short answer is fine, a loop is not.
    beams = model.generate(
        **inputs, num_beams=4, do_sample=False, min_new_tokens=40, max_new_tokens=80
    )
    new = beams[0, inputs["input_ids"].shape[1] :].tolist()
    assert len(new) >= 40 and len(set(new)) / len(new) > 0.3


def test_build_is_deterministic_atomic_and_shows_progress(tmp_path, capsys):
    for name in ("a", "b"):
        tiny._build(tmp_path / name, SMALL, show_progress=name == "a")
    assert "Training the tiny model" in capsys.readouterr().err
    for file in ("model.safetensors", "tokenizer.json"):
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


def test_a_failed_build_leaves_nothing_behind(tmp_path, monkeypatch):
    def crash(*args, **kwargs):
        raise RuntimeError("out of memory")

    monkeypatch.setattr(tiny, "_train_model", crash)
    with pytest.raises(RuntimeError, match="out of memory"):
        tiny.load(tmp_path, size="4m")
    assert list(tmp_path.iterdir()) == []


def test_built_path_is_the_loadable_build_and_a_quiet_load_prints_nothing(tiny_model, capsys):
    path = tiny.built_path()
    assert path == tiny.cache_path() and (path / "tokenizer_config.json").is_file()
    capsys.readouterr()
    tiny.load(show_progress=False)
    assert capsys.readouterr().err == ""  # no "Loading weights" bar


def test_sizes_have_folders_of_their_own_named_for_their_kernels(tmp_path, monkeypatch):
    assert tiny.cache_path(tmp_path) == tiny.SHIPPED
    assert tiny.cache_path(tmp_path, size="1m") == tiny.cache_path(size=tiny.TinySize())
    others = {tiny.cache_path(tmp_path, size=s) for s in ("4m", "16m")}
    others.add(tiny.cache_path(tmp_path, size=tiny.TinySize(steps=10)))
    assert len(others) == 3 and {p.parent for p in others} == {tmp_path.resolve()}
    texts = list(toy_corpus()["text"])
    recipe = tiny._recipe("4m")
    kernels = torch.backends.cpu.get_cpu_capability().lower()
    monkeypatch.delenv("MKL_CBWR", raising=False)
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    name = f"tiny-h256x4-{tiny.VERSION}-{tiny._fingerprint(texts, recipe)}-{kernels}"
    assert tiny.cache_path(tmp_path, size="4m").name == name
    # A build under other kernels is another folder, never reused silently.
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")  # a branch MKL takes on every processor
    assert tiny.cache_path(tmp_path, size="4m").name == f"{name}-mklcompatible"
    home = (Path(os.environ["HF_HOME"]) / "waterdrum_hf").resolve()
    assert tiny.cache_path(size="4m").parent == home


def test_a_size_is_named_or_valid():
    with pytest.raises(ValueError, match="`size` must be one of 1m, 4m, 16m"):
        tiny.cache_path(size="2m")
    with pytest.raises(TypeError, match="tiny.TinySize"):
        tiny.cache_path(size=4)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="TinySize.num_layers must be > 0"):
        tiny.TinySize(num_layers=0)
    with pytest.raises(ValueError, match="multiple of num_heads"):
        tiny.TinySize(hidden_size=130)


@pytest.mark.parametrize("name, target", [("4m", 4e6), ("16m", 16e6)])
def test_named_sizes_have_about_their_parameter_count(tiny_model, tmp_path, name, target):
    """Built with the named architecture for two steps only (a full build takes minutes)."""
    from dataclasses import replace

    size = replace(tiny.SIZES[name], steps=2)
    model, tokenizer = tiny.load(tmp_path, size=size, show_progress=False)
    assert 0.7 * target < model.num_parameters() < 1.3 * target
    assert model.config.hidden_size == tiny.SIZES[name].hidden_size
    assert tokenizer.get_vocab() == tiny_model[1].get_vocab()  # the same tokenizer at every size
