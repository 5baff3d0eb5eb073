"""run_audits end to end on the built-in model: relearning brings back what superficial
unlearning hid, and the retrained model through the same steps is the yardstick."""

from __future__ import annotations

import copy
import dataclasses
import re
import sys

import pytest

from waterdrum_hf import WaterfallLogitsProcessor, completion_queries, generate
from waterdrum_hf.audits import (
    AuditConfig,
    AuditQueries,
    AuditResults,
    run_audits,
)
from waterdrum_hf.config import IntervalConfig, NullConfig, WaterDrumConfig

FORGET, RETAIN = 1234, 5678  # the owners' watermark ids (test keys, not secrets)


@pytest.fixture(scope="module")
def owners_texts(tiny_model, texts):
    """Four texts per owner, each sampled under the owner's watermark (kappa 6): what a model
    trained on them carries."""
    model, tokenizer = tiny_model
    prompts = completion_queries(texts[:4], tokenizer, prefix_tokens=6)
    written = {}
    for key in (FORGET, RETAIN):
        processor = WaterfallLogitsProcessor(tokenizer.vocab_size, key, kappa=6.0)
        samples = generate(
            model, tokenizer, prompts, num_samples=1, max_new_tokens=48, seed=key,
            logits_processor=[processor],
        )  # fmt: skip
        written[key] = [s[0] for s in samples]
    return written


@pytest.fixture(scope="module")
def superficially_unlearned(tiny_model, owners_texts, tmp_path_factory):
    """The original (trained on both owners), a model retrained on the retain owner only, and
    the original after a few large gradient-ascent steps on the forget texts: its forget
    watermark is gone from its answers, its weights still close to the original's."""
    from waterdrum_hf.experiments.training import TrainingSettings, finetune, unlearn

    model, tokenizer = tiny_model
    folder = tmp_path_factory.mktemp("models")
    training = TrainingSettings(batch_size=4, learning_rate=2e-3, seed=0)
    everything = owners_texts[FORGET] + owners_texts[RETAIN]
    original = finetune(model, tokenizer, everything, folder / "o", epochs=30, training=training)
    retrained = finetune(
        model, tokenizer, owners_texts[RETAIN], folder / "r", epochs=30, training=training
    )
    unlearned = unlearn(
        "gradascent", original, tokenizer, owners_texts[FORGET], owners_texts[RETAIN],
        folder / "u", steps=4, training=TrainingSettings(batch_size=4, learning_rate=3e-3, seed=0),
    )  # fmt: skip
    return {"retrained": retrained, "gradascent": unlearned}


@pytest.mark.end_to_end
@pytest.mark.kernels
def test_relearning_restores_what_superficial_unlearning_hid(
    tiny_model, owners_texts, superficially_unlearned
):
    model, tokenizer = tiny_model
    texts = owners_texts[FORGET] + owners_texts[RETAIN]
    queries = completion_queries(texts, tokenizer, prefix_tokens=8)
    references = [FORGET] * 4 + [RETAIN] * 4
    config = AuditConfig(
        audits=("relearning",), relearn_share=0.25, relearn_steps=12, relearn_learning_rate=2e-3,
        num_samples=4, max_new_tokens=48,  # 4: intervals narrow enough to separate
    )  # fmt: skip
    scoring = WaterDrumConfig(null=NullConfig("empirical", 20), interval=IntervalConfig(0.9))
    data = AuditQueries(
        queries, references, [FORGET], forget_texts=owners_texts[FORGET],
        owner_names={FORGET: "f", RETAIN: "r"},
    )  # fmt: skip
    results = run_audits(
        superficially_unlearned, tokenizer, data, config=config, scoring=scoring,
        show_progress=False,
    )  # fmt: skip
    assert results.settings["scoring"] == scoring.to_dict()
    assert isinstance(results, AuditResults) and results.audits() == ["relearned"]
    assert results.settings["relearn_texts"] == 1
    before = results.forget("gradascent", "before")
    after = results.forget("gradascent", "relearned")
    # One forget text and 12 steps bring the hidden watermark back on the forget queries, more
    # than the same steps teach the retrained model, which never saw those texts. The bound is
    # the values' own uncertainty, not one machine's numbers: the 90 % intervals over queries
    # before and after relearning separate. Fine-tuning amplifies the CPU kernels' rounding:
    # under five kernel sets (avx512, avx2, default, each with MKL's own path; default and
    # avx2 with MKL's pinned) the relearned value read 0.37-0.51 (its interval's low end
    # 0.18-0.39, the hidden value's high end at most 0.054) and the excess 0.13-0.40. With 8
    # steps the relearned value ranged 0.10-0.43 and the intervals overlapped under one set.
    hidden = results.models["gradascent"]["before"].forget
    relearned = results.models["gradascent"]["relearned"].forget  # intervals passed through
    assert (hidden.value, relearned.value) == (before, after)
    assert relearned.ci_low > hidden.ci_high, (hidden, relearned)
    assert results.excess("gradascent", "relearned") > 0
    assert relearned.ci_low <= relearned.value <= relearned.ci_high
    flat = results.scalars()
    assert flat["relearned/gradascent/forget"] == after
    assert flat["relearned/gradascent/forget_excess"] == results.excess("gradascent", "relearned")
    assert AuditResults.from_dict(results.to_dict()).scalars() == flat
    assert str(FORGET) not in repr(results.to_dict())  # keys never in the results


