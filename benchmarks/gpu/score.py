"""Step ``score``: one ``waterdrum score`` end to end at the paper's shape, a LoRA adapter of it.

A random-weight Llama-2-7B base in bf16 and its word tokenizer are saved to disk, a LoRA r 8
adapter (random, non-zero weights, so that it changes the base's outputs) is saved beside it,
and ``waterdrum score --model-name-or-path ADAPTER`` runs as a user runs it: it loads the base and the adapter,
queries every row with its first 50 tokens, samples 10 completions of 200 new tokens each and
verifies them with the owners' keys. The command's seconds are split into loading the model,
sampling, and the rest (reading the data, verification, the report), which is what a model of the
paper's protocol costs once its generation is scaled up (docs/guides/gpu.md does the arithmetic).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.gpu.common import (
    Budget,
    Setup,
    build_model,
    release,
    secret_ids,
    timed,
    word_texts,
    word_tokenizer,
)


def save_adapter(setup: Setup, folder: Path) -> tuple[Path, Path]:
    """The base (weights and tokenizer) in ``folder/base``, its LoRA adapter in
    ``folder/adapter`` (``base_model_name_or_path`` names the base folder)."""
    from peft import LoraConfig, get_peft_model

    base, adapter = folder / "base", folder / "adapter"
    model = build_model(setup)
    model.save_pretrained(base)
    word_tokenizer(setup.shape.vocab_size).save_pretrained(base)
    model.config.name_or_path = str(base)
    lora = LoraConfig(
        r=8, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM",
        init_lora_weights=False,  # random B too: the adapter changes what the model samples
    )  # fmt: skip
    peft_model = get_peft_model(model, lora)
    peft_model.peft_config["default"].base_model_name_or_path = str(base)
    peft_model.save_pretrained(adapter)
    del model, peft_model
    release(setup.device)
    return base, adapter


def write_rows(setup: Setup, path: Path, owners: list[int], texts_per_owner: int) -> None:
    """``texts_per_owner`` texts of 100 words (200 tokens: the query takes its first 50) for
    each owner, as the jsonl rows ``waterdrum score --dataset-name`` reads."""
    texts = word_texts(setup.shape.vocab_size, len(owners) * texts_per_owner, 100, seed=5)
    with path.open("w") as file:
        for i, text in enumerate(texts):
            file.write(json.dumps({"text": text, "owner_id": owners[i // texts_per_owner]}) + "\n")


@contextmanager
def stage_seconds(module: Any, names: tuple[str, ...]) -> Iterator[dict[str, float]]:
    """Seconds spent in each of ``module``'s functions ``names`` while the block runs (the
    command's own stages, timed from outside it)."""
    seconds = {name: 0.0 for name in names}
    originals = {name: getattr(module, name) for name in names}

    def timing(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed_call(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                seconds[name] += time.perf_counter() - start

        return timed_call

    for name, function in originals.items():
        setattr(module, name, timing(name, function))
    try:
        yield seconds
    finally:
        for name, function in originals.items():
            setattr(module, name, function)


def run(setup: Setup, budget: Budget) -> dict[str, Any]:
    import waterdrum_hf.scripts.score as score
    from waterdrum_hf.scripts import main as waterdrum

    sizes = setup.sizes
    owners = secret_ids(sizes.score_owners, seed=7)
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        with timed(setup.device) as saved:
            base, adapter = save_adapter(setup, folder)
        write_rows(setup, folder / "rows.jsonl", owners, sizes.score_texts_per_owner)
        (folder / "forget.txt").write_text("".join(f"{o}\n" for o in owners[: len(owners) // 2]))
        argv = [
            "score", "--model-name-or-path", str(adapter), "--dataset-name", str(folder / "rows.jsonl"),
            "--watermark_tokenizer", str(base), "--forget_ids_file", str(folder / "forget.txt"),
            "--num_samples", str(sizes.num_samples), "--max_new_tokens", str(sizes.new_tokens),
            "--prefix_tokens", str(sizes.prompt_tokens), "--output-dir", str(folder / "report"),
        ]  # fmt: skip
        with stage_seconds(score, ("load_model", "sample")) as stages, timed(setup.device) as t:
            code = waterdrum(argv)
        report = json.loads((folder / "report" / "report.json").read_text())
    model = report["models"]["model"]
    queries = len(owners) * sizes.score_texts_per_owner
    tokens = queries * sizes.num_samples * sizes.new_tokens  # random weights rarely stop early
    row = {
        "exit_code": code,
        "queries": queries,
        "sequences": queries * sizes.num_samples,
        "new_tokens": tokens,
        "save_base_and_adapter_s": saved["seconds"],
        "command_s": t["seconds"],
        "load_model_s": stages["load_model"],
        "sample_s": stages["sample"],
        "rest_s": t["seconds"] - stages["load_model"] - stages["sample"],
        "sample_tokens_per_s": tokens / stages["sample"],
        "forget": model.get("forget"),
        "retain": model.get("retain"),
    }
    return {
        "rows": [row],
        "notes": [
            f"`waterdrum score --model-name-or-path ADAPTER` (LoRA r 8 on random {setup.shape.name} weights "
            f"in {setup.dtype}, loaded from disk), {len(owners)} owners x "
            f"{sizes.score_texts_per_owner} texts, {sizes.prompt_tokens}-token queries, "
            f"{sizes.num_samples} samples of {sizes.new_tokens} new tokens, batch auto",
            "new_tokens counts every sample at full length (random weights rarely sample EOS); "
            "rest_s: reading the data, verification and the report",
        ],
    }
