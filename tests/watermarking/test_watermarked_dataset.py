"""WatermarkedDataset and WaterfallLogitsProcessor on the built-in tiny model.

Score means measured on this file's data (6 toy-corpus passages, two owners in one batch,
kappa 2, 32 new tokens, tiny model VERSION 1 on Python 3.11), identical under our verifier
and waterfall's:
    beam search, 4 groups x 2 beams: own key 0.79 (lowest text 0.72), 20 other keys 0.03,
                                     the originals under their owner's key 0.01
    sampling, 2 samples per text:    own key 0.64 (lowest text 0.51), 20 other keys -0.01
The asserts keep wide margins below those values."""

from __future__ import annotations

import copy
import dataclasses
import logging
import math

import numpy as np
import pytest
from datasets import Dataset, load_from_disk
from datasets.fingerprint import Hasher

from waterdrum_hf import (
    WaterfallLogitsProcessor,
    WatermarkedDataset,
    WatermarkingConfig,
    verify_texts,
)
from waterdrum_hf.data.corpus import toy_corpus
from waterdrum_hf.schemes import SynthIDScheme
from waterdrum_hf.watermarking.config import SCHEME_SETTINGS

KEYS = (11, 4_000_000_007)


OTHER_KEYS = range(100, 120)


FAST = {"max_new_tokens": 32, "show_progress": False}


@pytest.fixture(scope="module")
def passages() -> Dataset:
    """Six passages, alternately owned by the two keys, plus a column that must pass through."""
    texts = toy_corpus().shuffle(seed=0).select(range(6))["text"]
    return Dataset.from_dict(
        {
            "text": list(texts),
            "owner_id": [KEYS[i % 2] for i in range(6)],
            "note": [f"row {i}" for i in range(6)],
        }
    )


def waterfall_scores(texts: list[str], key: int, tokenizer) -> np.ndarray:
    from waterfall.WatermarkerBase import Watermarker

    # Watermarker overwrites the tokenizer's pad token: give it a copy.
    verifier = Watermarker(tokenizer=copy.deepcopy(tokenizer))
    return verifier.verify(texts, id=[key], k_p=[1])[:, 0, 0]


def check_watermarked(out: Dataset, passages: Dataset, tokenizer, own_min: float) -> None:
    texts, owners = out["text"], out["owner_id"]
    ours = verify_texts(texts, owners, tokenizer)
    np.testing.assert_allclose(out["watermark_score"], ours, atol=1e-9)
    theirs = np.concatenate(
        [waterfall_scores([texts[i]], owner, tokenizer) for i, owner in enumerate(owners)]
    )
    np.testing.assert_allclose(theirs, ours, atol=1e-6)
    others = np.mean([np.mean(verify_texts(texts, key, tokenizer)) for key in OTHER_KEYS])
    originals = np.mean(verify_texts(passages["text"], owners, tokenizer))
    assert ours.mean() > own_min
    assert ours.mean() - others > 0.5 and abs(others) < 0.15
    assert ours.mean() - originals > 0.5
    # Nothing of the input row is lost.
    assert out["text_original"] == passages["text"]
    assert out["note"] == passages["note"]


def test_beam_search_watermark_verifies_under_the_owner_key(tiny_model, passages):
    model, tokenizer = tiny_model
    out = passages.map(WatermarkedDataset(model, tokenizer, **FAST), batched=True, batch_size=6)
    assert out.column_names == ["text", "owner_id", "note", "text_original", "watermark_score"]
    check_watermarked(out, passages, tokenizer, own_min=0.6)


def test_sampling_watermark_and_explicit_generation_config(tiny_model, passages, monkeypatch):
    model, tokenizer = tiny_model
    seen = []
    generate = model.generate

    def spy(*args, **kwargs):
        seen.append(kwargs)
        return generate(*args, **kwargs)

    monkeypatch.setattr(model, "generate", spy)
    wm = WatermarkedDataset(
        model, tokenizer, do_sample=True, num_beam_groups=1, beams_per_group=2, seed=0, **FAST
    )
    out = passages.map(wm, batched=True, batch_size=6)
    check_watermarked(out, passages, tokenizer, own_min=0.45)
    # No hidden top-k after the perturbation, and the perturbation is the last processor.
    config = seen[0]["generation_config"]
    assert config.do_sample and config.top_k == 0 and config.num_return_sequences == 2
    assert isinstance(seen[0]["logits_processor"][-1], WaterfallLogitsProcessor)
    # The seed makes sampling reproducible.
    assert passages.map(wm, batched=True, batch_size=6)["text"] == out["text"]


