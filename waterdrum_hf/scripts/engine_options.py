"""Where ``waterdrum score`` samples: ``--engine transformers`` (the model loaded in this
process with transformers), ``--engine vllm`` (vLLM in this process) or ``--engine openai``
(OpenAI-compatible completion servers, ``--base-url``), and ``--adapters``, LoRA adapters
sampled beside one loaded base model, each scored into a report of its own."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from waterdrum_hf.scripts.parser import CliError, positive
from waterdrum_hf.utils.fields import flag

ENGINES = ("transformers", "vllm", "openai")
"""The values of ``--engine``."""

API_KEY_VARIABLE = "OPENAI_API_KEY"
"""The environment variable the servers' key is read from (never a flag: keys stay out of
shell history and reports)."""


@dataclass
class EngineArguments:
    """Which engine samples; the adapters (``vllm``, ``openai``); the servers (``openai``)."""

    _argument_group_name: ClassVar[str] = "generation engine"

    engine: str = flag(
        "transformers",
        "transformers: load --model-name-or-path here and sample with its generate; vllm: "
        "load it here with vLLM (needs vLLM installed beside this library); openai: send each "
        "query to OpenAI-compatible completion servers (vllm serve, SGLang, llama.cpp) at "
        "--base-url, as the served model --model-name-or-path (its tokenizer makes the "
        "queries: a local folder or Hub id, or give --tokenizer). The servers' key is read "
        f"from ${API_KEY_VARIABLE}.",
        choices=ENGINES,
    )
    base_url: tuple[str, ...] = flag(
        (),
        "The servers' API roots (e.g. http://127.0.0.1:8000/v1), each serving the same "
        "model; several share the queries.",
        repeatable=True,
    )
    adapters: tuple[str, ...] = flag(
        (),
        "Score these LoRA adapters of --model-name-or-path instead of the base model, each "
        "with the same queries and seed, into --output-dir/NAME: with --engine openai the "
        "names the server serves them by (vllm serve --lora-modules NAME=PATH), with --engine "
        "vllm their folders (NAME: the folder's name). REPORT=NAME names the model REPORT in "
        "its report (e.g. npo=npo-seed0, so that waterdrum compare reads the seeds of one "
        "method).",
        repeatable=True,
    )
    max_concurrency: int = flag(8, "openai engine: requests in flight per server.")
    request_timeout: float = flag(600.0, "openai engine: seconds one request may take.")
    vllm_kwargs: str | None = flag(
        None,
        'vllm engine: more keywords of vllm.LLM as JSON, e.g. {"dtype": "float32", '
        '"gpu_memory_utilization": 0.9, "tensor_parallel_size": 2}.',
    )

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise CliError(f"--engine: expected one of {', '.join(ENGINES)}, got {self.engine!r}")
        positive(self.max_concurrency, "--max-concurrency")
        if not self.request_timeout > 0:
            raise CliError(f"--request-timeout must be > 0, got {self.request_timeout}")
        if self.engine == "openai" and not self.base_url:
            raise CliError("--engine openai needs --base-url, the servers' API root")
        if self.engine != "openai" and self.base_url:
            raise CliError("--base-url is for --engine openai")
        if self.engine == "transformers" and self.adapters:
            raise CliError(
                "--adapters is for --engine vllm or openai (one base model, many adapters); "
                "with transformers, score each adapter folder as --model-name-or-path"
            )
        if self.vllm_kwargs is not None and self.engine != "vllm":
            raise CliError("--vllm-kwargs is for --engine vllm")
        self.llm_keywords()  # checked now, used after the input's checks
        folders = [Path(adapter).name for _, adapter in self.targets("model") if adapter]
        repeated = sorted({name for name in folders if folders.count(name) > 1})
        if repeated:
            raise CliError(f"--adapters: {', '.join(repeated)} given twice")

    def targets(self, name: str) -> list[tuple[str, str | None]]:
        """``(report name, adapter)`` per report: the base model (``name``, no adapter) when
        no adapters are given, else each adapter (a served name, or a folder with ``vllm``);
        the report goes into ``--output-dir/`` the adapter's last name."""
        if not self.adapters:
            return [(name, None)]
        pairs: list[tuple[str, str | None]] = []
        for text in self.adapters:
            report, _, adapter = text.partition("=") if "=" in text else ("", "", text)
            if self.engine == "vllm":
                if not (Path(adapter) / "adapter_config.json").is_file():
                    raise CliError(
                        f"--adapters: {adapter!r} is not a PEFT adapter folder (no "
                        "adapter_config.json)"
                    )
            elif not adapter or "/" in adapter or adapter in (".", ".."):
                raise CliError(
                    f"--adapters: expected NAME or REPORT=NAME with NAME a served adapter's "
                    f"name, got {text!r}"
                )
            pairs.append((report or Path(adapter).name, adapter))
        return pairs

    def llm_keywords(self) -> dict[str, Any]:
        """``--vllm-kwargs`` as a dict."""
        if self.vllm_kwargs is None:
            return {}
        try:
            keywords = json.loads(self.vllm_kwargs)
        except json.JSONDecodeError as error:
            raise CliError(f"--vllm-kwargs is not JSON: {error}") from None
        if not isinstance(keywords, dict):
            raise CliError(f"--vllm-kwargs must be a JSON object, got {self.vllm_kwargs!r}")
        return keywords

    def sampler(self, model: str) -> Callable[..., list[list[str]]] | None:
        """``sample(queries, sampling, adapter)`` for the ``vllm`` and ``openai`` engines
        (``None`` for ``transformers``); ``vllm`` loads the base model on the first call, once
        for every adapter."""
        if self.engine == "openai":
            return lambda queries, sampling, adapter: self.server(adapter or model).generate(
                queries, sampling
            )
        if self.engine == "vllm":
            return VLLMSampler(model, {Path(a).name: a for _, a in self.targets("model") if a},
                               self.llm_keywords())  # fmt: skip
        return None

    def server(self, model: str) -> Any:
        """The :class:`~waterdrum_hf.generation.server.CompletionServer` serving ``model``."""
        from waterdrum_hf.generation.server import CompletionServer

        return CompletionServer(
            self.base_url,
            model,
            api_key=os.environ.get(API_KEY_VARIABLE, "EMPTY"),
            max_concurrency=self.max_concurrency,
            timeout=self.request_timeout,
        )


class VLLMSampler:
    """``--engine vllm``'s sampler: the engine loaded on the first call (after the input's
    checks), once for every adapter; ``close`` stops it."""

    def __init__(self, model: str, adapters: dict[str, str], keywords: dict[str, Any]) -> None:
        self.model, self.adapters, self.keywords = model, adapters, keywords
        self.engine: Any = None

    def __call__(self, queries: list[str], sampling: Any, adapter: str | None) -> Any:
        if self.engine is None:
            from waterdrum_hf.generation.vllm_engine import VLLMEngine

            try:
                self.engine = VLLMEngine(self.model, adapters=self.adapters, **self.keywords)
            except ImportError as error:
                raise CliError(str(error)) from None
        return self.engine.generate(
            queries, sampling, adapter=Path(adapter).name if adapter else None
        )

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
