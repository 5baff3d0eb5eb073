"""The benchmark loaders on a local mirror in the Hub's layout (README ``configs:`` + parquet).

The mirror writes, into every row's text, the owner that the published layout gives it; the
loaders must recover that owner from the row's position alone, through the same
``datasets.load_dataset(path, config, split=...)`` call a Hub user makes.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from waterdrum_hf.data import load_waterdrum_ax, load_waterdrum_tofu

PER_OWNER = 2  # rows per Ax owner in the mirror (400 on the Hub)
TOFU_ROWS = 100  # rows of TOFU's full split in the mirror (4000 on the Hub)


def _ax_layout() -> dict[str, dict[str, list[int]]]:
    """Owner of every row of every Ax split, written out from the documented layout."""
    blocks = lambda owners: [o for o in owners for _ in range(PER_OWNER)]  # noqa: E731
    everyone = list(range(20))
    layout = {}
    for n in (1, 3, 5):
        forget = list(range(20 - n, 20))
        splits = {
            "full": blocks(everyone),
            "retain": blocks(range(20 - n)),
            "forget": blocks(forget),
            "exact_duplicate": blocks([(f + 1) % 20 for f in forget]),
            "semantic_duplicate": blocks([(f + 1) % 20 for f in forget]),
        }
        layout[f"forget_{n:02d}"] = splits
        layout[f"unwatermarked_forget_{n:02d}"] = splits
    next_owner = [(f + 1) % 20 for f in everyone]
    layout["full"] = {
        "watermarked": blocks(everyone),
        "unwatermarked": blocks(everyone),
        "watermarked_duplicate": blocks(next_owner),
        "unwatermarked_duplicate": blocks(next_owner),
        "watermarked_paraphrased": blocks(next_owner),
        "unwatermarked_paraphrased": blocks(next_owner),
    }
    layout["test"] = {"full": blocks(everyone)}
    layout["threat_model"] = {
        "watermarked_intraclass": [19] * 4,
        "unwatermarked_intraclass": [19] * 4,
    }
    layout["eval_knowmem"] = {"train": blocks(everyone)}
    return layout


def _tofu_layout() -> dict[str, dict[str, list[int]]]:
    layout = {}
    for percent in (1, 5, 10):
        forget = TOFU_ROWS * percent // 100
        splits = {
            "full": [0] * (TOFU_ROWS - forget) + [1] * forget,
            "retain": [0] * (TOFU_ROWS - forget),
            "forget": [1] * forget,
        }
        if percent == 10:
            splits["exact_duplicate"] = [0] * forget
            splits["semantic_duplicate"] = [0] * forget
        layout[f"forget_{percent:02d}"] = splits
        layout[f"unwatermarked_forget_{percent:02d}"] = splits
    return layout


AX_LAYOUT = _ax_layout()
TOFU_LAYOUT = _tofu_layout()


def _write_mirror(root, layout, columns) -> None:
    """Write ``root/README.md`` (``configs:`` YAML) and one parquet file per config/split."""
    yaml = ["---", "configs:"]
    for config, splits in layout.items():
        yaml += [f"- config_name: {config}", "  data_files:"]
        for split, owners in splits.items():
            folder = root / config
            folder.mkdir(parents=True, exist_ok=True)
            table = pa.table(columns(config, split, owners))
            pq.write_table(table, folder / f"{split}-00000-of-00001.parquet")
            yaml += [f"  - split: {split}", f"    path: {config}/{split}-*.parquet"]
    (root / "README.md").write_text("\n".join([*yaml, "---", "", "A local mirror.", ""]))


def _ax_columns(config, split, owners):
    if config == "eval_knowmem":
        return {
            "question": [f"q{i} owner={o}" for i, o in enumerate(owners)],
            "answer": [f"a{i}" for i in range(len(owners))],
        }
    return {"text": [f"{config}/{split} row {i} owner={o}" for i, o in enumerate(owners)]}


def _tofu_columns(config, split, owners):
    return {
        "question": [f"q{i} owner={o}" for i, o in enumerate(owners)],
        "answer": [f"a{i}" for i in range(len(owners))],
    }


@pytest.fixture(scope="module")
def ax_path(tmp_path_factory):
    root = tmp_path_factory.mktemp("WaterDrum-Ax")
    _write_mirror(root, AX_LAYOUT, _ax_columns)
    return str(root)


@pytest.fixture(scope="module")
def tofu_path(tmp_path_factory):
    root = tmp_path_factory.mktemp("WaterDrum-TOFU")
    _write_mirror(root, TOFU_LAYOUT, _tofu_columns)
    return str(root)


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
    _write_mirror(tmp_path, layout, lambda c, s, o: {"text": ["a", "b"], "owner_id": [7, 7]})
    with pytest.warns(UserWarning, match="differs from the published layout in 2 of 2 rows"):
        dataset = load_waterdrum_ax("forget_01", "forget", path=str(tmp_path))
    assert list(dataset["owner_id"]) == [7, 7]


def test_a_missing_or_non_string_text_column_is_named(tmp_path):
    _write_mirror(tmp_path / "a", {"forget_01": {"forget": [19]}}, lambda c, s, o: {"body": ["x"]})
    with pytest.raises(ValueError, match="forget_01/forget has no 'text' column"):
        load_waterdrum_ax("forget_01", "forget", path=str(tmp_path / "a"))
    _write_mirror(
        tmp_path / "b",
        {"forget_01": {"forget": [1]}},
        lambda c, s, o: {"question": [1], "answer": ["a"]},
    )
    with pytest.raises(TypeError, match="column 'question' must hold strings, has int64"):
        load_waterdrum_tofu("forget_01", "forget", path=str(tmp_path / "b"))


def test_tofu_tolerates_answer_split(tmp_path):
    columns = lambda c, s, o: {"question": ["q"], "answer_split": ["a"]}  # noqa: E731
    _write_mirror(tmp_path, {"forget_10": {"forget": [1]}}, columns)
    assert list(load_waterdrum_tofu("forget_10", "forget", path=str(tmp_path))["owner_id"]) == [1]


def test_a_layout_that_is_not_in_owner_blocks_is_refused(tmp_path):
    _write_mirror(tmp_path, {"forget_03": {"forget": [0] * 4}}, _ax_columns)
    with pytest.raises(ValueError, match="expected 3 equal blocks of rows .* got 4 rows"):
        load_waterdrum_ax("forget_03", "forget", path=str(tmp_path))
