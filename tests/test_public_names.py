"""The names of 0.1 renamed in 0.2 still work for one release, each use warning with the new
name, and are not advertised (``__all__``, ``dir``)."""

from __future__ import annotations

import pytest

import waterdrum_hf
from waterdrum_hf.callbacks.plan import CallbackPlan
from waterdrum_hf.scoring.compute import waterdrum_metrics

RENAMED = [
    ("compute_waterdrum", "waterdrum_metrics", waterdrum_metrics),
    ("EvaluationPlan", "CallbackPlan", CallbackPlan),
]


@pytest.mark.parametrize(("old", "new", "value"), RENAMED)
def test_an_old_name_gives_the_new_object_and_warns_at_every_use(old, new, value):
    for _ in range(2):  # not cached: the second use warns too
        with pytest.warns(
            FutureWarning, match=rf"`waterdrum_hf\.{old}` is renamed `waterdrum_hf\.{new}`.*0\.3"
        ):
            assert getattr(waterdrum_hf, old) is value
    assert getattr(waterdrum_hf, new) is value
    assert old not in waterdrum_hf.__all__ and old not in dir(waterdrum_hf)
    assert new in waterdrum_hf.__all__


def test_importing_an_old_name_warns_at_the_import():
    with pytest.warns(FutureWarning, match="renamed `waterdrum_hf.waterdrum_metrics`") as caught:
        from waterdrum_hf import compute_waterdrum
    assert compute_waterdrum is waterdrum_metrics
    assert caught[0].filename == __file__  # attributed to the importing line, not the library


def test_an_unknown_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'compute_waterdrums'"):
        waterdrum_hf.compute_waterdrums  # noqa: B018
