"""The ``openai`` engine against real vLLM servers (``vllm serve`` on loopback, the built-in
model in float32 on the CPU, two LoRA adapters): what it samples is what transformers samples
from the same weights. vLLM lives in an environment of its own (its transformers pin excludes
ours): ``bash dev.sh vllm`` makes it and runs these with ``WATERDRUM_VLLM_PYTHON`` pointing at
its Python; without that variable they are skipped."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.stats import chisquare

from tests.generation.owner_files import assert_lm_eval_values_are_scores, owner_files
from tests.generation.vllm_support import VLLM_MARKS, serve_tiny
from waterdrum_hf import tiny
from waterdrum_hf.generation.engine import generate
from waterdrum_hf.generation.sampling import SamplingConfig
from waterdrum_hf.generation.server import CompletionServer, ServerError

pytestmark = VLLM_MARKS

QUERIES = ["The river ran", "Once upon a time there", "She opened the door and", "def f(x):"]
GREEDY = SamplingConfig(num_samples=1, max_new_tokens=24, greedy=True)


def transformers_model(adapter: Path | None = None):
    from peft import PeftModel

    model, tokenizer = tiny.load()
    return (PeftModel.from_pretrained(model, adapter) if adapter else model), tokenizer


def test_greedy_text_equals_transformers_for_the_base_and_each_adapter(vllm_served):
    url, _, adapters = vllm_served
    for name, adapter in [("tiny", None), *adapters.items()]:
        model, tokenizer = transformers_model(adapter)
        ours = generate(model, tokenizer, QUERIES, GREEDY)
        theirs = CompletionServer([url], name).generate(QUERIES, GREEDY)
        assert theirs == ours, name
    a, b = (CompletionServer([url], name).generate(QUERIES, GREEDY) for name in adapters)
    assert a != b  # the adapters are served as themselves
    # Without UNFILTERED_SAMPLING vLLM takes the checkpoint's repetition penalty (1.3).
    model, tokenizer = transformers_model()
    penalized = CompletionServer([url], "tiny", extra_body={}).generate(QUERIES, GREEDY)
    assert penalized != generate(model, tokenizer, QUERIES, GREEDY)


def test_a_name_the_server_does_not_serve_is_one_line_naming_those_it_does(vllm_served):
    url, _, _ = vllm_served
    with pytest.raises(ServerError) as caught:
        CompletionServer([url], "c").generate(QUERIES, GREEDY)
    assert str(caught.value) == f"{url} serves no model named 'c'; it serves 'a', 'b', 'tiny'"


def test_samples_are_drawn_from_the_full_distribution(vllm_served):
    """The first sampled token of 2,000 samples against the model's own next-token
    probabilities: the checkpoint's repetition penalty (1.3, generation_config.json), which
    vLLM would otherwise apply, and any top-k would fail this."""
    url, _, _ = vllm_served
    model, tokenizer = tiny.load()
    query = QUERIES[0]
    ids = tokenizer(query).input_ids
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, -1].double()
    # Each token's text after the prompt (as the server detokenizes it; EOS gives ""), and the
    # model's probability of each text.
    prompt_text = tokenizer.decode(ids, skip_special_tokens=True)
    probability: dict[str, float] = {}
    for token, p in enumerate(torch.softmax(logits, -1).tolist()):
        text = tokenizer.decode([*ids, token], skip_special_tokens=True)[len(prompt_text) :]
        probability[text] = probability.get(text, 0.0) + p
    sampling = SamplingConfig(num_samples=500, max_new_tokens=1, seed=3)
    client = CompletionServer([url], "tiny")
    texts = [t for samples in client.generate([query] * 4, sampling) for t in samples]
    # Texts with expected count >= 5 each, the rest pooled.
    frequent = [text for text, p in probability.items() if p * len(texts) >= 5]
    observed = [texts.count(text) for text in frequent]
    expected = [probability[text] * len(texts) for text in frequent]
    observed.append(len(texts) - sum(observed))
    expected.append(len(texts) - sum(expected))
    assert len(frequent) >= 5
    assert chisquare(np.array(observed), np.array(expected)).pvalue > 1e-3


def test_two_servers_share_the_queries_and_give_what_one_gives(vllm_served, tmp_path):
    url, folder, _ = vllm_served
    sampling = SamplingConfig(num_samples=3, max_new_tokens=16, seed=7)
    alone = CompletionServer([url], "tiny").generate(QUERIES * 2, sampling)
    with serve_tiny(folder, tmp_path / "second.log") as second:
        shared = CompletionServer([url, second], "tiny").generate(QUERIES * 2, sampling)
    assert shared == alone
    with pytest.raises(ServerError, match=f"^cannot reach {second} "):  # now stopped
        CompletionServer([url, second], "tiny", max_retries=1).generate(QUERIES, sampling)
    assert len({tuple(samples) for samples in alone}) == len(alone)  # seeds differ by query


def test_score_writes_one_report_per_served_adapter_from_the_same_queries(vllm_served, tmp_path):
    from waterdrum_hf.generation.prompting import row_queries
    from waterdrum_hf.scripts import main

    url, folder, _ = vllm_served
    corpus, rows, _ = owner_files(tmp_path, passages=3)
    out = tmp_path / "reports"
    code = main([
        "score", "--engine", "openai", "--base-url", url, "--model-name-or-path", "tiny",
        "--tokenizer", str(folder), "--adapters", "a", "original=b", "--dataset-name", str(rows),
        "--watermark-tokenizer", "tiny", "--forget-ids", "1001", "--prefix-tokens", "8",
        "--num-samples", "2", "--max-new-tokens", "16", "--seed", "5", "--output-dir", str(out),
    ])  # fmt: skip
    assert code == 0
    _, tokenizer = tiny.load()
    queries = row_queries(corpus, tokenizer, prefix_tokens=8)
    sampling = SamplingConfig(num_samples=2, max_new_tokens=16, seed=5)
    for served_name, report_name in [("a", "a"), ("b", "original")]:
        report = json.loads((out / served_name / "report.json").read_text())
        assert list(report["models"]) == [report_name]
        assert report["settings"]["engine"] == "openai"
        lines = (out / served_name / "generations.jsonl").read_text().splitlines()
        saved = [json.loads(line)["samples"] for line in lines]
        assert saved == CompletionServer([url], served_name).generate(queries, sampling)


def test_lm_eval_local_completions_runs_the_task_against_the_server(vllm_served, tmp_path):
    """lm-eval's own ``local-completions`` backend on ``waterdrum_local``: with lm-eval's fixed
    request seed the ten repeats are one completion and the task refuses them; with
    ``seed=None`` they differ and the values are those ``waterdrum score`` gives the samples."""
    import sys

    from waterdrum_hf.lm_eval_tasks import tasks_path

    url, folder, _ = vllm_served
    _, rows, forget = owner_files(tmp_path)
    metadata = {"forget_ids_file": str(forget), "watermark_tokenizer": "tiny"}
    env = {**os.environ, "WATERDRUM_DATA_FILE": str(rows), "HF_HUB_OFFLINE": "1"}

    def lm_eval(gen_kwargs: str, out: Path) -> subprocess.CompletedProcess:
        command = [
            sys.executable, "-m", "lm_eval", "run", "--model", "local-completions",
            "--model_args", f"model=tiny,base_url={url}/completions,tokenizer={folder},"
            "num_concurrent=4,tokenized_requests=False",
            "--include_path", str(tasks_path()), "--tasks", "waterdrum_local",
            "--metadata", json.dumps(metadata), "--gen_kwargs", gen_kwargs,
            "--log_samples", "--output_path", str(out),
        ]  # fmt: skip
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)

    refused = lm_eval("max_gen_toks=24", tmp_path / "seeded")
    assert refused.returncode != 0 and "--gen_kwargs seed=None" in refused.stderr
    done = lm_eval("max_gen_toks=24,seed=None", tmp_path / "out")
    assert done.returncode == 0, done.stderr[-3000:]
    [samples_file] = (tmp_path / "out").rglob("samples_waterdrum_local_*.jsonl")
    samples = [json.loads(line) for line in samples_file.read_text().splitlines()]
    assert all(len(set(s["filtered_resps"][0])) == 10 for s in samples)
    assert_lm_eval_values_are_scores(tmp_path / "out", rows, forget, tmp_path / "r")
