"""``waterdrum demo``: the whole WaterDrum loop and an unlearning benchmark, offline, on a CPU.

1. Owners' passages (:func:`waterdrum_hf.data.toy_corpus`) are watermarked, each owner with a
   private random key, by paraphrasing with the built-in tiny model (:class:`WatermarkedDataset`).
2. The tiny model is fine-tuned on every owner's watermarked passages (the *original* model)
   and, as the gold standard of unlearning, on the retain owners' passages only (*retrained*).
3. Each unlearning method (:mod:`waterdrum_hf.trainers`) unlearns the forget owners from the
   original model while :class:`WaterDrumCallback` logs the forget/retain curves.
4. Every model completes queries made from every owner's passages; the completions are
   scored with the owners' keys against a null reference of random keys, and a report
   (:mod:`waterdrum_hf.report`) says which method came closest to retraining.
5. The audits (:mod:`waterdrum_hf.audits`; not with ``--quick``): every model is relearned for
   a few steps on a slice of the forget set, and quantized to 8 and 4 bits, then scored again;
   the retrained model through the same audits is the line to beat.

Every stage is cached under ``<output_dir>/cache`` (:mod:`waterdrum_hf.experiments.pipeline`): a re-run,
or a run after an interruption, resumes; changed settings build new stages.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from waterdrum_hf.experiments.demo_config import (
    DATA_FILE,
    DEFAULT_METHODS,
    FORGET_IDS_FILE,
    KEYS_FILE,
    NO_CURVE,
    DemoConfig,
    demo_command,
    score_command,
)
from waterdrum_hf.experiments.demo_data import (
    DemoData,
    demo_corpus,
    train_models,
    watermark_corpus,
)
from waterdrum_hf.utils.progress import logged_stage

__all__ = [
    "DEFAULT_METHODS",
    "DemoConfig",
    "demo_command",
    "run_demo",
    "score_command",
    "train_models",
    "watermark_corpus",
]


THREADS = 1
"""torch's thread count during the demo (:func:`run_demo`)."""


