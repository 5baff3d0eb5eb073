"""AuditConfig: each setting refused outside its range with the right exception, the
attacks written as the attacks module writes them, and what the audits derive from it (the
perturbed models' names, the sampling settings, the attacks' seed)."""

from __future__ import annotations

import pytest

from waterdrum_hf import attacks
from waterdrum_hf.audits import AUDITS, QUANTIZATION_BITS, AuditConfig
from waterdrum_hf.generation.sampling import SamplingConfig


def test_the_defaults_run_both_audits_at_both_widths():
    config = AuditConfig()
    assert config.audits == AUDITS == ("relearning", "quantization")
    assert config.quantization_bits == QUANTIZATION_BITS == (8, 4)
    assert config.attacks == () and config.attack_seed is None and config.seed == 0


@pytest.mark.parametrize(
    ("field", "valid"),
    [
        ("relearn_steps", 1),
        ("relearn_batch_size", 1),
        ("num_samples", 1),
        ("max_new_tokens", 1),
        ("batch_size", 1),
    ],
)
def test_each_count_must_be_a_positive_integer(field, valid):
    assert getattr(AuditConfig(**{field: valid}), field) == valid  # 1 is the smallest allowed
    with pytest.raises(ValueError, match=f"`{field}` must be >= 1, got 0"):
        AuditConfig(**{field: 0})
    with pytest.raises(TypeError, match=f"`{field}` must be an integer, got float"):
        AuditConfig(**{field: 2.0})


def test_the_seeds_may_be_zero_but_not_negative():
    assert AuditConfig(seed=0, attack_seed=0).text_attack_seed() == 0
    for field in ("seed", "attack_seed"):
        with pytest.raises(ValueError, match=f"`{field}` must be >= 0, got -1"):
            AuditConfig(**{field: -1})
        with pytest.raises(TypeError, match=f"`{field}` must be an integer, got bool"):
            AuditConfig(**{field: True})
    # No attack seed: the attacks take the audits' seed.
    assert AuditConfig(seed=7).text_attack_seed() == 7
    assert AuditConfig(seed=7, attack_seed=3).text_attack_seed() == 3


def test_the_relearning_share_is_in_the_half_open_unit_interval():
    for share in (1e-9, 0.5, 1.0):
        assert AuditConfig(relearn_share=share).relearn_share == share
    for share in (0.0, -0.5, 1.000001, 2.0):
        with pytest.raises(ValueError, match=r"`relearn_share` must be in \(0, 1\]"):
            AuditConfig(relearn_share=share)


def test_the_relearning_rate_must_be_positive():
    assert AuditConfig(relearn_learning_rate=1e-9).relearn_learning_rate == 1e-9
    assert AuditConfig(relearn_learning_rate=2.5).relearn_learning_rate == 2.5  # above 1 too
    for rate in (0.0, -1e-3):
        with pytest.raises(ValueError, match="`relearn_learning_rate` must be > 0"):
            AuditConfig(relearn_learning_rate=rate)


def test_audits_are_known_names_and_quantization_needs_a_known_width():
    with pytest.raises(
        ValueError, match="unknown audit 'pruning'; known: relearning, quantization"
    ):
        AuditConfig(audits=("relearning", "pruning"))
    with pytest.raises(ValueError, match="`quantization_bits` must name 8 and/or 4"):
        AuditConfig(audits=("quantization",), quantization_bits=())
    with pytest.raises(ValueError, match="`quantization_bits` may hold 8 and 4, got 2"):
        AuditConfig(audits=("quantization",), quantization_bits=(8, 2))
    # The widths are only checked when quantization is asked for.
    assert AuditConfig(audits=("relearning",), quantization_bits=(2,)).audit_names() == [
        "relearned"
    ]
    with pytest.raises(ValueError, match="`audits` must name at least one of relearning, quant"):
        AuditConfig(audits=(), attacks=())


def test_the_perturbed_models_are_named_in_the_order_asked():
    assert AuditConfig().audit_names() == ["relearned", "int8", "int4"]
    assert AuditConfig(audits=("relearning",)).audit_names() == ["relearned"]
    assert AuditConfig(audits=("quantization",), quantization_bits=(4,)).audit_names() == ["int4"]
    both = AuditConfig(audits=("quantization", "relearning"), quantization_bits=(4, 8))
    assert both.audit_names() == ["relearned", "int4", "int8"]
    # Text attacks are audits of their own, not perturbed models.
    assert AuditConfig(audits=(), attacks=("deletion:0.2",)).audit_names() == []


def test_sampling_takes_the_audits_settings():
    config = AuditConfig(num_samples=3, max_new_tokens=17, batch_size=5, seed=11)
    expected = SamplingConfig(num_samples=3, max_new_tokens=17, batch_size=5, seed=11)
    assert config.sampling_config() == expected


def test_attacks_are_written_as_the_attacks_module_writes_them():
    given = ("deletion: 0.20", "truncation:0.5")
    config = AuditConfig(audits=(), attacks=list(given))
    assert config.attacks == tuple(attacks.spec(*attacks.parse(s)) for s in given)
    assert config.attacks == ("deletion:0.2", "truncation:0.5")
    # An attack only once, whichever spelling comes second.
    with pytest.raises(ValueError, match="the text attack 'truncation:0.5' is given twice"):
        AuditConfig(attacks=("truncation:0.5", "deletion:0.2", "truncation:0.50"))
    with pytest.raises(TypeError, match="`attacks` must be a list of NAME:STRENGTH texts"):
        AuditConfig(attacks="deletion:0.2")
