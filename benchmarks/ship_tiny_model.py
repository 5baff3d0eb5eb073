"""Rebuild the shipped tiny model, ``waterdrum_hf/tiny_model/``, and record its ``build.json``.

The default build ships with the package so that every machine loads the same weights (built
on the spot they differ by processor). Run this after a change to the recipe (bump
``tiny.VERSION``); it builds under ``tiny.BUILD_KERNELS`` in a child process (about a minute
on one CPU thread), so the result does not depend on which Intel processor with AVX2 runs
it (MKL honours its pinned branch on Intel processors only; elsewhere the build refuses):

    python benchmarks/ship_tiny_model.py
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from transformers import AutoModelForCausalLM

from waterdrum_hf import tiny


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        built = tiny.build_reproducibly(Path(scratch) / "tiny", show_progress=True)
        model = AutoModelForCausalLM.from_pretrained(built)
        info = {"digest": tiny.weights_digest(model), "kernels": tiny.BUILD_KERNELS}
        info.update(tiny.build_context())
        shutil.rmtree(tiny.SHIPPED, ignore_errors=True)
        shutil.copytree(built, tiny.SHIPPED)
    (tiny.SHIPPED / "build.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    print(f"{tiny.SHIPPED}: weights {info['digest'][:16]}...")


if __name__ == "__main__":
    main()
