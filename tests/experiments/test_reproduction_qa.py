"""The reproduction on the built-in QA corpus (``--dataset-name toy-qa``): its settings are
TOFU's (questions asked in the chat format, answers watermarked, held-out authors, duplicates
of the forget answers under the next retain owner's key) and every experiment runs with the
QA baselines, Truth Ratio and KnowMem, beside the others."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from waterdrum_hf.data import toy_qa_corpus
from waterdrum_hf.experiments.reproduction import ReproductionConfig
from waterdrum_hf.experiments.reproduction import data as data_module
from waterdrum_hf.generation.prompting import qa_queries


def marked(config, pipeline, name, texts, keys):
    """A stand-in for watermarking: each text tagged with the stage name and its key."""
    return [f"{text} <{name}:{key}>" for text, key in zip(texts, keys, strict=True)]


def test_qa_settings_are_tofus_with_answers_watermarked_and_the_twin_unwatermarked(
    tiny_model, monkeypatch
):
    _, tokenizer = tiny_model
    monkeypatch.setattr(data_module, "_watermark", marked)
    config = ReproductionConfig(
        dataset_name="toy-qa", owners=3, forget=1, passages_per_owner=2, holdout_per_owner=3
    )
    keys = [11, 22, 33]
    settings = data_module.toy_qa_settings(config, SimpleNamespace(tokenizer=tokenizer), keys)
    assert [s.name for s in settings] == list(config.settings)
    corpus = toy_qa_corpus(4, questions_per_owner=3)
    rows = {(r["owner_id"], i % 3): r for i, r in enumerate(corpus)}
    forget = [rows[2, 0], rows[2, 1]]  # the last owner's first two questions
    retain = [rows[0, 0], rows[0, 1], rows[1, 0], rows[1, 1]]
    prompts = qa_queries([r["question"] for r in forget + retain], tokenizer)
    no_duplicate, exact, semantic = settings
    assert no_duplicate.queries == prompts
    assert no_duplicate.forget == [
        f"{prompts[i]}{r['answer']} <qa-answers:33>" for i, r in enumerate(forget)
    ]
    assert no_duplicate.forget_keys == [33, 33] and no_duplicate.retain_keys == [11, 11, 22, 22]
    assert no_duplicate.references == [
        f"{r['answer']} <qa-answers:{keys[r['owner_id']]}>" for r in forget + retain
    ]
    # The held-out author (owner 3) is written with the forget owner's key; nobody trains on it.
    held = qa_queries([rows[3, i]["question"] for i in range(3)], tokenizer)
    assert no_duplicate.holdout == [
        f"{held[i]}{rows[3, i]['answer']} <qa-holdout:33>" for i in range(3)
    ]
    # Duplicates: the forget questions again, owned by the next retain owner (0 after 2).
    assert exact.duplicates == 2 and exact.retain_keys[-2:] == [11, 11]
    assert exact.retain[-2:] == [
        f"{prompts[i]}{r['answer']} <qa-exact-duplicate:11>" for i, r in enumerate(forget)
    ]
    assert semantic.retain[-2:] == [
        f"{prompts[i]}{r['paraphrased_answer']} <qa-semantic-duplicate:11>"
        for i, r in enumerate(forget)
    ]
    assert exact.queries == prompts + prompts[:2]  # a duplicate is queried as retain data
    duplicates = zip(exact.retain[-2:], prompts, strict=False)
    assert exact.references[-2:] == [text.removeprefix(query) for text, query in duplicates]
    twin = exact.unwatermarked
    assert twin is not None and twin.retain[-2:] == twin.forget  # literal copies
    assert twin.forget == [f"{prompts[i]}{r['answer']}" for i, r in enumerate(forget)]
    assert twin.references == [r["answer"] for r in forget + retain + forget]
    # What Truth Ratio and KnowMem read, per query, the same in the twin.
    answers = exact.answers
    assert answers is not None and answers == twin.answers
    asked = forget + retain + forget
    assert answers.questions == [r["question"] for r in asked]
    assert answers.gold == [r["answer"] for r in asked]
    assert answers.paraphrased == [r["paraphrased_answer"] for r in asked]
    assert answers.perturbed == [r["perturbed_answer"] for r in asked]
    assert semantic.answers is not None
    assert semantic.answers.gold[-2:] == [r["paraphrased_answer"] for r in forget]
    assert no_duplicate.answers is not None and len(no_duplicate.answers.gold) == 6
    # Duplicates against their forget answers, the question left out.
    copies, originals, others = twin.duplicate_pairs()
    assert copies == originals == [r["answer"] for r in forget]
    assert others == [r["answer"] for r in retain[:2]]


@pytest.mark.parametrize("name", ["passages_per_owner", "holdout_per_owner"])
def test_an_author_has_ten_questions(name):
    with pytest.raises(ValueError, match=f"`{name}` must be at most 10 with toy-qa"):
        ReproductionConfig(dataset_name="toy-qa", **{name: 11})


def test_the_qa_corpus_runs_every_experiment_with_the_qa_baselines(tiny_model, tmp_path):
    from waterdrum_hf.experiments.reproduction import run_reproduction
    from waterdrum_hf.experiments.reproduction.meta_evaluation import META_METRICS

    config = ReproductionConfig.quick(
        dataset_name="toy-qa",
        owners=3,
        passages_per_owner=3,
        holdout_per_owner=3,
        epochs=3,  # structure only: every QA baseline and table is there
        settings=("no_duplicate", "exact_duplicate"),
        methods=("kl",),
        null_keys=10,
        output_dir=str(tmp_path),
    )
    results = run_reproduction(config, log=lambda line: None)
    qa = {"truth_ratio", "knowmem", "truth_ratio_unwatermarked", "knowmem_unwatermarked"}
    for summary in results["settings"].values():
        assert qa <= set(summary["auroc"]) and qa <= set(summary["r2"])
        assert all(0 <= summary["auroc"][m] <= 1 for m in qa)
    assert list(results["meta_evaluation"]["metrics"]) == list(META_METRICS)
    quality = results["forget_quality"]  # each model's KS p-value against retraining's
    assert set(quality) == set(results["settings"])
    for per_model in quality.values():
        assert list(per_model) == ["original", "kl"]
        assert all(0 < p <= 1 for values in per_model.values() for p in values)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["config"]["dataset_name"] == "toy-qa"
    markdown = (tmp_path / "results.md").read_text()
    assert "| Truth Ratio, unwatermarked data |" in markdown and "| KnowMem |" in markdown
    assert "## Forget Quality" in markdown and "| original | " in markdown
    assert "the built-in QA corpus, 3 fictitious authors x 3 questions" in markdown
