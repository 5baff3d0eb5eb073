"""How completions are sampled: :class:`SamplingConfig` (what :func:`~waterdrum_hf.generate`
and :class:`~waterdrum_hf.WaterDrumCallback` take) and the package's one sampling
``GenerationConfig``, :func:`unfiltered_sampling_config` (the paraphraser uses it too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from transformers import GenerationConfig

from waterdrum_hf.utils.validation import check_positive_int

CACHES = ("auto", "dynamic", "static")
"""The KV caches :class:`SamplingConfig` can choose."""

PROMPT_BUCKET = 64
"""On the static path every batch's prompts are left-padded to a multiple of this many
tokens: the decoding graph depends on the cache's length, so a few lengths mean a few compiles."""


@dataclass(frozen=True)
class SamplingConfig:
    """How :func:`generate` samples: the paper's protocol by default (10 samples of up to 200
    tokens, temperature 1, top-p 1, no top-k), validated once.

    Args:
        num_samples: completions per query.
        max_new_tokens: cap on each completion's length in tokens.
        temperature: sampling temperature (> 0).
        top_p: nucleus mass in (0, 1]; 1 samples from the full distribution.
        greedy: take the most likely token at every step (the paper's ROUGE baseline);
            ``num_samples`` must then be 1, and ``temperature``/``top_p`` do not apply.
        batch_size: sequences per forward pass, or ``"auto"`` (see :func:`generate`).
        seed: seeds torch for a reproducible call, leaving the global RNG state untouched.
        shared_prefill: prefill each query's prompt once for all its samples in a batch
            (see :func:`generate`); ``False`` runs transformers' plain ``generate``. The
            static cache does not take it.
        cache: the KV cache of decoding: ``"dynamic"`` (grows with the text), ``"static"``
            (preallocated, so transformers compiles the decoding step once per batch shape:
            the fastest path on a GPU, after a compile of tens of seconds) or ``"auto"``
            (static on CUDA where the model supports it, dynamic elsewhere). On the static
            path prompts are padded to a multiple of :data:`PROMPT_BUCKET` tokens and every
            batch is filled to ``batch_size`` rows, so one run compiles a handful of graphs.
        compile_backend: ``torch.compile``'s backend on the static path (``"inductor"``;
            ``"eager"`` traces without generating code, e.g. to count graphs in tests).
    """

    num_samples: int = 10
    max_new_tokens: int = 200
    temperature: float = 1.0
    top_p: float = 1.0
    greedy: bool = False
    batch_size: int | str = "auto"
    seed: int | None = None
    shared_prefill: bool = True
    cache: Literal["auto", "dynamic", "static"] = "auto"
    compile_backend: str = "inductor"

    def __post_init__(self) -> None:
        if self.cache not in CACHES:
            raise ValueError(f"cache must be one of {', '.join(CACHES)}, got {self.cache!r}")
        if not isinstance(self.compile_backend, str) or not self.compile_backend:
            raise ValueError(
                f'compile_backend must name a torch.compile backend (e.g. "inductor"), got '
                f"{self.compile_backend!r}"
            )
        for name in ("num_samples", "max_new_tokens"):
            check_positive_int(getattr(self, name), name)
        if isinstance(self.batch_size, str) and self.batch_size != "auto":
            raise ValueError(
                f'batch_size must be a positive integer or "auto", got {self.batch_size!r}'
            )
        if self.batch_size != "auto":
            check_positive_int(self.batch_size, "batch_size")
        if not self.temperature > 0:
            raise ValueError(f"temperature must be > 0, got {self.temperature!r}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p!r}")
        if self.greedy and self.num_samples != 1:
            raise ValueError(
                "greedy decoding gives one completion per query: num_samples must be 1, got "
                f"{self.num_samples}"
            )

    def generation_config(self, pad_id: int) -> GenerationConfig:
        """transformers' configuration of one sequence per prompt row."""
        settings = {
            "num_return_sequences": 1,
            "max_new_tokens": self.max_new_tokens,
            "pad_token_id": pad_id,
        }
        if self.greedy:
            return GenerationConfig(
                do_sample=False,
                num_beams=1,
                repetition_penalty=1.0,
                no_repeat_ngram_size=0,
                **settings,
            )
        return unfiltered_sampling_config(
            **settings, temperature=self.temperature, top_p=self.top_p
        )


def unfiltered_sampling_config(**settings: Any) -> GenerationConfig:
    """A sampling ``GenerationConfig`` with every distribution filter explicitly off.

    transformers applies a global ``top_k=50`` (and a checkpoint may add its own warpers or a
    repetition penalty) unless told otherwise; either would cut the distribution behind the
    caller's back and change the watermark signal. ``settings`` (temperature, top_p,
    max_new_tokens, ...) override the defaults here.
    """
    config = {
        "do_sample": True,
        "num_beams": 1,
        "temperature": 1.0,
        "top_p": 1.0,
        "top_k": 0,
        "typical_p": 1.0,
        "epsilon_cutoff": 0.0,
        "eta_cutoff": 0.0,
        "repetition_penalty": 1.0,
        "no_repeat_ngram_size": 0,
    }
    config.update(settings)
    return GenerationConfig(**config)