def run_demo(
    config: DemoConfig | None = None, *, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Run the demo, write the report into ``config.output_dir``; return the report dict, with
    ``next``: the commands that go on from here (:meth:`_Demo.write_data`), which ``waterdrum
    demo`` prints last.

    torch runs on :data:`THREADS` thread meanwhile (restored after): the trained weights
    depend on the thread count, so one thread keeps the demo's values the same whatever the
    core count (a second thread would save a third of the fine-tuning time on an idle 2-core
    machine: ``benchmarks/demo_threads.py``); it also keeps a busy machine from slowing down
    many times over.
    """
    import os

    from waterdrum_hf.utils.torch_plumbing import torch_threads

    log(
        f"torch: {THREADS} thread of the {os.cpu_count()} cores here (trained weights depend on "
        "the thread count: one thread keeps the values the same on every machine)"
    )
    config = config or DemoConfig()
    settings = " ".join(f"{name}={value}" for name, value in config.scoring_settings().items())
    log(f"scoring: {settings} (the demo's own; the library's default is the analytic null)")
    with torch_threads(THREADS):
        return _Demo(config, log).run()


@dataclass(frozen=True)
class _Setting:
    """What the stages after training share: the stage pipeline, the model's tokenizer, the
    owners' watermarked data and each passage's query."""

    pipeline: Any
    tokenizer: Any
    data: DemoData
    queries: list[str]


class _Demo:
    """The demo as named stages (:meth:`run` lists them), each cached
    (:class:`~waterdrum_hf.experiments.pipeline.CachedPipeline`) and timed."""

    def __init__(self, config: DemoConfig, log: Callable[[str], None]) -> None:
        self.config = config
        self.log = log
        self.out = Path(config.output_dir)
        self.timings: dict[str, float] = {}
        self.stage_count = 3 + len(config.methods) + config.num_seeds + bool(config.audits)
        self.stage_index = 0
        self.scoring = config.scoring_config()

    def run(self) -> dict[str, Any]:
        """The stages in order; the metric's per-call notes on unscorable samples are said
        once, summed over the run (:meth:`say_skipped`), not once per model and seed."""
        skipped_notes = logging.getLogger("waterdrum_hf.scoring.inputs")
        level = skipped_notes.level
        skipped_notes.setLevel(logging.ERROR)
        try:
            return self.stages()
        finally:
            skipped_notes.setLevel(level)

    def stages(self) -> dict[str, Any]:
        from waterdrum_hf.report import write_report

        pipeline, tokenizer = self.load()
        data = self.watermark(pipeline)
        setting = _Setting(pipeline, tokenizer, data, data.queries(self.config, tokenizer))
        first_seed, *other_seeds = self.config.run_seeds
        models = self.finetune(pipeline, data)
        curves, curve_sampling = self.unlearn(setting, models)
        results, sampled = self.score(setting, models)
        runs = [results] + [self.rerun(setting, seed) for seed in other_seeds]
        audits = self.audit(setting, models, results) if self.config.audits else None
        report = self.report(data, results, curves, curve_sampling, audits, runs)
        report["token_views"] = self.token_views(setting, results, sampled)
        write_report(report, self.out, title="WaterDrum demo report")
        self.say_skipped(report["runs"])
        report["next"] = self.write_data(data, models)
        return report

    def load(self) -> tuple[Any, Any]:
        """The built-in small model (shipped with the package) and the stage pipeline around it."""
        import waterdrum_hf.tiny as tiny
        from waterdrum_hf.experiments.pipeline import CachedPipeline

        show = self.config.show_progress
        with self.step("load", "Loading the built-in small model"):
            model, tokenizer = tiny.load(show_progress=show)
        return CachedPipeline(model, tokenizer, self.out / "cache", show_progress=show), tokenizer

    def watermark(self, pipeline: Any) -> DemoData:
        """Every owner's passages watermarked under its own key, with their self-check scores."""
        config = self.config
        corpus = demo_corpus(config)
        with self.step(
            "watermark",
            f"Watermarking {len(corpus)} passages of {config.owners} owners, each under its own key (about {math.ceil(1.2 * len(corpus))} s unless cached)",
        ):
            return watermark_corpus(config, pipeline, corpus)

    def finetune(self, pipeline: Any, data: DemoData) -> dict[str, Any]:
        """The original model (all owners' passages) and the retrained one (retain only)."""
        with self.step(
            "finetune",
            f"Fine-tuning the original model ({self.config.epochs} epochs) and retraining without the forget owners",
        ):
            return train_models(self.config, pipeline, data)

    def unlearn(
        self, setting: _Setting, models: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """Each method unlearns the forget owners from the original model (added to
        ``models``), with its WaterDrum curve where one means something."""
        config = self.config
        curves, curve_sampling = {}, None
        for method in config.methods:
            with self.step(
                f"unlearn/{method}", f"Unlearning with {method} ({config.unlearn_steps} steps)"
            ):
                callback = None if method.lower() in NO_CURVE else self.callback(setting)
                curve = self.unlearn_one(setting, models, method, config.seed, callback)
            if curve and callback is not None:  # a curve comes from the callback
                curves[method.lower()] = curve
                curve_sampling = {
                    "queries": len(callback.queries),
                    "num_samples": callback.sampling.num_samples,
                    "max_new_tokens": callback.sampling.max_new_tokens,
                    "no_curve": {
                        m: NO_CURVE[m] for m in map(str.lower, config.methods) if m in NO_CURVE
                    },
                }
        return curves, curve_sampling

    def unlearn_one(
        self, setting: _Setting, models: dict[str, Any], method: str, seed: int, callback: Any
    ) -> list[dict[str, float]]:
        """``method`` unlearns the forget owners from ``models["original"]`` in the run of
        ``seed`` (its model added to ``models``); returns the callback's curve."""
        models[method.lower()], curve = setting.pipeline.unlearn(
            method,
            models["original"],
            setting.data.forget,
            setting.data.retain,
            steps=self.config.unlearn_steps,
            training=self.config.unlearning(seed),
            callback=callback,
        )
        return curve

    def rerun(self, setting: _Setting, seed: int) -> dict[str, Any]:
        """Another training run, with ``seed``: the original and the retrained model, every
        method's unlearning (no curve) and every model's scored completions; its results."""
        config = self.config
        with self.step(
            f"run/{seed}",
            f"Training run with seed {seed}: fine-tuning, retraining, unlearning with "
            f"{len(config.methods)} methods, sampling and verifying",
        ):
            models = train_models(config, setting.pipeline, setting.data, seed)
            for method in config.methods:
                self.unlearn_one(setting, models, method, seed, None)
            return self.score_models(setting, models, seed)[0]

    def score(
        self, setting: _Setting, models: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, list[list[str]]]]:
        """Every model's completions of every query in the first run, scored with the owners'
        keys; the results and the completions, by model."""
        config = self.config
        with self.step(
            "sample_and_verify",
            f"Sampling {config.num_samples} x {config.max_new_tokens} tokens per query from {len(models)} models and verifying",
        ):
            return self.score_models(setting, models, config.seed)

    def score_models(
        self, setting: _Setting, models: dict[str, Any], seed: int
    ) -> tuple[dict[str, Any], dict[str, list[list[str]]]]:
        """Every model's completions of every query sampled with ``seed``, scored with the
        owners' keys; the results and the completions, by model."""
        from waterdrum_hf.scoring import waterdrum_result

        config = self.config
        results, sampled = {}, {}
        for name, stage in models.items():
            completions = setting.pipeline.completions(
                name,
                stage,
                setting.queries,
                num_samples=config.num_samples,
                max_new_tokens=config.max_new_tokens,
                seed=seed,
            )
            result = waterdrum_result(
                completions,
                setting.data.references,
                setting.tokenizer,
                config=self.scoring,
                forget_ids=setting.data.forget_ids,
                owner_names=setting.data.names,
                return_details=True,
            )
            results[name] = replace(result, scores=None)  # no per-sample scores in the report
            sampled[name] = completions
        return results, sampled

    def token_views(
        self, setting: _Setting, results: dict[str, Any], sampled: dict[str, list[list[str]]]
    ) -> list[Any]:
        """The watermark, token by token, in one forget and one retain completion of the same
        queries before unlearning (the original model) and after (the method closest to
        retraining): what the report shows as ``watermark_view``."""
        from waterdrum_hf.report import closest_to_retrained, unlearning_token_views
        from waterdrum_hf.scoring.verification import Verifier

        closest = closest_to_retrained(results)
        if closest is None:
            return []
        data, after = setting.data, closest[0]
        query = {}  # each set's first query whose completions have something to read
        for row, key in enumerate(data.references):
            name = "forget" if key in data.forget_ids else "retain"
            if name not in query and all(sampled[m][row][0].strip() for m in ("original", after)):
                query[name] = row
        if set(query) != {"forget", "retain"}:
            return []
        return unlearning_token_views(
            {m: {n: sampled[m][row][0] for n, row in query.items()} for m in ("original", after)},
            {n: data.references[row] for n, row in query.items()},
            Verifier(setting.tokenizer, self.scoring.scheme, show_progress=False),
            owner_names={n: data.names[data.references[row]] for n, row in query.items()},
        )

    def audit(self, setting: _Setting, models: dict[str, Any], results: dict[str, Any]) -> Any:
        """Every model relearned and quantized, sampled and scored again; each perturbed model's
        completions are a cached stage of its model, so a killed audit resumes."""
        from waterdrum_hf.audits import AuditQueries, run_audits

        with self.step(
            "audits",
            f"Auditing {len(models)} models: {', '.join(self.config.audits)} (each perturbed model "
            "sampled and scored again)",
        ):
            return run_audits(
                {name: stage.path for name, stage in models.items()},
                setting.tokenizer,
                AuditQueries(
                    setting.queries,
                    setting.data.references,
                    forget_ids=setting.data.forget_ids,
                    forget_texts=setting.data.forget,
                    owner_names=setting.data.names,
                ),
                config=self.config.audit_config(),
                scoring=self.scoring,
                before=results,
                cache=setting.pipeline.audit_cache(models),
                show_progress=self.config.show_progress,
            )

    def report(
        self,
        data: DemoData,
        results: dict[str, Any],
        curves: dict[str, Any],
        curve_sampling: dict[str, Any] | None,
        audits: Any,
        runs: list[dict[str, Any]],
    ) -> dict[str, Any]:
        """What :func:`~waterdrum_hf.report.write_report` writes: the first run's results in
        detail (``models``), every run's flat values (``runs``) and their seeds."""
        import waterdrum_hf.trainers as trainers

        config = self.config
        finite = [s for s in data.scores if s == s]
        return {
            "models": results,
            "runs": {name: [_run_values(run[name]) for run in runs] for name in results},
            "seeds": list(config.run_seeds),
            "curves": curves,
            "timings": self.timings,
            "methods": {
                m.lower(): trainers.DESCRIPTIONS[trainers.canonical_name(m)] for m in config.methods
            },
            "curve_sampling": curve_sampling,
            **({"audits": audits} if audits is not None else {}),
            "setting_help": {
                **{f.name: f.metadata["help"] for f in fields(DemoConfig)},
                "forget_owners": "The owners who asked to be forgotten.",
                "watermark_self_check": "Mean q of the watermarked passages under their owners' keys.",
                "scoring": "How every model was scored (WaterDrumConfig.to_dict()).",
            },
            "settings": {
                **asdict(config),
                "forget_owners": [data.names[k] for k in data.forget_ids],
                "watermark_self_check": sum(finite) / max(len(finite), 1),
                "scoring": self.scoring.to_dict(),
            },
        }

    def say_skipped(self, runs: dict[str, list[dict[str, Any]]]) -> None:
        """One line for the whole run: how many sampled completions had no countable token."""
        results = [r for model_runs in runs.values() for r in model_runs]
        skipped = sum(r["num_skipped"] for r in results)
        if skipped:
            total = skipped + sum(r["num_scored"] for r in results)
            self.log(
                f"{skipped} of {total} sampled completions (every model and run, before the "
                "audits) had no countable token (empty, or under 2 tokens: the model ended at "
                "once) and were left out; each model's count is in report.md's tables."
            )

    def write_data(self, data: DemoData, models: dict[str, Any]) -> list[str]:
        """Write the watermarked passages beside the report (``watermarked.jsonl``: owner name
        and text) and, with ``write_keys``, what ``waterdrum score`` needs besides: the keys
        (``keys.json``, the ``owner_id`` column) and the forget owners' keys
        (``forget_ids.txt``). Returns the commands that go on from here: scoring the original
        and the retrained model, or (without the keys) the re-run that writes them."""
        import json

        config, names = self.config, data.names
        data_file, keys_file, forget_file = (
            self.out / name for name in (DATA_FILE, KEYS_FILE, FORGET_IDS_FILE)
        )
        rows = [
            {
                "owner": names[key],
                "text": text,
                **({"owner_id": key} if config.write_keys else {}),
            }
            for text, key in zip(data.texts, data.references, strict=True)
        ]
        _write_private(data_file, "".join(json.dumps(row) + "\n" for row in rows))
        if not config.write_keys:
            for stale in (keys_file, forget_file):  # an earlier run's keys go with the option
                stale.unlink(missing_ok=True)
            return [
                "next: to score these models with `waterdrum score`, write the owners' secret "
                "keys (quick: every stage is cached):",
                "  " + demo_command(replace(config, write_keys=True)),
            ]
        _write_private(keys_file, json.dumps({names[key]: key for key in data.keys}, indent=1))
        _write_private(forget_file, "".join(f"{key}\n" for key in data.forget_ids))
        self.log(
            f"WARNING: {keys_file}, {forget_file} and the owner_id column of {data_file} hold the "
            "owners' secret watermark keys: keep them private"
        )
        return [
            f"next: {score_command(config, name, models[name].path)}"
            for name in ("original", "retrained")
        ]

    def callback(self, setting: _Setting) -> Any:
        """The WaterDrum curve logger: a few queries per owner, one short sample each."""
        from waterdrum_hf.callbacks.callback import WaterDrumCallback
        from waterdrum_hf.callbacks.plan import CallbackPlan
        from waterdrum_hf.generation.sampling import SamplingConfig

        config = self.config
        callback = WaterDrumCallback.from_queries(
            setting.queries,
            setting.data.references,
            setting.data.forget_ids,
            setting.tokenizer,
            config=replace(self.scoring, null=None, interval=None),
            sampling=SamplingConfig(
                num_samples=1, max_new_tokens=min(48, config.max_new_tokens), seed=config.seed
            ),
            plan=CallbackPlan(
                eval_steps=max(1, config.unlearn_steps // config.curve_points),
                max_queries_per_owner=3,
            ),
            owner_names=setting.data.names,
        )
        callback.tokenizer = setting.tokenizer
        return callback

    def step(self, key: str, title: str) -> Any:
        """A numbered, timed stage (its seconds go into the report)."""
        self.stage_index += 1
        return logged_stage(
            self.log, self.timings, key, f"[{self.stage_index}/{self.stage_count}] {title}"
        )


def _run_values(result: Any) -> dict[str, Any]:
    """A run's result in ``report.json``'s ``runs``: its flat values and owners, without the
    per-query detail (the first run's is in ``models``)."""
    return replace(
        result, query_values=None, query_owners=None, query_null_means=None, scores=None
    ).to_dict()


def _write_private(path: Path, text: str) -> None:
    """``text`` into ``path``, readable by its owner only (it may hold keys)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)