def test_an_audit_without_its_data_fails_before_any_model_is_touched(tiny_model):
    model, tokenizer = tiny_model
    untouchable = {"m": "/nonexistent/model/folder"}  # loading it would fail differently
    with pytest.raises(ValueError, match="needs the forget set's texts"):
        run_audits(untouchable, tokenizer, AuditQueries(["a query"], [FORGET], [FORGET]))
    with pytest.raises(ValueError, match="pass forget_ids"):
        AuditQueries(["a query"], [FORGET], forget_ids=[])
    with pytest.raises(ValueError, match="same length"):
        AuditQueries(["a", "b"], [FORGET], [FORGET])
    with pytest.raises(ValueError, match="unknown audit 'pruning'"):
        AuditConfig(audits=("pruning",))


def test_a_killed_audit_resumes_from_its_cached_stages(tiny_model, texts, tmp_path):
    from waterdrum_hf.scripts.audit import stage_cache

    model, tokenizer = tiny_model
    model.save_pretrained(tmp_path / "m")
    models = {"a": str(tmp_path / "m"), "retrained": str(tmp_path / "m")}
    queries = completion_queries(texts[:2], tokenizer, prefix_tokens=8)
    config = AuditConfig(audits=("relearning",), relearn_steps=1, num_samples=1, max_new_tokens=8)
    data = AuditQueries(queries, [FORGET, RETAIN], [FORGET], forget_texts=texts[:1])
    arguments = (models, tokenizer, data)
    options = {"config": config, "scoring": WaterDrumConfig()}
    computed = []

    def counting(cache, stop_after=None):
        def keep(model, audit, settings, compute):
            def counted():
                if len(computed) == stop_after:
                    raise KeyboardInterrupt  # killed mid-way
                computed.append((model, audit))
                return compute()

            return cache(model, audit, settings, counted)

        return keep

    cache = stage_cache(tmp_path / "cache", models)
    with pytest.raises(KeyboardInterrupt):
        run_audits(*arguments, **options, cache=counting(cache, stop_after=3))
    assert computed == [("a", "before"), ("a", "relearned"), ("retrained", "before")]
    computed.clear()
    resumed = run_audits(
        *arguments, **options, cache=counting(stage_cache(tmp_path / "cache", models))
    )
    assert computed == [("retrained", "relearned")]  # the rest came from the cache
    straight = run_audits(*arguments, **options, cache=stage_cache(tmp_path / "other", models))
    assert resumed.scalars() == straight.scalars()
    # Same weights under both names: relearning reads the same on both, before and after.
    assert resumed.excess("a", "relearned") == 0 == resumed.excess("a", "before")


