"""Where ``waterdrum score`` samples: ``--engine transformers`` (the model loaded in this
process) or ``--engine openai`` (OpenAI-compatible completion servers, ``--base-url``), and
``--adapters``, the LoRA adapters the server serves beside the base model, each scored into a
report of its own."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, ClassVar

from waterdrum_hf.scripts.parser import CliError, positive
from waterdrum_hf.utils.fields import flag

ENGINES = ("transformers", "openai")
"""The values of ``--engine``."""

API_KEY_VARIABLE = "OPENAI_API_KEY"
"""The environment variable the servers' key is read from (never a flag: keys stay out of
shell history and reports)."""


@dataclass
class EngineArguments:
    """Which engine samples, and for the ``openai`` engine the servers and adapters."""

    _argument_group_name: ClassVar[str] = "generation engine"

    engine: str = flag(
        "transformers",
        "transformers: load --model-name-or-path here and sample with its generate; openai: "
        "send each query to OpenAI-compatible completion servers (vllm serve, SGLang, "
        "llama.cpp) at --base-url, as the served model --model-name-or-path (its tokenizer "
        "makes the queries: a local folder or Hub id, or give --tokenizer). The servers' key "
        f"is read from ${API_KEY_VARIABLE}.",
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
        "Score these served LoRA adapters (vllm serve --lora-modules NAME=PATH) instead of "
        "the base model, each with the same queries and seed, into --output-dir/NAME; "
        "REPORT=NAME names the model REPORT in its report (e.g. npo=npo-seed0, so that "
        "waterdrum compare reads the seeds of one method).",
        repeatable=True,
    )
    max_concurrency: int = flag(8, "openai engine: requests in flight per server.")
    request_timeout: float = flag(600.0, "openai engine: seconds one request may take.")

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise CliError(f"--engine: expected one of {', '.join(ENGINES)}, got {self.engine!r}")
        positive(self.max_concurrency, "--max-concurrency")
        if not self.request_timeout > 0:
            raise CliError(f"--request-timeout must be > 0, got {self.request_timeout}")
        if self.engine == "openai" and not self.base_url:
            raise CliError("--engine openai needs --base-url, the servers' API root")
        if self.engine != "openai" and (self.base_url or self.adapters):
            given = "--base-url" if self.base_url else "--adapters"
            raise CliError(f"{given} is for --engine openai (the server serves the adapters)")
        served = [served for _, served in self.targets("model") if served]
        repeated = sorted({name for name in served if served.count(name) > 1})
        if repeated:
            raise CliError(f"--adapters: {', '.join(repeated)} given twice")

    def targets(self, name: str) -> list[tuple[str, str | None]]:
        """``(report name, served adapter)`` per report: the base model (``name``, no adapter)
        when no adapters are given, else each adapter."""
        if not self.adapters:
            return [(name, None)]
        pairs: list[tuple[str, str | None]] = []
        for text in self.adapters:
            report, _, served = text.rpartition("=")
            if not served or "/" in served or served in (".", ".."):
                raise CliError(
                    f"--adapters: expected NAME or REPORT=NAME with NAME a served adapter's "
                    f"name, got {text!r}"
                )
            pairs.append((report or served, served))
        return pairs

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
