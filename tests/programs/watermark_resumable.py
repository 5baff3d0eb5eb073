"""Watermark a dataset saved on disk with `resumable_map`, shard by shard; optionally die.

    python watermark_resumable.py DATASET OUTPUT.json SETTINGS_JSON SHARD_SIZE [--die-after-shards K]

With ``--die-after-shards K`` the process kills itself (SIGKILL: no clean-up, no finally) at
the first generation after K shard results are cached next to the dataset. Otherwise it writes
the watermarked texts, scores and how many rows it computed itself to OUTPUT.json.
"""

import argparse
import json
import os
import signal
from pathlib import Path

import torch
from datasets import load_from_disk

from waterdrum_hf import WatermarkedDataset, resumable_map, tiny

parser = argparse.ArgumentParser()
parser.add_argument("dataset")
parser.add_argument("output")
parser.add_argument("settings", type=json.loads, help="WatermarkingConfig fields")
parser.add_argument("shard_size", type=int)
parser.add_argument("--die-after-shards", type=int)
args = parser.parse_args()

torch.set_num_threads(1)  # as the tests do: faster on a busy machine
model, tokenizer = tiny.load(show_progress=False)
if args.die_after_shards is not None:
    generate = model.generate

    def generate_or_die(*positional, **keywords):
        if len(list(Path(args.dataset).glob("cache-*.arrow"))) >= args.die_after_shards:
            os.kill(os.getpid(), signal.SIGKILL)
        return generate(*positional, **keywords)

    model.generate = generate_or_die  # the fingerprint reads the weights' identity, not this

watermarker = WatermarkedDataset(model, tokenizer, **args.settings)
dataset = load_from_disk(args.dataset)
result = resumable_map(dataset, watermarker, shard_size=args.shard_size, batched=True)
with open(args.output, "w") as handle:
    json.dump(
        {
            "text": list(result["text"]),
            "watermark_score": list(result["watermark_score"]),
            "computed_rows": watermarker.num_watermarked,
        },
        handle,
    )