def test_text_attacks_score_each_models_own_completions_edited(tiny_model, texts):
    from waterdrum_hf import attacks
    from waterdrum_hf.scoring import waterdrum_result

    model, tokenizer = tiny_model
    queries = completion_queries(texts[:4], tokenizer, prefix_tokens=8)
    references = [FORGET, RETAIN] * 2
    config = AuditConfig(
        audits=(), attacks=["truncation:0.5", "deletion:0"], num_samples=2, max_new_tokens=12
    )
    scoring = WaterDrumConfig(null=None)  # not the default (analytic): read as given
    data = AuditQueries(queries, references, [FORGET])
    kept = {}

    def cache(name, audit, settings, compute):
        kept[name, audit] = settings, compute()
        return kept[name, audit][1]

    options = {"config": config, "scoring": scoring, "show_progress": False}
    results = run_audits({"m": model}, tokenizer, data, **options, cache=cache)
    assert results.audits() == ["truncation:0.5", "deletion:0.0"]
    unedited = kept["m", "before"][1]["completions"]
    settings, outcome = kept["m", "truncation:0.5"]
    assert outcome["completions"] == attacks.chain(unedited, ["truncation:0.5"], seed=0)
    assert settings["stage"]["attack_seed"] == 0 and settings["audit"] == "truncation:0.5"
    expected = waterdrum_result(
        outcome["completions"], references, tokenizer, config=scoring, forget_ids=[FORGET]
    )
    assert results.forget("m", "truncation:0.5") == expected.forget.value
    assert results.models["m"]["truncation:0.5"].scalars() == expected.scalars()
    assert results.forget("m", "truncation:0.5") != results.forget("m", "before")
    same = results.models["m"]
    assert same["deletion:0.0"].scalars() == same["before"].scalars()  # deletion:0 edits nothing
    assert results.settings["attacks"] == ("truncation:0.5", "deletion:0.0")
    # Results given for the unperturbed model are kept; its completions are sampled for the
    # attacks all the same, and read the same.
    given = same["before"]
    again = run_audits({"m": model}, tokenizer, data, **options, before={"m": given})
    assert again.models["m"]["before"] == given and again.scalars() == results.scalars()
    assert AuditResults.from_dict(results.to_dict()).scalars() == results.scalars()


def test_text_attacks_are_checked_when_configured():
    with pytest.raises(ValueError, match="NAME:STRENGTH, e.g. deletion:0.2"):
        AuditConfig(attacks=("deletion",))
    with pytest.raises(ValueError, match="'deletion:0.2' is given twice"):
        AuditConfig(attacks=("deletion:0.2", "deletion: 0.20"))
    with pytest.raises(TypeError, match="list of NAME:STRENGTH texts"):
        AuditConfig(attacks="deletion:0.2")
    with pytest.raises(ValueError, match="or `attacks` one text attack"):
        AuditConfig(audits=())
    assert AuditConfig(attacks=("insertion:0.1",), attack_seed=4).text_attack_seed() == 4
    assert AuditConfig(seed=2).text_attack_seed() == 2
    with pytest.raises(ValueError, match="pass attack_source"):
        run_audits(
            {"m": "/nonexistent/model/folder"}, None,
            AuditQueries(["a query"], [FORGET], [FORGET]),
            config=AuditConfig(audits=(), attacks=("copy_paste:0.2",)),
        )  # fmt: skip


