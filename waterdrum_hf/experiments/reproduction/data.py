"""The paper's similarity settings as data: forget set, retain side, holdout, owners' keys.

* ``no_duplicate``: the retain side is the retain owners' data.
* ``exact_duplicate``: plus a copy of the forget set's original texts re-watermarked with the
  *next* owner's key (the next owner who is not forgotten; WaterDrum-Ax's ``forget_01`` gives it
  to ``(f + 1) mod n``).
* ``semantic_duplicate``: plus a paraphrase of the forget set's original texts, watermarked with
  the next owner's key.

The paper measures WaterDrum on the watermarked data and, in its main tables, the baselines on
models fine-tuned on the *unwatermarked* data, where an exact duplicate is a literal copy of
the forget text (ROUGE-L 1.00 against it) and a semantic duplicate its unwatermarked
paraphrase; on the watermarked data (its appendix) ROUGE-L separates too. The built-in corpus
has both: :attr:`SettingData.unwatermarked` is the same setting made of the original texts.

The built-in corpus is watermarked here (through the cached pipeline); WaterDrum-Ax and
WaterDrum-TOFU come watermarked, with their duplicate splits (and, for Ax, held-out ``test``
abstracts). Text is queried with its first tokens and ROUGE compares the model's greedy
continuation with the text's next tokens; QA is queried with the question in the model's chat
format and ROUGE compares with the answer.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from waterdrum_hf.experiments.reproduction.config import ReproductionConfig


@dataclass(frozen=True)
class QAAnswers:
    """Per query (forget queries first, as :attr:`SettingData.queries`), what TOFU's Truth
    Ratio and MUSE's KnowMem read: the bare question, its correct answer as the corpus states
    it (unwatermarked), a paraphrase of it and wrong answers of the paraphrase's form."""

    questions: list[str]
    gold: list[str]
    paraphrased: list[str]
    perturbed: list[list[str]]


@dataclass(frozen=True)
class SettingData:
    """One similarity setting: what is trained on and who owns it."""

    name: str
    forget: list[str]
    """Forget texts, in order: the first k% of them is "the first k% of the forget set"."""
    forget_keys: list[int]
    retain: list[str]
    """Retain side: the retain owners' texts, then the duplicates (if any)."""
    retain_keys: list[int]
    holdout: list[str]
    """Texts like the forget set's that no model trains on (Min-k% Prob MIA); may be empty."""
    queries: list[str]
    """The query of every forget text, then of every retain text."""
    references: list[str]
    """What ROUGE-L compares each query's greedy continuation with (same order)."""
    duplicates: int = 0
    """How many texts at the end of ``retain`` duplicate the forget set (in its order)."""
    unwatermarked: SettingData | None = None
    """The same setting made of the owners' original texts, in the same order (the duplicates
    literal copies, or unwatermarked paraphrases): what the paper's main tables measure the
    baselines on. ``None`` for the published datasets."""
    answers: QAAnswers | None = None
    """What the QA baselines read, per query: set for the built-in QA corpus only."""

    def duplicate_pairs(self) -> tuple[list[str], list[str], list[str]]:
        """The duplicates, the forget texts they duplicate, and as many retain owners' texts
        (for comparison): what tells a faithful duplicate from a loose one. On questions, the
        answers alone (a duplicate asks its forget text's question again)."""
        n = min(self.duplicates, len(self.forget), len(self.retain) - self.duplicates)
        texts = self.references if self.answers is not None else self.forget + self.retain
        forget, retain = texts[: len(self.forget)], texts[len(self.forget) :]
        duplicates = retain[len(retain) - self.duplicates :][:n]
        return duplicates, forget[:n], retain[:n]

    def __repr__(self) -> str:  # keys are secrets, even in a debugger
        return (
            f"SettingData({self.name!r}, forget={len(self.forget)}, retain={len(self.retain)}, "
            f"holdout={len(self.holdout)})"
        )


