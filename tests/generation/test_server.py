"""The completion-server client's protocol (:class:`CompletionServer`) against a loopback server
that answers deterministically; real vLLM is in ``test_vllm_server.py``."""

from __future__ import annotations

import socket
import time
from dataclasses import replace

import pytest

from tests.generation.fake_completion_server import fake_server
from waterdrum_hf.generation.sampling import SamplingConfig
from waterdrum_hf.generation.server import (
    SEED_RANGE,
    UNFILTERED_SAMPLING,
    CompletionServer,
    ServerError,
    request_seed,
)

pytest.importorskip("openai")

QUERIES = [f"query {i}" for i in range(7)]


def expected(query: str, seed: int | None, n: int, tokens: int) -> list[str]:
    return [f" {query}|seed={None if seed is None else seed + s}|{tokens}|0" for s in range(n)]


def test_each_query_is_one_request_with_n_samples_its_own_seed_and_no_filters():
    with fake_server() as server:
        client = CompletionServer([server.url], "m", check_seed=False)
        out = client.generate(QUERIES, SamplingConfig(num_samples=3, max_new_tokens=5, seed=10))
    assert out == [expected(q, request_seed(10, i), 3, 5) for i, q in enumerate(QUERIES)]
    assert len(server.requests) == len(QUERIES)
    for request in server.requests:
        assert request["model"] == "m" and request["n"] == 3 and request["max_tokens"] == 5
        assert request["temperature"] == 1.0 and request["top_p"] == 1.0
        assert {k: request[k] for k in UNFILTERED_SAMPLING} == UNFILTERED_SAMPLING


def test_queries_with_one_prompt_never_share_samples_within_or_across_runs():
    """vLLM seeds choice j of a request seeded s with s + j: consecutive request seeds would
    repeat one query's samples in the next's (the same prompt twice: a duplicate's)."""
    sampling = SamplingConfig(num_samples=10, max_new_tokens=2)
    with fake_server() as server:
        client = CompletionServer([server.url], "m", check_seed=False)
        runs = [client.generate(["same"] * 50, replace(sampling, seed=seed)) for seed in (0, 1)]
    samples = [text for run in runs for query in run for text in query]
    assert len(set(samples)) == len(samples) == 1000
    seeds = [request_seed(seed, i) for seed in range(3) for i in range(1000)]
    assert all(0 <= s < SEED_RANGE for s in seeds) and len(set(seeds)) == len(seeds)


def test_greedy_asks_for_temperature_zero_and_unseeded_sends_no_seed():
    with fake_server() as server:
        client = CompletionServer([server.url], "m")
        client.generate(["q"], SamplingConfig(num_samples=1, greedy=True, seed=None))
    (request,) = server.requests  # no seed: no seed check either
    assert request["temperature"] == 0.0 and "seed" not in request and "top_p" not in request


def test_two_servers_share_the_queries_and_give_what_one_gives():
    sampling = SamplingConfig(num_samples=2, max_new_tokens=4, seed=0)
    with fake_server() as one:
        alone = CompletionServer([one.url], "m", check_seed=False).generate(QUERIES, sampling)
    with fake_server() as first, fake_server() as second:
        shared = CompletionServer([first.url, second.url], "m", check_seed=False).generate(
            QUERIES, sampling
        )
    assert shared == alone
    assert sorted(r["prompt"] for r in first.requests) == QUERIES[0::2]
    assert sorted(r["prompt"] for r in second.requests) == QUERIES[1::2]


def test_requests_in_flight_stay_within_max_concurrency():
    with fake_server() as server:
        server.delay = 0.05
        client = CompletionServer([server.url], "m", max_concurrency=3, check_seed=False)
        client.generate(QUERIES * 3, SamplingConfig(num_samples=1, max_new_tokens=2))
    assert server.most_in_flight == 3


def test_a_busy_server_is_retried_by_the_client():
    with fake_server() as server:
        server.fail_first = 1
        client = CompletionServer([server.url], "m", max_retries=1, check_seed=False)
        out = client.generate(["q"], SamplingConfig(num_samples=2, max_new_tokens=3, seed=1))
    assert out == [expected("q", request_seed(1, 0), 2, 3)]
    with fake_server() as server:
        server.fail_first = 1
        client = CompletionServer([server.url], "m", max_retries=0, check_seed=False)
        with pytest.raises(RuntimeError, match=r"query 0: .*503"):
            client.generate(["q"], SamplingConfig(num_samples=2, seed=1))


def test_a_server_that_returns_fewer_than_n_or_ignores_the_seed_is_refused():
    with fake_server() as server:
        server.drop_choice = True
        client = CompletionServer([server.url], "m", check_seed=False)
        with pytest.raises(RuntimeError, match="returned 2 completions of query 0 where 3"):
            client.generate(["q"], SamplingConfig(num_samples=3, seed=0))
    with fake_server() as server:
        server.ignore_seed = True
        with pytest.raises(RuntimeError, match="ignores the seed"):
            CompletionServer([server.url], "m").generate(QUERIES, SamplingConfig(seed=0))
        assert len(server.requests) == 2  # the check, before any query of the run
        assert all(r["max_tokens"] == 8 for r in server.requests)