def test_group_diversity(tiny_model, passages):
    model, tokenizer = tiny_model
    texts = passages["text"][:2]
    ids = np.array(KEYS)

    def candidates(penalty: float) -> list[list[list[int]]]:
        wm = WatermarkedDataset(
            model, tokenizer, diversity_penalty=penalty, beams_per_group=1, max_new_tokens=10
        )
        paraphraser = wm.paraphraser
        return paraphraser.candidate_tokens([paraphraser.prompt_ids(t) for t in texts], texts, ids)

    for row in candidates(0.0):  # no penalty: every group runs the same search
        assert all(c == row[0] for c in row)
    for row in candidates(1e4):  # groups never repeat an earlier group's token at a step
        steps = min(len(c) for c in row) - 2  # the last step of a group is not recorded
        assert steps > 0
        for g in range(1, len(row)):
            for t in range(steps):
                assert all(row[g][t] != row[h][t] for h in range(g))


def test_map_is_cached_by_configuration_not_weights(tiny_model, tmp_path, monkeypatch):
    model, tokenizer = tiny_model
    rows = {"text": ["A short text to keep.", "Another one."], "owner_id": [1, 2]}
    Dataset.from_dict(rows).save_to_disk(tmp_path / "ds")
    dataset = load_from_disk(str(tmp_path / "ds"))  # on disk, so that map results are cached
    calls = []
    generate = model.generate
    monkeypatch.setattr(model, "generate", lambda *a, **k: calls.append(1) or generate(*a, **k))
    config = {
        "num_beam_groups": 1,
        "beams_per_group": 1,
        "max_new_tokens": 4,
        "show_progress": False,
    }

    def run(**changes) -> Dataset:
        calls.clear()
        return dataset.map(WatermarkedDataset(model, tokenizer, **config, **changes), batched=True)

    first = run()
    assert calls
    again = run()  # a new but identical callable: served from the cache
    assert again.cache_files == first.cache_files and not calls
    for changes in ({"kappa": 3.0}, {"watermark_id": 5}):
        changed = run(**changes)
        assert calls and changed.cache_files != first.cache_files

    def fingerprint(**changes) -> str:
        return Hasher.hash(WatermarkedDataset(model, tokenizer, **{**config, **changes}))

    assert (
        len(
            {
                fingerprint(),
                fingerprint(kappa=3.0),
                fingerprint(watermark_id=5),
                fingerprint(watermark_id=6),
            }
        )
        == 4
    )
    with pytest.raises(TypeError, match="id"):
        fingerprint(id=5)  # the old keyword is gone


def test_every_config_field_but_runtime_ones_is_in_the_fingerprint(tiny_model):
    """A field added to WatermarkingConfig reaches the cache fingerprint without anyone
    remembering to list it; a changed field never hits a stale cache."""
    model, tokenizer = tiny_model
    base = WatermarkedDataset(model, tokenizer)
    changed = {
        str: "other",
        int: 3,
        float: 0.75,
        bool: None,
        type(None): 1,
    }
    for spec in dataclasses.fields(WatermarkingConfig):
        value = getattr(base.config, spec.name)
        new = (not value) if isinstance(value, bool) else changed[type(value)]
        if spec.name == "show_progress":
            new = True
        changes = {spec.name: new}
        if spec.name == "scheme":
            changes = {"scheme": "kgw"}
        elif spec.name in SCHEME_SETTINGS["kgw"]:
            changes["scheme"] = "kgw"  # a KGW setting changes only with that scheme
        elif spec.name in SCHEME_SETTINGS["synthid"]:  # only with Synth-ID, which samples
            changes.update(scheme="synthid", do_sample=True)
        elif spec.name in SCHEME_SETTINGS["exp_edit"]:  # only with EXP-edit, which samples
            changes.update(scheme="exp_edit", do_sample=True)
        if spec.name == "sampling_table_size":
            changes[spec.name] = 2**10
        if spec.name == "n_gram":  # None: the scheme's (2)
            changes[spec.name] = 3
        other = WatermarkedDataset(model, tokenizer, **changes)
        same = spec.name in WatermarkingConfig.RUNTIME_FIELDS
        assert (other.fingerprint == base.fingerprint) == same, spec.name


