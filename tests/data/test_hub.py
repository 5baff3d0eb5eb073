"""The benchmark loaders on a local mirror in the Hub's layout (README ``configs:`` + parquet).

The mirror writes, into every row's text, the owner that the published layout gives it; the
loaders must recover that owner from the row's position alone, through the same
``datasets.load_dataset(path, config, split=...)`` call a Hub user makes.
"""

from __future__ import annotations

import pytest
from hub_mirrors import (
    AX_LAYOUT,
    TOFU_LAYOUT,
    TOFU_ROWS,
    ax_columns,
    write_ax_mirror,
    write_mirror,
    write_tofu_mirror,
)

from waterdrum_hf.data import load_waterdrum_ax, load_waterdrum_tofu


@pytest.fixture(scope="module")
def ax_path(tmp_path_factory):
    return write_ax_mirror(tmp_path_factory.mktemp("WaterDrum-Ax"))


@pytest.fixture(scope="module")
def tofu_path(tmp_path_factory):
    return write_tofu_mirror(tmp_path_factory.mktemp("WaterDrum-TOFU"))


def _written_owner(row: dict) -> int:
    return int((row.get("text") or row["question"]).rsplit("owner=", 1)[1])


@pytest.mark.parametrize(
    ("config", "split"), [(c, s) for c, splits in AX_LAYOUT.items() for s in splits]
)
def test_ax_owner_ids_follow_the_published_layout(ax_path, config, split):
    dataset = load_waterdrum_ax(config, split, path=ax_path)
    assert dataset.num_rows == len(AX_LAYOUT[config][split])
    assert dataset.features["owner_id"].dtype == "int64"
    assert list(dataset["owner_id"]) == [_written_owner(row) for row in dataset]


@pytest.mark.parametrize(
    ("config", "split"), [(c, s) for c, splits in TOFU_LAYOUT.items() for s in splits]
)
def test_tofu_owner_ids_follow_the_published_layout(tofu_path, config, split):
    dataset = load_waterdrum_tofu(config, split, path=tofu_path)
    assert dataset.column_names == ["question", "answer", "owner_id"]
    assert list(dataset["owner_id"]) == [_written_owner(row) for row in dataset]


def test_defaults_are_the_documented_ones(ax_path, tofu_path):
    ax = load_waterdrum_ax(path=ax_path)
    tofu = load_waterdrum_tofu(path=tofu_path)
    assert ax[0]["text"].startswith("forget_01/full ")
    assert sorted(set(ax["owner_id"])) == list(range(20))
    assert tofu.num_rows == TOFU_ROWS and sum(tofu["owner_id"]) == TOFU_ROWS // 10


@pytest.mark.parametrize(
    ("loader", "kwargs", "match"),
    [
        (load_waterdrum_ax, {"config": "forget_02"}, r"valid configs: \[.*'forget_03'"),
        (
            load_waterdrum_ax,
            {"config": "full", "split": "full"},
            r"valid splits: \[.*'watermarked'",
        ),
        (load_waterdrum_tofu, {"config": "forget_01", "split": "exact_duplicate"}, r"valid splits"),
        (load_waterdrum_tofu, {"config": "forget_03"}, r"valid configs: \[.*'forget_10'"),
        (load_waterdrum_ax, {"split": "full[:10]"}, r"slice the returned dataset"),
    ],
)
def test_unknown_config_or_split_lists_the_valid_ones(loader, kwargs, match, tmp_path):
    with pytest.raises(ValueError, match=match):
        loader(path=str(tmp_path), **kwargs)


def test_existing_owner_column_is_kept_with_a_warning(tmp_path):
    layout = {"forget_01": {"forget": [19, 19]}}
    write_mirror(tmp_path, layout, lambda c, s, o: {"text": ["a", "b"], "owner_id": [7, 7]})
    with pytest.warns(UserWarning, match="differs from the published layout in 2 of 2 rows"):
        dataset = load_waterdrum_ax("forget_01", "forget", path=str(tmp_path))
    assert list(dataset["owner_id"]) == [7, 7]


def test_a_missing_or_non_string_text_column_is_named(tmp_path):
    write_mirror(tmp_path / "a", {"forget_01": {"forget": [19]}}, lambda c, s, o: {"body": ["x"]})
    with pytest.raises(ValueError, match="forget_01/forget has no 'text' column"):
        load_waterdrum_ax("forget_01", "forget", path=str(tmp_path / "a"))
    write_mirror(
        tmp_path / "b",
        {"forget_01": {"forget": [1]}},
        lambda c, s, o: {"question": [1], "answer": ["a"]},
    )
    with pytest.raises(TypeError, match="column 'question' must hold strings, has int64"):
        load_waterdrum_tofu("forget_01", "forget", path=str(tmp_path / "b"))


def test_tofu_tolerates_answer_split(tmp_path):
    columns = lambda c, s, o: {"question": ["q"], "answer_split": ["a"]}  # noqa: E731
    write_mirror(tmp_path, {"forget_10": {"forget": [1]}}, columns)
    assert list(load_waterdrum_tofu("forget_10", "forget", path=str(tmp_path))["owner_id"]) == [1]


def test_a_layout_that_is_not_in_owner_blocks_is_refused(tmp_path):
    write_mirror(tmp_path, {"forget_03": {"forget": [0] * 4}}, ax_columns)
    with pytest.raises(ValueError, match="expected 3 equal blocks of rows .* got 4 rows"):
        load_waterdrum_ax("forget_03", "forget", path=str(tmp_path))
