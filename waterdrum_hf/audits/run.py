"""Running the audits: perturb each model, sample from it, score it like the original.

Every model (the retrained one included, as the yardstick) goes through each perturbation of
:meth:`AuditConfig.audit_names`; its completions of the same queries are scored with the
library's metric. Whatever could make an audit fail (no forget texts for relearning, no
quantization backend) is checked before the first model is touched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from waterdrum_hf import attacks as text_attacks
from waterdrum_hf.audits.config import AuditConfig
from waterdrum_hf.audits.quantization import check_backend, quantize
from waterdrum_hf.audits.relearning import relearn, relearning_slice
from waterdrum_hf.audits.results import BEFORE, AuditResults
from waterdrum_hf.config import WaterDrumConfig
from waterdrum_hf.scoring import WaterDrumResult, waterdrum_result
from waterdrum_hf.utils.progress import progress_bar
from waterdrum_hf.utils.validation import check_string_list

Cache = Callable[[str, str, Mapping[str, Any], Callable[[], dict[str, Any]]], dict[str, Any]]
"""``cache(model, audit, settings, compute)``: ``compute()``'s JSON-able value, kept wherever
the caller keeps stages (``settings`` name everything that produced it, beside the model)."""


@dataclass(frozen=True, repr=False)  # no repr: `references` and `forget_ids` are secret keys
class AuditQueries:
    """What every audited model is asked, and whose data each question is.

    Args:
        queries: the prompts (as for the metric).
        references: each prompt's owner id (as for the metric).
        forget_ids: the owners who asked to be forgotten.
        forget_texts: the forget set's training texts (relearning fine-tunes on a slice).
        owner_names: display names by owner id (ids are secret; never shown).
        attack_source: unwatermarked texts that a copy_paste text attack pastes from.
    """

    queries: Sequence[str]
    references: Sequence[int]
    forget_ids: Sequence[int]
    forget_texts: Sequence[str] = ()
    owner_names: Mapping[int, str] | None = None
    attack_source: Sequence[str] = ()

    def __post_init__(self) -> None:
        queries = check_string_list(self.queries, "queries")
        if len(queries) != len(self.references):
            raise ValueError(
                f"queries and references must have the same length, got {len(queries)} and "
                f"{len(self.references)}"
            )
        if not self.forget_ids:
            raise ValueError(
                "the audits measure the forget set: pass forget_ids (the forget owners)"
            )
        object.__setattr__(self, "queries", queries)


def run_audits(
    models: Mapping[str, Any],
    tokenizer: Any,
    queries: AuditQueries,
    *,
    config: AuditConfig | None = None,
    scoring: WaterDrumConfig | None = None,
    watermark_tokenizer: Any = None,
    retrained: str | None = "retrained",
    before: Mapping[str, WaterDrumResult] | None = None,
    cache: Cache | None = None,
    show_progress: bool | None = None,
) -> AuditResults:
    """Audit every model of ``models``; returns each one's results before and after each audit.

    Args:
        models: name -> a loaded causal LM or its saved folder (loaded when needed).
        tokenizer: the models' tokenizer.
        queries: the queries, their owners, the forget owners and texts (:class:`AuditQueries`).
        config: what the audits do (:class:`AuditConfig`; its defaults when ``None``).
        scoring: how every model is scored (:class:`~waterdrum_hf.WaterDrumConfig`; its
            defaults, as every entry point's, when ``None``).
        watermark_tokenizer: the tokenizer that watermarked the data (default: ``tokenizer``);
            substitution and insertion attacks draw whole words of its vocabulary.
        retrained: the name in ``models`` of the model retrained without the forget set, the
            comparison for every other (``None`` or absent: no comparison).
        before: results already computed for the unperturbed models with the same settings
            (otherwise they are sampled and scored here; text attacks sample them again).
        cache: keeps each perturbed model's completions (:data:`Cache`), so that a killed run
            resumes; default: none.
        show_progress: progress bars (``None``: on a terminal).
    """
    config = config or AuditConfig()
    scoring = scoring or WaterDrumConfig()
    if not models:
        raise ValueError("no model to audit: pass models={name: model or folder}")
    texts = check_audits(config, queries.forget_texts, queries.attack_source)
    watermark_tokenizer = watermark_tokenizer or tokenizer
    # One bar for the stage ("Audits", below): the work inside each step draws none.
    stages = _stages(config, tokenizer, watermark_tokenizer, queries, texts, show_progress=False)
    sampling = {
        "queries": queries.queries,
        "num_samples": config.num_samples,
        "max_new_tokens": config.max_new_tokens,
        "batch_size": config.batch_size,
        "seed": config.seed,
    }
    cache = cache or (lambda model, audit, settings, compute: compute())
    found: dict[str, dict[str, WaterDrumResult]] = {}
    checks: dict[str, dict[str, int]] = {}
    unedited: dict[str, list[list[str]]] = {}  # each model's completions before any audit
    score = partial(  # scored as every audit scores (same null keys)
        waterdrum_result,
        references=list(queries.references),
        watermark_tokenizer=watermark_tokenizer,
        config=scoring,
        forget_ids=list(queries.forget_ids),
        owner_names=queries.owner_names,
    )
    before = before or {}
    steps = [
        (m, a) for m in models for a in stages if a != BEFORE or m not in before or config.attacks
    ]
    for name, audit in progress_bar(steps, desc="Audits", enabled=show_progress):
        settings, make = stages[audit]
        compute = partial(make, models[name], unedited.get(name))
        # Nested, not merged: the relearning stage has a batch size and a seed of its own.
        outcome = cache(
            name, audit, {"audit": audit, "stage": settings, "sampling": sampling}, compute
        )
        if audit == BEFORE:
            unedited[name] = outcome["completions"]
        if "quantization" in outcome:
            checks.setdefault(audit, outcome["quantization"])
        if audit != BEFORE or name not in before:
            found.setdefault(name, {})[audit] = score(outcome["completions"])
    for name in models:
        if name in before:
            found[name] = {BEFORE: replace(before[name], scores=None), **found.get(name, {})}
    return AuditResults(
        models={name: found[name] for name in models},
        retrained=retrained if retrained in models else None,
        settings={
            **asdict(config),
            "scoring": scoring.to_dict(),
            "relearn_texts": len(texts),
            **({"attack_seed": config.text_attack_seed()} if config.attacks else {}),
            **({"quantization_checks": checks} if checks else {}),
        },
    )


def check_audits(
    config: AuditConfig, forget_texts: Sequence[str], attack_source: Sequence[str] = ()
) -> list[str]:
    """What the audits of ``config`` need, checked at once (one clear line each): forget texts
    for relearning, a quantization backend for each width, unwatermarked ``attack_source``
    texts for a copy_paste attack. Returns the relearning slice."""
    texts = (
        relearning_slice(forget_texts, config.relearn_share)
        if "relearning" in config.audits
        else []
    )
    if "quantization" in config.audits:
        for bits in config.quantization_bits:
            check_backend(bits)
    pastes = any(text_attacks.parse(spec)[0] == "copy_paste" for spec in config.attacks)
    if pastes and not check_string_list(attack_source, "attack_source"):
        raise ValueError(
            "the copy_paste attack pastes unwatermarked text: pass attack_source (e.g. "
            "the original passages or a base model's completions)"
        )
    return texts


Stage = tuple[dict[str, Any], Callable[[Any, list[list[str]] | None], dict[str, Any]]]
"""An audit's settings (for the cache) and ``make(model, unedited)``: from a model (or its
folder) and its completions before any audit (``None`` for ``before`` itself), the audit's
completions and what to keep beside them."""


def _stages(
    config: AuditConfig,
    tokenizer: Any,
    watermark_tokenizer: Any,
    queries: AuditQueries,
    texts: list[str],
    show_progress: bool | None,
) -> dict[str, Stage]:
    """Every audit by name, ``before`` first, then the perturbed models
    (:meth:`AuditConfig.audit_names`), then the text attacks."""
    from waterdrum_hf.utils.fingerprint import json_digest

    def sampled(model: Any, kept: dict[str, Any] | None = None) -> dict[str, Any]:
        from waterdrum_hf.generation.engine import generate

        completions = generate(
            model, tokenizer, queries.queries, config.sampling_config(), show_progress=show_progress
        )
        return {"completions": completions, **(kept or {})}

    found: dict[str, Stage] = {BEFORE: ({}, lambda model, unedited: sampled(_loaded(model)))}
    if "relearning" in config.audits:
        settings = {
            "texts": json_digest(texts),
            "steps": config.relearn_steps,
            "learning_rate": config.relearn_learning_rate,
            "batch_size": config.relearn_batch_size,
            "seed": config.seed,
        }
        found["relearned"] = (
            settings,
            lambda model, unedited: sampled(
                relearn(_loaded(model), tokenizer, texts, config, show_progress=show_progress)
            ),
        )
    if "quantization" in config.audits:
        for bits in config.quantization_bits:

            def quantized(model: Any, unedited: Any, bits: int = bits) -> dict[str, Any]:
                perturbed, check = quantize(model, bits, show_progress=show_progress)
                return sampled(perturbed, {"quantization": check.to_dict()})

            found[f"int{bits}"] = ({"bits": bits, "backend": "torchao"}, quantized)
    for spec in config.attacks:
        found[spec] = _attack_stage(
            spec, config, tokenizer, watermark_tokenizer, queries.attack_source, show_progress
        )
    return found


def _attack_stage(
    spec: str,
    config: AuditConfig,
    tokenizer: Any,
    watermark_tokenizer: Any,
    source: Sequence[str],
    show_progress: bool | None,
) -> Stage:
    """The text attack ``spec`` as an audit: the model's unedited completions edited (words of
    the watermark tokenizer's vocabulary; paraphrased by the model itself)."""
    from waterdrum_hf.utils.fingerprint import json_digest

    name = text_attacks.parse(spec)[0]
    seed = config.text_attack_seed()
    settings: dict[str, Any] = {"attack_seed": seed}
    if name in ("substitution", "insertion"):
        settings["vocabulary"] = getattr(watermark_tokenizer, "name_or_path", None)
    if name == "copy_paste":
        settings["source"] = json_digest(list(source))

    def make(model: Any, unedited: list[list[str]] | None) -> dict[str, Any]:
        assert unedited is not None  # `before` runs first for every model
        paraphraser = (_loaded(model), tokenizer) if name == "paraphrase" else None
        edited = text_attacks.chain(
            unedited, [spec], seed, tokenizer=watermark_tokenizer, paraphraser=paraphraser,
            source=list(source) or None, show_progress=show_progress,
        )  # fmt: skip
        return {"completions": edited}

    return settings, make


def _loaded(model: Any) -> Any:
    """A saved folder loaded (on the GPU when there is one, without a loading bar: it happens
    inside a step of the "Audits" bar); a model as it is."""
    from waterdrum_hf.utils.progress import library_progress
    from waterdrum_hf.utils.torch_plumbing import load_causal_lm

    if not isinstance(model, (str, Path)):
        return model
    with library_progress(False):
        return load_causal_lm(model)