def test_config_object_and_keyword_overrides(tiny_model):
    model, tokenizer = tiny_model
    config = WatermarkingConfig(kappa=3.0, num_beam_groups=2)
    wm = WatermarkedDataset(model, tokenizer, config, beams_per_group=1)
    assert (wm.config.kappa, wm.config.num_beam_groups, wm.config.beams_per_group) == (3.0, 2, 1)
    assert config.beams_per_group == 2  # the caller's config is not changed
    # The old keyword style is the same watermarker.
    old = WatermarkedDataset(model, tokenizer, kappa=3.0, num_beam_groups=2, beams_per_group=1)
    assert old.fingerprint == wm.fingerprint
    # The model's repetition penalty is resolved into the config (and so into the fingerprint).
    assert wm.config.repetition_penalty == model.generation_config.repetition_penalty
    with pytest.raises(TypeError, match=r"Unknown WatermarkingConfig field\(s\) \['kapa'\]"):
        WatermarkedDataset(model, tokenizer, kapa=3.0)
    with pytest.raises(TypeError, match="must be a WatermarkingConfig"):
        WatermarkedDataset(model, tokenizer, {"kappa": 3.0})
    with pytest.raises(dataclasses.FrozenInstanceError):
        wm.config.kappa = 1.0


def test_config_is_a_command_line():
    from transformers import HfArgumentParser

    for spec in dataclasses.fields(WatermarkingConfig):
        assert spec.metadata.get("help"), spec.name
    (config,) = HfArgumentParser(WatermarkingConfig).parse_args_into_dataclasses(
        ["--kappa", "1.5", "--do_sample", "true", "--seed", "4"]
    )
    assert (config.kappa, config.do_sample, config.seed) == (1.5, True, 4)
    with pytest.raises(ValueError, match="`top_p` must be in"):
        WatermarkingConfig(top_p=0.0)


def test_key_is_never_shown(tiny_model, caplog):
    model, tokenizer = tiny_model
    secret = 987_654_321
    wm = WatermarkedDataset(
        model,
        tokenizer,
        watermark_id=secret,
        num_beam_groups=1,
        beams_per_group=1,
        max_new_tokens=4,
    )
    processor = WaterfallLogitsProcessor(tokenizer.vocab_size, [secret, 5])
    with caplog.at_level(logging.DEBUG):
        wm({"text": ["Some text.", None]})
    for shown in (repr(wm), str(wm), repr(processor), caplog.text, wm.fingerprint):
        assert str(secret) not in shown


def test_bad_rows_are_kept_and_counted(tiny_model, caplog):
    model, tokenizer = tiny_model
    wm = WatermarkedDataset(
        model, tokenizer, num_beam_groups=1, beams_per_group=1, max_new_tokens=8
    )
    batch = {
        "text": ["A text about classes and methods.", "", None, "   "],
        "owner_id": [1, 2, 3, 4],
    }
    with caplog.at_level(logging.WARNING):
        out = wm(batch)
    assert out["text"][1:] == ["", None, "   "] and out["text_original"] == batch["text"]
    assert all(math.isnan(s) for s in out["watermark_score"][1:])
    assert wm.num_skipped == 3 and wm.num_watermarked == 1
    assert "3 of 4 rows" in caplog.text


def test_bad_input_raises(tiny_model):
    model, tokenizer = tiny_model
    wm = WatermarkedDataset(model, tokenizer)
    with pytest.raises(ValueError, match="'text' not found"):
        wm({"body": ["x"], "owner_id": [1]})
    with pytest.raises(ValueError, match="'owner_id' not found"):
        wm({"text": ["x"]})
    for bad in (2**32, -1):
        with pytest.raises(ValueError, match="0..2\\*\\*32-1"):
            wm({"text": ["x"], "owner_id": [bad]})
        with pytest.raises(ValueError, match="0..2\\*\\*32-1"):
            WatermarkedDataset(model, tokenizer, watermark_id=bad)
    with pytest.raises(TypeError, match="batched=True"):
        wm({"text": "x", "owner_id": 1})
    with pytest.raises(ValueError, match="already has a column 'text_original'"):
        wm({"text": ["x"], "owner_id": [1], "text_original": ["y"]})
    with pytest.raises(ValueError, match="k_p"):
        WatermarkedDataset(model, tokenizer, k_p=0)
    with pytest.raises(TypeError, match="sentence-transformers"):
        WatermarkedDataset(model, tokenizer, sts_model="all-mpnet-base-v2")
    with pytest.raises(TypeError, match="generate"):
        WatermarkedDataset(tokenizer, tokenizer)