def test_each_stage_is_what_its_building_blocks_give(tiny_model, texts, tmp_path, capsys):
    """Every stage of every model recomputed here from the public building blocks (generate,
    relearn, quantize, the attacks, waterdrum_result): the completions, their settings for the
    cache, the scores and the run's settings."""
    import json
    from dataclasses import asdict

    from waterdrum_hf import attacks
    from waterdrum_hf.audits import quantize, relearn
    from waterdrum_hf.scoring import waterdrum_result
    from waterdrum_hf.utils.fingerprint import json_digest

    model, tokenizer = tiny_model
    model.save_pretrained(tmp_path / "retrained")  # the same weights, from a folder
    marker = copy.deepcopy(tokenizer)  # the watermark's tokenizer: same vocabulary, own name
    marker.name_or_path = "the-watermark-tokenizer"
    queries = completion_queries(texts[:2], tokenizer, prefix_tokens=6)
    source = ["Unwatermarked words to paste from, plain and simple."]
    config = AuditConfig(
        audits=("quantization", "relearning"), quantization_bits=(4, 8), relearn_share=0.5,
        relearn_steps=1, relearn_batch_size=2, relearn_learning_rate=5e-3,
        attacks=("substitution:0.5", "copy_paste:0.5", "truncation:0.5", "paraphrase:1"),
        attack_seed=5, num_samples=1, max_new_tokens=8, batch_size=2, seed=1,
    )  # fmt: skip
    scoring = WaterDrumConfig(null=NullConfig("analytic"))
    names = {FORGET: "f", RETAIN: "r"}
    data = AuditQueries(
        queries, [FORGET, RETAIN], [FORGET], forget_texts=texts[2:4], owner_names=names,
        attack_source=source,
    )  # fmt: skip
    kept = {}

    def cache(name, audit, settings, compute):
        kept[name, audit] = settings, compute()
        return kept[name, audit][1]

    models = {"a": model, "retrained": str(tmp_path / "retrained")}
    results = run_audits(
        models, tokenizer, data, config=config, scoring=scoring, watermark_tokenizer=marker,
        cache=cache, show_progress=True,
    )  # fmt: skip
    stages = ["before", "relearned", "int4", "int8", *config.attacks]
    assert list(kept) == [(m, s) for m in models for s in stages]
    # What each stage's completions are, built here.
    sampling = config.sampling_config()
    before = generate(model, tokenizer, queries, sampling)
    relearned = relearn(model, tokenizer, texts[2:3], config)  # the first half of two texts
    quantized = {bits: quantize(model, bits) for bits in (4, 8)}
    expected = {
        "before": {"completions": before},
        "relearned": {"completions": generate(relearned, tokenizer, queries, sampling)},
        **{
            f"int{bits}": {
                "completions": generate(q, tokenizer, queries, sampling),
                "quantization": check.to_dict(),
            }
            for bits, (q, check) in quantized.items()
        },
        **{
            spec: {
                "completions": attacks.chain(
                    before,
                    [spec],
                    5,
                    tokenizer=marker,
                    paraphraser=(model, tokenizer),
                    source=source,
                )  # fmt: skip
            }
            for spec in config.attacks
        },
    }
    common = {
        "queries": queries, "num_samples": 1, "max_new_tokens": 8, "batch_size": 2, "seed": 1,
    }  # fmt: skip
    settings = {
        "before": {},
        "relearned": {
            "texts": json_digest(texts[2:3]),
            "steps": 1,
            "learning_rate": 5e-3,
            "batch_size": 2,
            "seed": 1,
        },  # fmt: skip
        "int4": {"bits": 4, "backend": "torchao"},
        "int8": {"bits": 8, "backend": "torchao"},
        "substitution:0.5": {"attack_seed": 5, "vocabulary": "the-watermark-tokenizer"},
        "copy_paste:0.5": {"attack_seed": 5, "source": json_digest(source)},
        "truncation:0.5": {"attack_seed": 5},
        "paraphrase:1.0": {"attack_seed": 5},
    }
    for name in models:  # the folder holds the same weights: the same completions
        for stage in stages:
            given, outcome = kept[name, stage]
            assert given == {"audit": stage, "stage": settings[stage], "sampling": common}, (
                name,
                stage,
            )
            assert outcome == expected[stage], (name, stage)
            score = waterdrum_result(
                outcome["completions"], [FORGET, RETAIN], marker, config=scoring,
                forget_ids=[FORGET], owner_names=names,
            )  # fmt: skip
            found = results.models[name][stage]
            assert json.dumps(found.to_dict()) == json.dumps(score.to_dict()), (name, stage)
    assert results.retrained == "retrained"
    assert results.settings == {
        **asdict(config), "scoring": scoring.to_dict(), "relearn_texts": 1, "attack_seed": 5,
        "quantization_checks": {f"int{b}": quantized[b][1].to_dict() for b in (4, 8)},
    }  # fmt: skip
    # One bar for the stage: the audits' (no generation, fine-tuning or paraphrasing bar).
    shown = capsys.readouterr().err
    assert "Audits: 100%" in shown
    assert "Generating" not in shown and "paraphrasing" not in shown
    assert not re.search(r"(^|[\r\n]) *\d+%\|", shown)  # the fine-tune's untitled bar