def test_a_seeded_server_passes_the_check_and_the_check_is_short():
    with fake_server() as server:
        CompletionServer([server.url], "m").generate(["q"], SamplingConfig(num_samples=2, seed=0))
    assert [r["max_tokens"] for r in server.requests] == [8, 8, 200]


def closed_url() -> str:
    """The API root of a loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_a_server_that_is_down_is_one_line_after_the_clients_retries_not_a_hang():
    url = closed_url()
    for seed in (0, None):  # with the seed check first, and without it (the pool's first error)
        client = CompletionServer([url], "m", max_retries=1)
        start = time.perf_counter()
        with pytest.raises(ServerError, match=f"^cannot reach {url} .*is the server running"):
            client.generate(["q"] * 20, SamplingConfig(num_samples=2, seed=seed))
        assert time.perf_counter() - start < 15  # one back-off (under 2 s), not a time-out


def test_a_model_name_the_server_does_not_serve_names_those_it_does():
    with fake_server() as server:
        server.models = {"tiny", "npo-s0"}
        with pytest.raises(ServerError) as caught:
            CompletionServer([server.url], "npo-s9").generate(["q"], SamplingConfig(seed=0))
        assert (
            str(caught.value)
            == f"{server.url} serves no model named 'npo-s9'; it serves 'npo-s0', 'tiny'"
        )
        assert len(server.requests) == 1  # a 404 is not retried


def test_the_score_command_says_a_server_is_down_in_one_line(tmp_path, capsys):
    from tests.generation.owner_files import owner_files
    from waterdrum_hf.scripts import main

    _, rows, _ = owner_files(tmp_path)
    url = closed_url()
    code = main([
        "score", "--engine", "openai", "--base-url", url, "--model-name-or-path", "tiny",
        "--tokenizer", "tiny", "--dataset-name", str(rows), "--watermark-tokenizer", "tiny",
        "--forget-ids", "1001", "--output-dir", str(tmp_path / "out"),
    ])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith(f"waterdrum score: error: cannot reach {url} ")


@pytest.mark.parametrize(
    ("settings", "refused"),
    [
        ({"batch_size": 16}, "batch_size=16"),
        ({"cache": "static"}, "cache='static'"),
        ({"shared_prefill": False}, "shared_prefill=False"),
    ],
)
def test_what_only_transformers_does_is_refused(settings, refused):
    client = CompletionServer(["http://127.0.0.1:9/v1"], "m")
    with pytest.raises(ValueError, match=f"cannot honour {refused}"):
        client.generate(["q"], SamplingConfig(**settings))


def test_bad_settings_and_the_key_never_shown():
    with pytest.raises(ValueError, match="base_urls"):
        CompletionServer([], "m")
    with pytest.raises(ValueError, match="model"):
        CompletionServer(["http://x/v1"], "")
    with pytest.raises(ValueError, match="max_concurrency"):
        CompletionServer(["http://x/v1"], "m", max_concurrency=0)
    client = CompletionServer("http://x/v1", "m", api_key="sk-secret")
    assert client.base_urls == ("http://x/v1",)
    assert "sk-secret" not in repr(client) and "sk-secret" not in str(client)
    with pytest.raises(TypeError, match="inside `sampling`"):
        client.generate(["q"], SamplingConfig(), seed=1)
    with pytest.raises(ValueError, match="queries"):
        client.generate([""], SamplingConfig())


def test_the_servers_guides_snippet_runs_as_printed(tiny_model):
    """docs/guides/servers.md's Python block, its two servers on loopback, the reader's
    queries, owners and tokenizer from the built-in model."""
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "guides" / "servers.md"
    section = page.read_text().split("## More than one server", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)
    urls = re.findall(r'"(http://[^"]+)"', block)
    assert urls == ["http://gpu0:8000/v1", "http://gpu1:8000/v1"]
    _, tokenizer = tiny_model
    with fake_server() as first, fake_server() as second:
        code = block.replace(urls[0], first.url).replace(urls[1], second.url)
        scope = {
            "queries": ["The river", "A short"] * 2,
            "owners": [11, 22, 11, 22],
            "watermark_tokenizer": tokenizer,
            "forget_ids": [22],
        }
        exec(compile(code, str(page), "exec"), scope)
    assert len(first.requests) == len(second.requests) == 4  # the seed check (2), 2 queries
    assert {r["model"] for r in first.requests + second.requests} == {"npo-s0"}
    assert [len(c) for c in scope["completions"]] == [10] * 4
    assert set(scope["values"]) >= {"forget", "retain"}
