"""``waterdrum score --engine openai``: the flags, their refusals, and one report per served
adapter, against the loopback server of ``tests/generation`` (real vLLM:
``tests/generation/test_vllm_server.py``)."""

from __future__ import annotations

import json

import pytest

from tests.generation.fake_completion_server import fake_server
from waterdrum_hf.scripts import main

pytest.importorskip("openai")

KEYS = [1001, 1002]


@pytest.fixture
def rows(tmp_path):
    path = tmp_path / "rows.jsonl"
    texts = [
        f"passage {i} of owner {o} tells a short story about rivers"
        for o in range(2)
        for i in range(3)
    ]
    path.write_text(
        "\n".join(json.dumps({"text": t, "owner_id": KEYS[i // 3]}) for i, t in enumerate(texts))
    )
    return path


def score(rows, out, *flags):
    return [
        "score", "--dataset-name", str(rows), "--watermark-tokenizer", "tiny", "--forget-ids",
        str(KEYS[1]), "--prefix-tokens", "4", "--num-samples", "2", "--max-new-tokens", "12",
        "--output-dir", str(out), *flags,
    ]  # fmt: skip


def test_each_served_adapter_gets_its_report_from_the_same_queries_and_seed(rows, tmp_path, capsys):
    with fake_server() as server:
        code = main(score(rows, tmp_path / "out", "--engine", "openai", "--base-url", server.url,
                          "--model-name-or-path", "tiny", "--adapters", "npo=npo-s0", "kl"))  # fmt: skip
    assert code == 0, capsys.readouterr().err
    asked = [(r["model"], r["prompt"], r["seed"]) for r in server.requests if r["max_tokens"] == 12]
    by_model = {m: [(p, s) for n, p, s in asked if n == m] for m in ("npo-s0", "kl")}
    assert len(by_model["npo-s0"]) == 6 and sorted(by_model["npo-s0"]) == sorted(by_model["kl"])
    for folder, name in [("npo-s0", "npo"), ("kl", "kl")]:
        report = json.loads((tmp_path / "out" / folder / "report.json").read_text())
        assert list(report["models"]) == [name]
        assert report["settings"]["adapters"] == ["npo=npo-s0", "kl"]
        samples = [
            json.loads(line)["samples"]
            for line in (tmp_path / "out" / folder / "generations.jsonl").read_text().splitlines()
        ]
        assert all("|seed=" in s for query in samples for s in query) and len(samples) == 6
    assert not (tmp_path / "out" / "report.json").exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--engine", "openai"], "--engine openai needs --base-url"),
        (["--base-url", "http://x/v1"], "--base-url is for --engine openai"),
        (["--adapters", "a"], "--adapters is for --engine vllm or openai"),
        (["--engine", "vllm", "--adapters", "no/such/adapter"], "not a PEFT adapter folder"),
        (["--engine", "vllm", "--vllm-kwargs", "{oops"], "--vllm-kwargs is not JSON"),
        (["--engine", "vllm", "--vllm-kwargs", "[1]"], "must be a JSON object"),
        (["--vllm-kwargs", "{}"], "--vllm-kwargs is for --engine vllm"),
        (["--engine", "openai", "--base-url", "http://x/v1", "--adapters", "a", "b=a"],
         "--adapters: a given twice"),
        (["--engine", "openai", "--base-url", "http://x/v1", "--adapters", "x=../a"],
         "expected NAME or REPORT=NAME"),
        (["--engine", "openai", "--base-url", "http://x/v1", "--max-concurrency", "0"],
         "--max-concurrency"),
        (["--engine", "openai", "--base-url", "http://x/v1", "--batch-size", "8"],
         "cannot honour batch_size=8"),
        (["--engine", "openai", "--base-url", "http://x/v1", "--attack", "paraphrase:0.5"],
         "--attack paraphrase rewrites with a model loaded here"),
    ],
)  # fmt: skip
def test_flags_that_do_not_fit_are_refused_in_one_line(rows, tmp_path, capsys, flags, message):
    code = main(score(rows, tmp_path / "out", "--model-name-or-path", "tiny", *flags))
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert not (tmp_path / "out" / "report.json").exists()


def test_adapters_do_not_mix_with_saved_generations(rows, tmp_path, capsys):
    saved = tmp_path / "g.jsonl"
    saved.write_text("")
    flags = ["--generations", str(saved), "--engine", "openai", "--base-url", "http://x/v1"]
    code = main(score(rows, tmp_path / "out", *flags, "--adapters", "a"))
    assert code == 2 and "--adapters samples from a server" in capsys.readouterr().err


def test_the_vllm_engine_without_vllm_says_what_to_do_in_one_line(rows, tmp_path, capsys):
    import importlib.util

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here")
    code = main(score(rows, tmp_path / "out", "--model-name-or-path", "tiny", "--engine", "vllm"))
    err = capsys.readouterr().err
    assert code == 2 and "VLLMEngine needs vLLM" in err and "CompletionServer" in err
    assert "Traceback" not in err