def test_given_results_for_the_unperturbed_models_are_not_sampled_again(tiny_model, texts):
    model, tokenizer = tiny_model
    queries = completion_queries(texts[:2], tokenizer, prefix_tokens=6)
    config = AuditConfig(
        audits=("quantization",), quantization_bits=(8,), num_samples=1, max_new_tokens=6
    )
    data = AuditQueries(queries, [FORGET, RETAIN], [FORGET])
    options = {"config": config, "scoring": WaterDrumConfig(null=NullConfig("analytic"))}
    first = run_audits({"a": model, "b": model}, tokenizer, data, **options)
    # Given with its per-sample scores (as return_scores gives them): kept without them.
    given = dataclasses.replace(first.models["a"]["before"], scores=(0.25, 0.75))
    calls = []

    def cache(name, audit, settings, compute):
        calls.append((name, audit))
        return compute()

    again = run_audits({"a": model, "b": model}, tokenizer, data, **options, cache=cache,
                       before={"a": given})  # fmt: skip
    assert calls == [("a", "int8"), ("b", "before"), ("b", "int8")]
    kept = again.models["a"]
    assert list(kept) == ["before", "int8"] and kept["before"].scores is None
    assert kept["before"] == dataclasses.replace(given, scores=None)
    assert again.scalars() == first.scalars() and again.retrained is None
    assert again.settings == first.settings


def settings_only(tokenizer, data, config, **options):
    """run_audits of a model never loaded: its cache computes no stage and answers every one
    with the same two completions. Returns the results and each stage's cache settings."""
    seen = {}

    def cache(name, audit, settings, compute):
        seen[name, audit] = settings
        return {"completions": [["one two three"], ["four five six"]]}

    options.setdefault("scoring", WaterDrumConfig(null=NullConfig("analytic")))
    results = run_audits({"m": "never loaded"}, tokenizer, data, config=config, cache=cache,
                         **options)  # fmt: skip
    return results, seen


def test_the_relearning_batch_size_names_its_cached_stage(tiny_model):
    _, tokenizer = tiny_model
    data = AuditQueries(["q1", "q2"], [FORGET, RETAIN], [FORGET], forget_texts=["a text"])
    first, second = (
        settings_only(
            tokenizer, data, AuditConfig(audits=("relearning",), relearn_batch_size=size)
        )[1]["m", "relearned"]
        for size in (1, 2)
    )
    assert first["stage"]["batch_size"] == 1 and second["stage"]["batch_size"] == 2


def test_word_attacks_name_the_vocabulary_they_draw_from(tiny_model):
    """Substitution and insertion draw words of the watermark tokenizer's vocabulary: their
    cached stages name it (None for a tokenizer without a name); other attacks name none.
    The run records the seed the attacks used: the audits' seed when none is given."""
    _, tokenizer = tiny_model
    named = copy.deepcopy(tokenizer)
    named.name_or_path = "the-watermark-tokenizer"
    nameless = copy.deepcopy(tokenizer)
    del nameless.name_or_path
    assert not hasattr(nameless, "name_or_path")
    data = AuditQueries(["q1", "q2"], [FORGET, RETAIN], [FORGET])
    config = AuditConfig(
        audits=(), attacks=("insertion:0.1", "substitution:0.1", "deletion:0.1"), seed=3
    )
    for marker, vocabulary in ((named, "the-watermark-tokenizer"), (nameless, None)):
        results, seen = settings_only(tokenizer, data, config, watermark_tokenizer=marker)
        for spec in ("insertion:0.1", "substitution:0.1"):
            assert seen["m", spec]["stage"] == {"attack_seed": 3, "vocabulary": vocabulary}
        assert seen["m", "deletion:0.1"]["stage"] == {"attack_seed": 3}
        assert results.settings["attack_seed"] == 3  # AuditConfig.attack_seed is None
        assert "quantization_checks" not in results.settings


def test_without_attacks_or_quantization_the_run_records_neither(tiny_model):
    _, tokenizer = tiny_model
    data = AuditQueries(["q1", "q2"], [FORGET, RETAIN], [FORGET], forget_texts=["a text"])
    config = AuditConfig(audits=("relearning",), seed=3)
    results, seen = settings_only(tokenizer, data, config)
    assert list(seen) == [("m", "before"), ("m", "relearned")]
    # No attack ran: no seed of theirs, only the config's own field (None); no quantized model.
    assert results.settings["attack_seed"] is None and results.settings["seed"] == 3
    assert "quantization_checks" not in results.settings
    scoring = WaterDrumConfig(null=NullConfig("analytic")).to_dict()
    assert results.settings == {
        **dataclasses.asdict(config),
        "scoring": scoring,
        "relearn_texts": 1,
    }


