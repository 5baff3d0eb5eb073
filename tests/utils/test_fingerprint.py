"""The writers' cache settings: the scheme's settings, the vocabulary and the ids only as their
slow one-way hashes, whichever scheme writes."""

from __future__ import annotations

import pytest

from waterdrum_hf.schemes import EXPEditScheme, ITSWatermark, SynthIDScheme, UnigramWatermark
from waterdrum_hf.utils.fingerprint import key_digest, writer_settings

KEYS = [123456789, 987654321]


def test_writer_settings_are_the_schemes_the_vocabulary_and_the_hashed_ids():
    settings = writer_settings({"scheme": "x", "gamma": 0.5}, 50, KEYS)
    assert settings == {
        "scheme": "x", "gamma": 0.5, "vocab_size": 50, "keys": [key_digest(k) for k in KEYS],
    }  # fmt: skip
    assert not any(str(k) in repr(settings) for k in KEYS)
    assert key_digest(KEYS[0]) != key_digest(KEYS[1])


@pytest.mark.parametrize(
    ("processor", "scheme", "ids"),
    [
        (lambda: EXPEditScheme(key_length=8).logits_processor(50, KEYS), EXPEditScheme(key_length=8), KEYS),
        (lambda: UnigramWatermark().logits_processor(50, KEYS), UnigramWatermark(), KEYS),
        (lambda: ITSWatermark(key_length=8).logits_processor(50, KEYS[0]), ITSWatermark(key_length=8), KEYS[:1]),
    ],
    ids=["exp_edit", "unigram", "its"],
)  # fmt: skip
def test_each_writer_records_its_scheme_vocabulary_and_hashed_ids(processor, scheme, ids):
    assert processor().settings() == writer_settings(scheme.settings(), 50, ids)


def test_synthid_adds_its_context_history_to_the_writer_settings():
    scheme = SynthIDScheme(depth=2)
    settings = scheme.logits_processor(50, KEYS).settings()
    assert settings == {
        **writer_settings(scheme.settings(), 50, KEYS),
        "context_history_size": settings["context_history_size"],
    }
    assert isinstance(settings["context_history_size"], int)