def toy_settings(config: ReproductionConfig, pipeline: Any, keys: list[int]) -> list[SettingData]:
    """The built-in corpus watermarked by the pipeline's model, in every configured setting."""
    from waterdrum_hf.data import partition_by_owner, toy_corpus

    corpus = toy_corpus(
        config.owners, max_passages_per_owner=config.passages_per_owner + config.holdout_per_owner
    )
    originals: dict[int, list[str]] = {}
    for text, owner in zip(corpus["text"], corpus["owner_id"], strict=True):
        originals.setdefault(owner, []).append(text)
    forget_owners = range(config.owners - config.forget, config.owners)
    training = [
        (t, o) for o in range(config.owners) for t in originals[o][: config.passages_per_owner]
    ]
    held = [
        (t, o)
        for o in forget_owners
        for t in originals[o][config.passages_per_owner :][: config.holdout_per_owner]
    ]
    watermark = functools.partial(_watermark, config, pipeline)
    texts = watermark("corpus", [t for t, _ in training], [keys[o] for _, o in training])
    holdout = watermark("holdout", [t for t, _ in held], [keys[o] for _, o in held])
    owners = [o for _, o in training]
    forget, retain = partition_by_owner(
        [(t, keys[o]) for t, o in zip(texts, owners, strict=True)], owners, forget_owners
    )
    forget_training, retain_training = partition_by_owner(training, owners, forget_owners)
    forget_originals = [t for t, _ in forget_training]
    next_keys = [keys[_next_retain_owner(o, config)] for _, o in forget_training]
    duplicates: dict[str, list[str]] = {}  # each setting's duplicates, watermarked
    copied: dict[str, list[str]] = {}  # and before watermarking
    if "exact_duplicate" in config.settings:
        duplicates["exact_duplicate"] = watermark("exact-duplicate", forget_originals, next_keys)
        copied["exact_duplicate"] = forget_originals
    if "semantic_duplicate" in config.settings:
        paraphrased, _ = pipeline.watermark(  # the small model's rewrite, unwatermarked (kappa 0)
            "paraphrase", forget_originals, next_keys, kappa=0.0, seed=0, no_repeat_ngram_size=3
        )
        duplicates["semantic_duplicate"] = watermark("semantic-duplicate", paraphrased, next_keys)
        copied["semantic_duplicate"] = paraphrased
    settings = []
    for name in config.settings:
        extra, extra_originals = (
            [list(zip(source[name], next_keys, strict=True)) for source in (duplicates, copied)]
            if name in duplicates
            else ([], [])
        )
        unwatermarked = text_setting(
            config,
            pipeline.tokenizer,
            name,
            list(zip(forget_originals, [k for _, k in forget], strict=True)),
            [(t, keys[o]) for t, o in retain_training] + extra_originals,
            [t for t, _ in held],
            duplicates=len(extra),
        )
        settings.append(
            text_setting(
                config,
                pipeline.tokenizer,
                name,
                forget,
                retain + extra,
                holdout,
                duplicates=len(extra),
                unwatermarked=unwatermarked,
            )
        )
    return settings


