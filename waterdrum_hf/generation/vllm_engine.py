"""Sampling with vLLM in this process: the base model loaded once, LoRA adapters applied per
call (``LoRARequest``), every query's ``n`` samples from one prefill.

Where vLLM and this library can share an environment (vLLM pins its transformers), this is
the paper's own setup; elsewhere run ``vllm serve`` and sample with
:class:`~waterdrum_hf.generation.server.CompletionServer`. Both send the same sampling
(:func:`~waterdrum_hf.generation.server.sampling_fields`, unfiltered, one seed per query), so
they draw the same samples from the same weights.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from waterdrum_hf.generation.sampling import SamplingConfig
from waterdrum_hf.generation.server import UNFILTERED_SAMPLING, engine_inputs, sampling_fields
from waterdrum_hf.utils.progress import progress_enabled


class VLLMEngine:
    """A ``vllm.LLM`` and the LoRA adapters it may apply.

    Args:
        model: the base model's folder or Hub id.
        adapters: adapter name -> PEFT adapter folder; ``generate(..., adapter=name)``
            samples through it.
        max_lora_rank: the largest rank among ``adapters``.
        **llm_options: more of ``vllm.LLM``'s keywords (``dtype``, ``gpu_memory_utilization``,
            ``tensor_parallel_size``, ``enforce_eager``, ...).
    """

    def __init__(
        self,
        model: str,
        *,
        adapters: Mapping[str, str] | None = None,
        max_lora_rank: int = 16,
        **llm_options: Any,
    ) -> None:
        try:
            from vllm import LLM
        except ImportError as error:
            raise ImportError(
                "VLLMEngine needs vLLM in this environment (pip install vllm); where its "
                "transformers pin excludes this library's, serve the model with `vllm serve` "
                "and sample with CompletionServer"
            ) from error
        self.adapters = {name: str(path) for name, path in (adapters or {}).items()}
        if self.adapters:
            llm_options.update(enable_lora=True, max_lora_rank=max_lora_rank)
        self.llm = LLM(model=model, **llm_options)

    def close(self) -> None:
        """Stop vLLM's engine processes and close their sockets now (else when collected)."""
        core = getattr(getattr(self.llm, "llm_engine", None), "engine_core", None)
        if core is not None:
            core.shutdown()

    def __enter__(self) -> VLLMEngine:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def generate(
        self,
        queries: Iterable[str],
        sampling: SamplingConfig | None = None,
        *,
        adapter: str | None = None,
        show_progress: bool | None = None,
        **settings: Any,
    ) -> list[list[str]]:
        """``out[i][s]``, as :func:`~waterdrum_hf.generate` returns it, from the base model or
        the named ``adapter``; query ``i`` seeded as the server engine seeds it."""
        from vllm import SamplingParams
        from vllm.lora.request import LoRARequest

        queries, sampling = engine_inputs(queries, sampling, settings)
        lora = None
        if adapter is not None:
            if adapter not in self.adapters:
                known = ", ".join(sorted(self.adapters)) or "none"
                raise ValueError(f"unknown adapter {adapter!r} (this engine has: {known})")
            number = sorted(self.adapters).index(adapter) + 1  # vLLM's ids start at 1
            lora = LoRARequest(adapter, number, self.adapters[adapter])
        params = [
            SamplingParams(**sampling_fields(sampling, index), **UNFILTERED_SAMPLING)
            for index in range(len(queries))
        ]
        outputs = self.llm.generate(
            queries, params, lora_request=lora, use_tqdm=progress_enabled(show_progress)
        )
        result = []
        for index, output in enumerate(outputs):
            samples = sorted(output.outputs, key=lambda sample: sample.index)
            if len(samples) != sampling.num_samples:
                raise RuntimeError(
                    f"vLLM returned {len(samples)} completions of query {index} where "
                    f"{sampling.num_samples} were asked for"
                )
            result.append([sample.text for sample in samples])
        return result
