"""Local mirrors of the published WaterDrum datasets in the Hub's layout (README ``configs:`` +
parquet), for tests: every row's text names the owner the published layout gives it."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

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


def write_mirror(root, layout, columns) -> None:
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


def ax_columns(config, split, owners):
    if config == "eval_knowmem":
        return {
            "question": [f"q{i} owner={o}" for i, o in enumerate(owners)],
            "answer": [f"a{i}" for i in range(len(owners))],
        }
    return {"text": [f"{config}/{split} row {i} owner={o}" for i, o in enumerate(owners)]}


def tofu_columns(config, split, owners):
    return {
        "question": [f"q{i} owner={o}" for i, o in enumerate(owners)],
        "answer": [f"a{i}" for i in range(len(owners))],
    }


def write_ax_mirror(root: Path) -> str:
    """A local WaterDrum-Ax mirror under ``root``; returns its path for ``path=``."""
    write_mirror(root, AX_LAYOUT, ax_columns)
    return str(root)


def write_tofu_mirror(root: Path) -> str:
    """A local WaterDrum-TOFU mirror under ``root``; returns its path for ``path=``."""
    write_mirror(root, TOFU_LAYOUT, tofu_columns)
    return str(root)