def toy_qa_settings(
    config: ReproductionConfig, pipeline: Any, keys: list[int]
) -> list[SettingData]:
    """The built-in QA corpus (TOFU's shape: each owner a fictitious author, asked
    ``passages_per_owner`` questions) in every configured setting. Answers are watermarked by
    the pipeline's model; each question is asked in the model's chat format and trained on with
    its answer after it. The MIAs' holdout: ``holdout_per_owner`` questions about as many other
    authors as are forgotten, whom no model trains on (TOFU's holdout authors), watermarked
    with the forget owners' keys. Exact duplicates: the forget questions with their original
    answers watermarked with the next retain owner's key; semantic duplicates: the same with
    the corpus's paraphrased answers (faithful: the same facts in other words)."""
    from waterdrum_hf.data import toy_qa_corpus
    from waterdrum_hf.generation.prompting import qa_queries

    per_owner = max(config.passages_per_owner, config.holdout_per_owner)
    corpus = toy_qa_corpus(config.owners + config.forget, questions_per_owner=per_owner)
    # every author is asked the same questions in order: row i is question i % per_owner
    rows = [r for i, r in enumerate(corpus) if i % per_owner < config.passages_per_owner]
    held = [r for i, r in enumerate(corpus) if i % per_owner < config.holdout_per_owner]
    held = [r for r in held if r["owner_id"] >= config.owners]
    rows = [r for r in rows if r["owner_id"] < config.owners]
    forget_owners = set(range(config.owners - config.forget, config.owners))
    forget_rows = [r for r in rows if r["owner_id"] in forget_owners]
    retain_rows = [r for r in rows if r["owner_id"] not in forget_owners]
    questions = corpus["question"]
    prompts = dict(zip(questions, qa_queries(questions, pipeline.tokenizer), strict=True))
    watermark = functools.partial(_watermark, config, pipeline)
    ordered = forget_rows + retain_rows
    originals = [r["answer"] for r in ordered]
    answers = watermark("qa-answers", originals, [keys[r["owner_id"]] for r in ordered])
    # holdout author owners + i is written with forget owner i's key
    holdout_keys = [keys[r["owner_id"] - config.forget] for r in held]
    holdout = watermark("qa-holdout", [r["answer"] for r in held], holdout_keys)
    next_keys = [keys[_next_retain_owner(r["owner_id"], config)] for r in forget_rows]
    sources = {"exact_duplicate": "answer", "semantic_duplicate": "paraphrased_answer"}
    duplicates = {
        name: [r[column] for r in forget_rows]
        for name, column in sources.items()
        if name in config.settings
    }
    watermarked = {
        name: watermark(f"qa-{name.replace('_', '-')}", texts, next_keys)
        for name, texts in duplicates.items()
    }

    def setting(
        name: str, own: list[str], extra: list[str], held_answers: list[str], twin: Any = None
    ) -> SettingData:
        asked = ordered + (forget_rows if extra else [])  # a duplicate asks its question again
        queries = [prompts[r["question"]] for r in asked]
        texts = [query + a for query, a in zip(queries, own + extra, strict=True)]
        return SettingData(
            name,
            texts[: len(forget_rows)],
            [keys[r["owner_id"]] for r in forget_rows],
            texts[len(forget_rows) :],
            [keys[r["owner_id"]] for r in retain_rows] + (next_keys if extra else []),
            [prompts[r["question"]] + a for r, a in zip(held, held_answers, strict=True)],
            queries,
            own + extra,
            len(extra),
            twin,
            QAAnswers(
                [r["question"] for r in asked],
                originals + duplicates.get(name, []),
                [r["paraphrased_answer"] for r in asked],
                [list(r["perturbed_answer"]) for r in asked],
            ),
        )

    return [
        setting(
            name,
            answers,
            watermarked.get(name, []),
            holdout,
            setting(name, originals, duplicates.get(name, []), [r["answer"] for r in held]),
        )
        for name in config.settings
    ]


def ax_settings(config: ReproductionConfig, tokenizer: Any) -> list[SettingData]:
    """WaterDrum-Ax (``config.dataset_config``) in every configured setting."""
    from waterdrum_hf.data import first_rows_per_owner, load_waterdrum_ax

    def rows(name: str, split: str) -> list[tuple[str, int]]:
        data = first_rows_per_owner(
            load_waterdrum_ax(name, split=split, **_path(config)), config.max_rows_per_owner
        )
        return list(zip(data["text"], data["owner_id"], strict=True))

    dataset_config = config.dataset_config
    assert dataset_config is not None  # ReproductionConfig sets it for a benchmark
    forget = rows(dataset_config, "forget")
    retain = rows(dataset_config, "retain")
    forget_owners = {o for _, o in forget}
    holdout = [t for t, o in rows("test", "full") if o in forget_owners]
    duplicates = {
        name: rows(dataset_config, name) for name in config.settings if name != "no_duplicate"
    }
    for extra in duplicates.values():
        _check_duplicate_owners(list(forget_owners), [o for _, o in extra], config)
    return [
        text_setting(
            config,
            tokenizer,
            name,
            forget,
            retain + duplicates.get(name, []),
            holdout,
            duplicates=len(duplicates.get(name, [])),
        )
        for name in config.settings
    ]