def test_owner_names_are_checked_as_the_metric_checks_them(tiny_model):
    _, tokenizer = tiny_model
    twice = {FORGET: "same", RETAIN: "same"}
    data = AuditQueries(["q1", "q2"], [FORGET, RETAIN], [FORGET], owner_names=twice)
    config = AuditConfig(audits=(), attacks=("deletion:0.1",))
    with pytest.raises(ValueError, match="`owner_names` gives two owners the same name"):
        settings_only(tokenizer, data, config)
    with pytest.raises(TypeError, match="`owner_names` values must be non-empty strings"):
        settings_only(tokenizer, dataclasses.replace(data, owner_names={FORGET: ""}), config)
    named = dataclasses.replace(data, owner_names={FORGET: "f", RETAIN: "r"})
    assert settings_only(tokenizer, named, config)[0].audits() == ["deletion:0.1"]


def test_only_the_quantization_audit_needs_torchao(monkeypatch):
    import sys

    from waterdrum_hf.audits import check_audits

    monkeypatch.setitem(sys.modules, "torchao", None)  # as if not installed
    relearning = AuditConfig(audits=("relearning",), relearn_share=1.0)
    assert check_audits(relearning, ["a", "b"]) == ["a", "b"]
    attacks = AuditConfig(audits=(), attacks=("deletion:0.1",))
    assert check_audits(attacks, ["a"]) == []
    for audits in (("quantization",), ("relearning", "quantization")):
        with pytest.raises(ImportError, match="the quantization audit needs torchao"):
            check_audits(AuditConfig(audits=audits), ["a"])


def test_bad_lists_are_refused_under_the_names_the_caller_gave():
    from waterdrum_hf.audits import check_audits

    pastes = AuditConfig(audits=(), attacks=("copy_paste:0.2",))
    with pytest.raises(TypeError, match=r"^attack_source must be a list of strings, not a"):
        check_audits(pastes, [], "pasted text")
    with pytest.raises(TypeError, match=r"^attack_source\[1\] must be a str, got bytes$"):
        check_audits(pastes, [], ["pasted", b"text"])
    assert check_audits(pastes, [], ["pasted text"]) == []
    with pytest.raises(TypeError, match=r"^queries must be a list of strings, not a single"):
        AuditQueries("one query", [FORGET], [FORGET])
    with pytest.raises(TypeError, match=r"^queries\[0\] must be a str, got int$"):
        AuditQueries([3], [FORGET], [FORGET])


def test_the_queries_are_kept_as_the_checked_list(tiny_model):
    _, tokenizer = tiny_model
    data = AuditQueries((q for q in ("q1", "q2")), [FORGET, RETAIN], [FORGET])  # read once
    assert data.queries == ["q1", "q2"]
    config = AuditConfig(audits=(), attacks=("deletion:0.1",))
    seen = settings_only(tokenizer, data, config)[1]
    assert seen["m", "before"]["sampling"]["queries"] == ["q1", "q2"]


def test_the_audit_stage_draws_one_bar(tiny_model, texts, tmp_path, capsys, monkeypatch):
    """With progress bars on in a terminal, the "Audits" bar is the stage's one bar: no
    model's loading, sampling, relearning, quantizing or paraphrasing bar inside it (7
    "Loading weights" bars were drawn before), though bars left to themselves show there."""
    model, tokenizer = tiny_model
    model.save_pretrained(tmp_path / "m")
    queries = completion_queries(texts[:2], tokenizer, prefix_tokens=8)
    config = AuditConfig(
        audits=("relearning", "quantization"), quantization_bits=(8,), attacks=("paraphrase:1",),
        relearn_steps=1, num_samples=1, max_new_tokens=8,
    )  # fmt: skip
    data = AuditQueries(queries, [FORGET, RETAIN], [FORGET], forget_texts=texts[:1])
    capsys.readouterr()
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    run_audits(
        {"a": str(tmp_path / "m")}, tokenizer, data, config=config,
        scoring=WaterDrumConfig(), show_progress=True,
    )  # fmt: skip
    err = capsys.readouterr().err
    assert "Audits: 100%" in err
    bars = re.findall(r"(?:^|[\r\n])([^\r\n|]*?) *\d+%\|", err)  # a bar's words before its %
    assert set(bars) == {"Audits:"}, err[-2000:]
