"""Sampling from OpenAI-compatible completion servers: ``vllm serve``, SGLang, llama.cpp's
server, or several of them (data-parallel replicas) or a router in front of them.

The paper's protocol at scale is a server's job: vLLM samples the ``n`` completions of a
query from one prefill, batches requests continuously and serves LoRA adapters by name
(``vllm serve BASE --enable-lora --lora-modules name=path``). :class:`CompletionServer` is the
client: one ``/v1/completions`` request per query with ``n=num_samples`` and a seed of its own,
at most ``max_concurrency`` requests in flight per server, the ``openai`` library's own
retries and time-outs. Several ``base_urls`` share the queries (query ``i`` goes to server
``i mod k``); a router's one URL does the same on its side.

What a server cannot do from here is refused rather than dropped: a model owner's logits
processor, a static KV cache, a fixed batch size (the server batches), turning off prefix
sharing. A server that returns fewer than ``n`` completions, or ignores the seed (checked
once per server before the run), is an error that says so.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from waterdrum_hf.generation.sampling import SamplingConfig
from waterdrum_hf.utils.error_text import first_line
from waterdrum_hf.utils.progress import progress_bar
from waterdrum_hf.utils.validation import check_positive_int, check_string_list

UNFILTERED_SAMPLING = {"top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0}
"""The sampling filters a completion request turns off beside temperature and top-p (vLLM's
and SGLang's names; vLLM would otherwise take them from the model's
``generation_config.json``): the paper samples from the full distribution."""

SEED_RANGE = 2**62
"""Request seeds are drawn below this: vLLM samples choice ``j`` of a request seeded ``s`` with
seed ``s + j``, which must stay a 64-bit signed integer."""

SEED_CHECK_TOKENS = 8
"""Tokens of the two seeded requests that check a server honours the seed."""


class ServerError(RuntimeError):
    """A completion server that cannot be reached, does not serve the model asked for, or does
    not answer as asked (fewer than ``n`` completions, the seed ignored, errors after the
    client's retries). Its message is one line that names the server."""


@dataclass(frozen=True)
class CompletionServer:
    """One or more OpenAI-compatible servers that serve the same model (or adapter) name.

    Args:
        base_urls: the servers' API roots, e.g. ``("http://127.0.0.1:8000/v1",)``; queries
            are shared among them.
        model: the served model's name (``vllm serve``'s ``--served-model-name``, the model's
            path by default) or a LoRA adapter's name from ``--lora-modules``.
        api_key: the servers' key (``vllm serve --api-key``); local servers take any.
        max_concurrency: requests in flight per server.
        timeout: seconds one request may take, as the ``openai`` client counts them.
        max_retries: the ``openai`` client's retries of a failed request (connection errors,
            429 and 5xx), with its back-off.
        extra_body: fields sent beside the OpenAI ones (default
            :data:`UNFILTERED_SAMPLING`); ``{}`` for a server that rejects them.
        check_seed: before the run, send the first query twice with the run's seed and
            refuse a server whose two answers differ.
    """

    base_urls: Sequence[str]
    model: str
    api_key: str = "EMPTY"
    max_concurrency: int = 8
    timeout: float = 600.0
    max_retries: int = 2
    extra_body: Mapping[str, Any] = field(default_factory=lambda: dict(UNFILTERED_SAMPLING))
    check_seed: bool = True

    def __post_init__(self) -> None:
        urls = (self.base_urls,) if isinstance(self.base_urls, str) else tuple(self.base_urls)
        if not urls or not all(isinstance(url, str) and url for url in urls):
            raise ValueError(f"base_urls must name at least one server, got {self.base_urls!r}")
        object.__setattr__(self, "base_urls", urls)
        if not isinstance(self.model, str) or not self.model:
            raise ValueError(f"model must be the served model's name, got {self.model!r}")
        check_positive_int(self.max_concurrency, "max_concurrency")
        check_positive_int(self.max_retries, "max_retries", minimum=0)
        if not self.timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {self.timeout!r}")

    def __repr__(self) -> str:  # the key is a secret
        return f"CompletionServer(base_urls={list(self.base_urls)!r}, model={self.model!r})"

    def generate(
        self,
        queries: Iterable[str],
        sampling: SamplingConfig | None = None,
        *,
        show_progress: bool | None = None,
        **settings: Any,
    ) -> list[list[str]]:
        """``out[i][s]``: completion ``s`` of query ``i``, as :func:`~waterdrum_hf.generate`
        returns it. Query ``i`` is sampled with its own seed, :func:`request_seed` of
        ``sampling.seed`` and ``i`` (unseeded when ``seed`` is ``None``), so the result does not
        depend on which server answered."""
        queries, sampling = engine_inputs(queries, sampling, settings)
        clients = [self._client(url) for url in self.base_urls]
        try:
            return self._generate(clients, queries, sampling, show_progress)
        finally:
            for client in clients:
                client.close()

    def _generate(
        self,
        clients: list[Any],
        queries: list[str],
        sampling: SamplingConfig,
        show_progress: bool | None,
    ) -> list[list[str]]:
        """The seed check, then every query, each on its server's pool."""
        if sampling.seed is not None and self.check_seed and queries:
            for url, client in zip(self.base_urls, clients, strict=True):
                self._check_seed(client, url, queries[0], sampling)
        result: list[list[str]] = [[] for _ in queries]
        bar = progress_bar(desc="Generating", total=len(queries), unit="query",
                           enabled=show_progress)  # fmt: skip
        lock = threading.Lock()

        def answer(index: int) -> None:
            server = index % len(clients)
            result[index] = self._complete(
                clients[server], self.base_urls[server], queries[index], sampling, index
            )
            with lock:
                bar.update(1)

        pools = [ThreadPoolExecutor(self.max_concurrency) for _ in clients]
        with bar:
            try:
                futures = [pools[i % len(pools)].submit(answer, i) for i in range(len(queries))]
                for future in futures:
                    future.result()
            finally:
                for pool in pools:
                    pool.shutdown(wait=True, cancel_futures=True)
        return result

    def _client(self, url: str) -> Any:
        try:
            from openai import OpenAI
        except ImportError as error:
            raise ImportError(
                "sampling from a server needs the openai client: pip install 'waterdrum-hf[serve]'"
            ) from error
        return OpenAI(
            base_url=url, api_key=self.api_key, timeout=self.timeout, max_retries=self.max_retries
        )

    def _complete(
        self,
        client: Any,
        url: str,
        query: str,
        sampling: SamplingConfig,
        index: int,
        *,
        max_tokens: int | None = None,
    ) -> list[str]:
        """The ``num_samples`` completions of one query, in the server's order."""
        n = sampling.num_samples
        request = {
            "model": self.model,
            "prompt": query,
            **sampling_fields(sampling, index),
            "extra_body": dict(self.extra_body),
        }
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        try:
            response = client.completions.create(**request)
        except Exception as error:
            raise self._failure(client, url, index, error) from error
        choices = sorted(response.choices, key=lambda choice: choice.index)
        if len(choices) != n:
            raise ServerError(
                f"{url} ({self.model}) returned {len(choices)} completions of query {index} "
                f"where {n} were asked for (n={n}): the server does not honour n"
            )
        return [choice.text for choice in choices]

    def _failure(self, client: Any, url: str, index: int, error: Exception) -> ServerError:
        """One line for a request that failed after the client's retries: a server nobody
        answers at, a model name it does not serve (with the names it does), or its error."""
        import openai

        if isinstance(error, openai.APIConnectionError):  # refused, unreachable or timed out
            return ServerError(
                f"cannot reach {url} ({type(error).__name__}: {first_line(error)}): is the "
                "server running there, and is the URL its API root (ending in /v1)?"
            )
        if isinstance(error, openai.NotFoundError):
            try:
                served = sorted(model.id for model in client.models.list())
            except Exception:  # the listing is a courtesy; the refusal stands without it
                served = []
            listing = f"; it serves {', '.join(map(repr, served))}" if served else ""
            return ServerError(f"{url} serves no model named {self.model!r}{listing}")
        return ServerError(f"{url} ({self.model}), query {index}: {first_line(error)}")

    def _check_seed(self, client: Any, url: str, query: str, sampling: SamplingConfig) -> None:
        """Refuse a server whose answers to one seeded request differ."""
        tokens = min(SEED_CHECK_TOKENS, sampling.max_new_tokens)
        first, second = (
            self._complete(client, url, query, sampling, 0, max_tokens=tokens) for _ in range(2)
        )
        if first != second:
            raise ServerError(
                f"{url} ({self.model}) ignores the seed: the same request with seed "
                f"{sampling.seed} gave different completions, so a score from it cannot be "
                "reproduced (sample with seed=None to accept that, or check_seed=False)"
            )


def sampling_fields(sampling: SamplingConfig, index: int) -> dict[str, Any]:
    """Query ``index``'s sampling as vLLM and the OpenAI API name it (``n``, ``max_tokens``,
    ``temperature``, ``top_p``, ``seed``): temperature 0 for greedy decoding, no seed
    without one."""
    fields: dict[str, Any] = {"n": sampling.num_samples, "max_tokens": sampling.max_new_tokens}
    if sampling.greedy:
        fields["temperature"] = 0.0
    else:
        fields.update(temperature=sampling.temperature, top_p=sampling.top_p)
    if sampling.seed is not None:
        fields["seed"] = request_seed(sampling.seed, index)
    return fields


def request_seed(seed: int, index: int) -> int:
    """The seed of query ``index``'s request in a run seeded ``seed``: drawn from both, in
    ``[0, SEED_RANGE)``. Not ``seed + index``: vLLM seeds choice ``j`` of a request with
    ``seed + j``, so consecutive seeds would give two queries the same random draws, and two
    queries with the same prompt (a duplicate's) the same samples."""
    import numpy as np

    state = np.random.SeedSequence([seed, index]).generate_state(1, np.uint64)[0]
    return int(state) % SEED_RANGE


def engine_inputs(
    queries: Iterable[str], sampling: SamplingConfig | None, settings: dict[str, Any]
) -> tuple[list[str], SamplingConfig]:
    """The queries (non-empty strings) and the sampling (``sampling``, or ``settings`` as its
    fields) of a vLLM engine's call, checked: what only transformers does is refused."""
    if sampling is None:
        sampling = SamplingConfig(**settings)
    elif settings:
        raise TypeError(f"pass {sorted(settings)} inside `sampling`, not beside it.")
    check_server_sampling(sampling)
    queries = check_string_list(queries, "queries")
    empty = [i for i, query in enumerate(queries) if not query.strip()]
    if empty:
        raise ValueError(f"queries{empty[:5]} are empty; every query needs text")
    return queries, sampling


def check_server_sampling(sampling: SamplingConfig) -> None:
    """Refuse the :class:`SamplingConfig` settings only transformers' ``generate`` has."""
    refused = []
    if sampling.batch_size != "auto":
        refused.append(
            f"batch_size={sampling.batch_size} (the server batches; set max_concurrency)"
        )
    if sampling.cache == "static":
        refused.append("cache='static' (the server keeps its own KV cache)")
    if not sampling.shared_prefill:
        refused.append("shared_prefill=False (a server prefills a prompt once for its n samples)")
    if refused:
        raise ValueError("a completion server cannot honour " + "; ".join(refused))