def tofu_settings(config: ReproductionConfig, tokenizer: Any) -> list[SettingData]:
    """WaterDrum-TOFU (``config.dataset_config``; duplicates exist in ``forget_10`` only) in
    every configured setting. It has no held-out set: MIA is left out."""
    from waterdrum_hf.data import first_rows_per_owner, load_waterdrum_tofu
    from waterdrum_hf.generation.prompting import qa_queries

    dataset_config = config.dataset_config
    assert dataset_config is not None  # ReproductionConfig sets it for a benchmark

    def rows(split: str) -> list[tuple[str, str, int]]:
        data = first_rows_per_owner(
            load_waterdrum_tofu(dataset_config, split=split, **_path(config)),
            config.max_rows_per_owner,
        )
        answers = data["answer"] if "answer" in data.column_names else data["answer_split"]
        prompts = qa_queries(list(data["question"]), tokenizer)
        return list(zip(prompts, answers, data["owner_id"], strict=True))

    def setting(name: str, forget: list, retain: list, duplicates: int) -> SettingData:
        texts = [f"{prompt}{answer}" for prompt, answer, _ in forget + retain]
        return SettingData(
            name,
            texts[: len(forget)],
            [o for *_, o in forget],
            texts[len(forget) :],
            [o for *_, o in retain],
            [],
            [p for p, _, _ in forget + retain],
            [a for _, a, _ in forget + retain],
            duplicates,
        )

    forget, retain = rows("forget"), rows("retain")
    duplicates = {name: rows(name) for name in config.settings if name != "no_duplicate"}
    for extra in duplicates.values():
        _check_duplicate_owners([o for *_, o in forget], [o for *_, o in extra], config)
    return [
        setting(name, forget, retain + duplicates.get(name, []), len(duplicates.get(name, [])))
        for name in config.settings
    ]


def text_setting(
    config: ReproductionConfig,
    tokenizer: Any,
    name: str,
    forget: list[tuple[str, int]],
    retain: list[tuple[str, int]],
    holdout: list[str],
    *,
    duplicates: int = 0,
    unwatermarked: SettingData | None = None,
) -> SettingData:
    """A setting of plain texts: each queried with its first ``prefix_tokens`` tokens (at most
    half of it, as the demo queries), ROUGE-L referenced by its next ``rouge_new_tokens``
    tokens. The last ``duplicates`` retain texts duplicate the forget set."""
    from waterdrum_hf.generation.prompting import completion_queries_and_continuations

    queries, references = completion_queries_and_continuations(
        [t for t, _ in forget + retain],
        tokenizer,
        config.prefix_tokens,
        max_fraction=0.5,
        continuation_tokens=config.rouge_new_tokens,
    )
    return SettingData(
        name,
        [t for t, _ in forget],
        [k for _, k in forget],
        [t for t, _ in retain],
        [k for _, k in retain],
        holdout,
        queries,
        references,
        duplicates,
        unwatermarked,
    )


def _next_retain_owner(owner: int, config: ReproductionConfig) -> int:
    """The owner after ``owner`` (cyclically) who is not forgotten: duplicates belong to the
    retain side, so their owner must not be a forget owner too."""
    following = (owner + 1) % config.owners
    while following >= config.owners - config.forget:
        following = (following + 1) % config.owners
    return following


def _check_duplicate_owners(
    forget_keys: list[int], duplicate_keys: list[int], config: ReproductionConfig
) -> None:
    """Refuse a published configuration whose duplicates are owned by forget owners (Ax
    ``forget_03``/``forget_05``: the duplicate of owner f belongs to f + 1, itself forgotten),
    where "the forget set" would mean two things at once."""
    if set(forget_keys) & set(duplicate_keys):
        raise ValueError(
            f"In {config.dataset_name} {config.dataset_config} some duplicates are owned by forget "
            "owners; run the duplicate settings on forget_01 (Ax) or forget_10 (TOFU), or pass "
            "settings=('no_duplicate',)."
        )


def _path(config: ReproductionConfig) -> dict[str, str]:
    return {"path": config.dataset_path} if config.dataset_path else {}


def _watermark(
    config: ReproductionConfig, pipeline: Any, name: str, texts: list[str], keys: list[int]
) -> list[str]:
    """Toy texts watermarked as ``config.watermarking`` says, with ``config.scheme`` (cached)."""
    from waterdrum_hf.experiments.reproduction.substitution import substitution_watermark
    from waterdrum_hf.utils.fingerprint import key_digest

    if config.watermarking == "paraphrase":
        watermarked, _ = pipeline.watermark(
            name, texts, keys, **config.watermark_settings(), seed=0, no_repeat_ngram_size=3
        )  # the tiny paraphraser loops without the n-gram rule
        return watermarked
    stage = pipeline.cache.stage(
        f"substituted-{name}",
        {
            "texts": texts,
            "keys": [key_digest(k) for k in keys],
            "kappa": config.kappa,
            "copy_bias": config.copy_bias,
        },
        pipeline.base,
    )
    return pipeline.cache.cached_json(
        stage,
        lambda: substitution_watermark(
            pipeline.model,
            pipeline.tokenizer,
            texts,
            keys,
            kappa=config.kappa,
            copy_bias=config.copy_bias,
        ),
    )
