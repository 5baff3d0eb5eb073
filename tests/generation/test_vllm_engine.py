"""The in-process ``VLLMEngine`` (vLLM's CPU build, the built-in model in float32, a LoRA
adapter): what it samples is what transformers and a ``vllm serve`` of the same weights give.
Runs where vLLM is installed beside this library (``bash dev.sh vllm``)."""

from __future__ import annotations

import sys

import pytest
import torch

from tests.generation.owner_files import assert_lm_eval_values_are_scores, owner_files
from tests.generation.vllm_support import VLLM_MARKS
from waterdrum_hf import tiny
from waterdrum_hf.generation.engine import generate
from waterdrum_hf.generation.sampling import SamplingConfig
from waterdrum_hf.generation.server import CompletionServer

pytestmark = VLLM_MARKS
pytest.importorskip("vllm")

QUERIES = ["The river ran", "Once upon a time there", "She opened the door and", "def f(x):"]
GREEDY = SamplingConfig(num_samples=1, max_new_tokens=24, greedy=True)
CPU = {"dtype": "float32", "enforce_eager": True, "max_model_len": 1024}
ENGINE = {"max_lora_rank": 8, **CPU}


@pytest.fixture(scope="module", autouse=True)
def small_kv_cache():
    """1 GiB of KV cache per engine (vLLM's CPU backend otherwise asks for 4, or most of RAM)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")
        yield


@pytest.fixture
def weights(vllm_weights):
    """The built-in model's folder and its LoRA adapter ``a`` (the session's)."""
    folder, adapters = vllm_weights
    return folder, adapters["a"]


@pytest.fixture(scope="module")
def engine(vllm_weights):
    """One in-process engine of the built-in model with adapter ``a`` named ``npo`` (the
    servers guide's name)."""
    from waterdrum_hf.generation.vllm_engine import VLLMEngine

    folder, adapters = vllm_weights
    with VLLMEngine(str(folder), adapters={"npo": str(adapters["a"])}, **ENGINE) as engine:
        yield engine


def test_greedy_text_equals_transformers_for_the_base_and_the_adapter(engine, weights):
    from peft import PeftModel

    _, adapter = weights
    model, tokenizer = tiny.load()
    assert engine.generate(QUERIES, GREEDY) == generate(model, tokenizer, QUERIES, GREEDY)
    peft = PeftModel.from_pretrained(tiny.load()[0], adapter)
    assert engine.generate(QUERIES, GREEDY, adapter="npo") == generate(
        peft, tokenizer, QUERIES, GREEDY
    )


def test_seeded_samples_equal_a_servers_of_the_same_weights(engine, vllm_served):
    url, _, _ = vllm_served
    sampling = SamplingConfig(num_samples=4, max_new_tokens=16, seed=11)
    here = engine.generate(QUERIES * 2, sampling, adapter="npo")
    assert here == engine.generate(QUERIES * 2, sampling, adapter="npo")
    assert CompletionServer([url], "a").generate(QUERIES * 2, sampling) == here
    assert len({s for samples in here for s in samples}) == 32  # no two queries share draws


def test_an_unknown_adapter_and_transformers_settings_are_refused(engine):
    with pytest.raises(ValueError, match=r"unknown adapter 'b' \(this engine has: npo\)"):
        engine.generate(QUERIES, GREEDY, adapter="b")
    with pytest.raises(ValueError, match="cannot honour batch_size=4"):
        engine.generate(QUERIES, SamplingConfig(batch_size=4))


def test_score_with_the_vllm_engine_writes_a_report_per_adapter_folder(engine, weights, tmp_path):
    import json

    from waterdrum_hf.generation.prompting import row_queries
    from waterdrum_hf.scripts import main

    folder, adapter = weights
    corpus, rows, _ = owner_files(tmp_path)
    code = main([
        "score", "--engine", "vllm", "--model-name-or-path", str(folder), "--adapters",
        f"npo={adapter}", "--vllm-kwargs", json.dumps(CPU), "--dataset-name", str(rows),
        "--watermark-tokenizer", "tiny", "--forget-ids", "1001", "--prefix-tokens", "8",
        "--num-samples", "2", "--max-new-tokens", "12", "--seed", "4",
        "--output-dir", str(tmp_path / "out"),
    ])  # fmt: skip
    assert code == 0
    report = json.loads((tmp_path / "out" / adapter.name / "report.json").read_text())
    assert list(report["models"]) == ["npo"]
    lines = (tmp_path / "out" / adapter.name / "generations.jsonl").read_text().splitlines()
    _, tokenizer = tiny.load()
    queries = row_queries(corpus, tokenizer, prefix_tokens=8)
    sampling = SamplingConfig(num_samples=2, max_new_tokens=12, seed=4)
    assert [json.loads(line)["samples"] for line in lines] == engine.generate(
        queries, sampling, adapter="npo"
    )


def test_the_servers_guides_snippet_runs_as_printed(engine, weights, monkeypatch):
    """docs/guides/servers.md's in-process block with its folders named (the built-in model
    and an adapter of it) and float32 (the CPU build's exact dtype): the engine it builds takes
    those arguments (``VLLMEngine``'s own signature binds them) and, lent this module's engine
    of the same weights (a vLLM start costs half a minute), it samples the adapter."""
    import inspect
    import re
    from pathlib import Path

    import waterdrum_hf
    from waterdrum_hf.generation.vllm_engine import VLLMEngine

    folder, adapter = weights
    page = Path(__file__).resolve().parents[2] / "docs" / "guides" / "servers.md"
    section = page.read_text().split("## vLLM in this process", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)
    code = (
        block.replace('"./base-model"', repr(str(folder)))
        .replace('"./npo-seed0"', repr(str(adapter)))
        .replace('dtype="bfloat16"', 'dtype="float32", enforce_eager=True, max_model_len=1024')
    )
    assert code.count(repr(str(folder))) == 1 and "float32" in code
    built = []

    def lend(*args, **kwargs):
        bound = inspect.signature(VLLMEngine).bind(*args, **kwargs).arguments
        built.append({**bound.pop("llm_options", {}), **bound})
        return engine

    monkeypatch.setattr(waterdrum_hf, "VLLMEngine", lend)
    scope = {"queries": QUERIES}
    exec(compile(code, str(page), "exec"), scope)
    assert built == [{"model": str(folder), "adapters": {"npo": str(adapter)}, **CPU}]
    assert [len(samples) for samples in scope["completions"]] == [10] * len(QUERIES)


def test_lm_evals_vllm_backend_runs_the_task_with_a_lora_adapter(weights, tmp_path):
    """lm-eval's own ``vllm`` backend on ``waterdrum_local`` with ``lora_local_path`` samples
    the adapted model: its samples are likelier under the adapter than under the base model,
    summed over all of them (the mean log-likelihood ratio estimates KL(adapted || base) > 0;
    samples of the base model would give minus KL(base || adapted) < 0). Its values are those
    ``waterdrum score`` gives its samples."""
    import json
    import os
    import subprocess

    from peft import PeftModel

    from waterdrum_hf.baselines.token_scores import score_answers
    from waterdrum_hf.lm_eval_tasks import tasks_path

    folder, adapter = weights
    _, rows, forget = owner_files(tmp_path)
    metadata = {"forget_ids_file": str(forget), "watermark_tokenizer": "tiny"}
    env = {**os.environ, "WATERDRUM_DATA_FILE": str(rows)}
    model_args = (
        f"pretrained={folder},dtype=float32,enforce_eager=True,max_model_len=1024,"
        f"lora_local_path={adapter},enable_lora=True,max_lora_rank=8"
    )
    command = [
        sys.executable, "-m", "lm_eval", "run", "--model", "vllm", "--model_args", model_args,
        "--include_path", str(tasks_path()), "--tasks", "waterdrum_local",
        "--metadata", json.dumps(metadata), "--gen_kwargs", "max_gen_toks=16", "--seed", "3",
        "--log_samples", "--output_path", str(tmp_path / "lora"),
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    [file] = (tmp_path / "lora").rglob("samples_waterdrum_local_*.jsonl")
    records = [json.loads(line) for line in file.read_text().splitlines()]
    assert all(len(set(r["filtered_resps"][0])) == 10 for r in records)  # 10 distinct samples
    pairs = [
        (r["arguments"]["gen_args_0"]["arg_0"], sample)
        for r in records
        for sample in r["filtered_resps"][0]
        if sample.strip()
    ]
    model, tokenizer = tiny.load()

    def log_likelihood(scorer: torch.nn.Module) -> float:
        scores = score_answers(
            scorer, tokenizer, [p for p, _ in pairs], [s for _, s in pairs], batch_size=8
        )
        return float(sum(score.log_probs.sum() for score in scores))

    base = log_likelihood(model)
    assert log_likelihood(PeftModel.from_pretrained(tiny.load()[0], adapter)) > base
    assert_lm_eval_values_are_scores(tmp_path / "lora", rows, forget, tmp_path / "r")