def test_prompt_formats(tiny_model):
    model, tokenizer = tiny_model
    text = "First paragraph.\n\nSecond paragraph."
    chat = tokenizer.decode(WatermarkedDataset(model, tokenizer).paraphraser.prompt_ids(text))
    assert chat.startswith("<s><|system|>Paraphrase") and "<|user|>First paragraph. Second" in chat
    assert chat.endswith(
        "<|assistant|>Here is a paraphrased version of the text while preserving the semantic similarity:\n\n"
    )

    no_system = copy.deepcopy(tokenizer)
    no_system.chat_template = (
        "{% for m in messages %}{% if m['role'] == 'system' %}"
        "{{ raise_exception('System role not supported') }}{% endif %}"
        "{{ '<|' + m['role'] + '|>' + m['content'] }}{% endfor %}{{ '<|assistant|>' }}"
    )
    merged = tokenizer.decode(
        WatermarkedDataset(model, no_system, response_prefix=None).paraphraser.prompt_ids("Hi.")
    )
    assert merged.startswith("<|user|>Paraphrase") and merged.endswith("Hi.<|assistant|>")

    plain = copy.deepcopy(tokenizer)
    plain.chat_template = None
    text = tokenizer.decode(
        WatermarkedDataset(model, plain, prompt="Reword:").paraphraser.prompt_ids("Hi.")
    )
    assert text.startswith("<s>Reword:\n\nHi.\n\nHere is a paraphrased")


def test_sts_model_ranks_and_reports_similarity(tiny_model, passages):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding

    model, tokenizer = tiny_model
    weights = np.random.default_rng(0).normal(size=(len(tokenizer), 16)).astype(np.float32)
    sts = SentenceTransformer(
        modules=[StaticEmbedding(tokenizer, embedding_weights=weights)], device="cpu"
    )
    wm = WatermarkedDataset(model, tokenizer, sts_model=sts, beams_per_group=1, **FAST)
    out = passages.select(range(2)).map(wm, batched=True)
    assert np.all(np.abs(out["watermark_sts"]) <= 1 + 1e-6)
    assert np.mean(out["watermark_score"]) > 0.4


def test_kgw_watermark_verifies_under_the_owner_key_only(tiny_model, passages):
    model, tokenizer = tiny_model
    wm = WatermarkedDataset(model, tokenizer, scheme="kgw", no_repeat_ngram_size=3, **FAST)
    out = passages.map(wm, batched=True, batch_size=6)
    texts, owners = out["text"], out["owner_id"]
    own = verify_texts(texts, owners, tokenizer, scheme="kgw")
    np.testing.assert_allclose(out["watermark_score"], own, atol=1e-9)  # self-check is KGW's
    others = np.mean([verify_texts(texts, key, tokenizer, scheme="kgw") for key in OTHER_KEYS])
    originals = verify_texts(passages["text"], owners, tokenizer, scheme="kgw")
    assert own.mean() > 0.5 and own.mean() - originals.mean() > 0.4
    assert abs(others) < 0.15  # the mean over 20 keys that own nothing
    assert abs(verify_texts(texts, owners, tokenizer).mean()) < 0.25  # not a Waterfall signal


def test_a_setting_of_the_other_scheme_is_refused():
    with pytest.raises(
        ValueError, match="`kappa` is a setting of the waterfall scheme, but scheme='kgw'"
    ):
        WatermarkingConfig(scheme="kgw", kappa=3.0)
    with pytest.raises(ValueError, match="`gamma` is a setting of the kgw scheme"):
        WatermarkingConfig(gamma=0.25)
    with pytest.raises(ValueError, match="`gamma` must be in"):
        WatermarkingConfig(scheme="kgw", gamma=1.5)
    with pytest.raises(ValueError, match="`delta` must be a finite number >= 0"):
        WatermarkingConfig(scheme="kgw", delta=-1.0)
    with pytest.raises(ValueError, match="`scheme` must be one of"):
        WatermarkingConfig(scheme="kirchenbauer")
    # Synth-ID's tournament samples: beam search (the default) with it is refused.
    with pytest.raises(
        ValueError, match=r"scheme='synthid' watermarks by sampling.*do_sample=True"
    ):
        WatermarkingConfig(scheme="synthid")
    with pytest.raises(ValueError, match="`depth` is a setting of the synthid scheme"):
        WatermarkingConfig(depth=4)
    with pytest.raises(ValueError, match="`depth` must be in 1..1024"):
        WatermarkingConfig(scheme="synthid", do_sample=True, depth=0)
    assert WatermarkingConfig(scheme="kgw", gamma=0.25).writer_settings() == {"delta": 2.0}
    synthid = WatermarkingConfig(scheme="synthid", do_sample=True, depth=4)
    assert synthid.writer_settings() == {"context_history_size": 1024}
    assert synthid.watermark_scheme() == SynthIDScheme(depth=4)  # n_gram: Synth-ID's 5
