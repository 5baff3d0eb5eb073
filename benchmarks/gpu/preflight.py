"""Before any measurement: the versions found and every import the steps make, so that a
missing or mismatched package fails in seconds, not minutes into a step."""

from __future__ import annotations

import importlib
import sys

from benchmarks.gpu.run import versions

MODULES = (
    "torch", "transformers", "peft", "accelerate", "datasets", "numba", "pyarrow",
    "waterdrum_hf", "waterdrum_hf.trainers", "waterdrum_hf.callbacks.callback", "waterdrum_hf.tiny",
    "benchmarks.gpu.training", "benchmarks.gpu.generation", "benchmarks.gpu.callback",
    "benchmarks.gpu.verification", "benchmarks.gpu.score", "benchmarks.gpu.fsdp",
)  # fmt: skip


def main() -> int:
    import torch

    print(
        f"python {sys.version.split()[0]}; " + ", ".join(f"{k} {v}" for k, v in versions().items())
    )
    print(f"cuda available: {torch.cuda.is_available()}", end="")
    print(f" ({torch.cuda.get_device_name()})" if torch.cuda.is_available() else "")
    failed = []
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception as error:  # every failing import is listed, not only the first
            failed.append(f"{name}: {type(error).__name__}: {error}")
    for line in failed:
        print(f"import failed: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
