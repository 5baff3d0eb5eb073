"""One model trained on watermarked data, scored through each engine: the quick demo's original
model sampled by transformers and by a ``vllm serve`` of its
folder (the ``openai`` engine). Transformers draws other samples from the same distribution,
so its forget and retain values agree with the server's within the intervals over queries.
vLLM in this process draws the server's samples from the same weights and seed
(``test_vllm_engine.py::test_seeded_samples_equal_a_servers_of_the_same_weights``), so its
values are the server's; it is not started a second time here (CI's time). Runs where vLLM is
installed beside this library (``bash dev.sh vllm``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.generation.vllm_support import VLLM_MARKS
from waterdrum_hf.generation.vllm_process import vllm_server

pytestmark = VLLM_MARKS
if not os.environ.get("WATERDRUM_VLLM_PYTHON"):  # before the module's fixture trains anything
    pytest.skip(
        "WATERDRUM_VLLM_PYTHON is not set (bash dev.sh vllm sets it)", allow_module_level=True
    )

SERVE = ("--dtype", "float32", "--enforce-eager", "--max-model-len", "1024",
         "--max-num-batched-tokens", "65536")  # fmt: skip
"""vLLM's CPU build on the built-in model: float32 as transformers runs it, no graph capture,
and every prompt of a run prefilled at once (its CPU build fails a seeded request whose prefill
is chunked: docs/guides/servers.md)."""


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, list[str]]:
    """The quick demo's original model (its owners' passages watermarked, the built-in model
    fine-tuned on them, as ``waterdrum demo --quick`` does, without the rest of the demo), its
    folder, and the ``waterdrum score`` options that score it on the demo's owners: 10 samples
    of 64 tokens a query, 95 % intervals over queries."""
    from waterdrum_hf import tiny
    from waterdrum_hf.experiments.demo_config import DemoConfig
    from waterdrum_hf.experiments.demo_data import watermark_corpus
    from waterdrum_hf.experiments.pipeline import CachedPipeline

    out = tmp_path_factory.mktemp("demo")
    config = DemoConfig.quick(output_dir=str(out), show_progress=False)
    model, tokenizer = tiny.load()
    pipeline = CachedPipeline(model, tokenizer, out / "cache", show_progress=False)
    data = watermark_corpus(config, pipeline)
    original = pipeline.finetune(
        "original", data.texts, epochs=config.epochs, training=config.finetuning()
    )
    rows = out / "watermarked.jsonl"
    rows.write_text("".join(
        json.dumps({"text": text, "owner_id": key}) + "\n"
        for text, key in zip(data.texts, data.references, strict=True)
    ))  # fmt: skip
    (out / "forget_ids.txt").write_text("".join(f"{key}\n" for key in data.forget_ids))
    options = [
        "--dataset-name", str(rows), "--watermark-tokenizer", "tiny",
        "--forget-ids-file", str(out / "forget_ids.txt"), "--prefix-tokens", "24",
        "--num-samples", "10", "--max-new-tokens", "64", "--seed", "0", "--null", "none",
        "--confidence", "0.95", "--bootstrap-seed", "0",
    ]  # fmt: skip
    return Path(original.path), options


def score(arguments: list[str], out: Path) -> dict[str, float]:
    """``waterdrum score`` with ``arguments`` into ``out``: the one model's flat values."""
    from waterdrum_hf.scripts import main

    assert main(["score", *arguments, "--output-dir", str(out)]) == 0
    [values] = json.loads((out / "report.json").read_text())["models"].values()
    return values


def test_forget_and_retain_agree_across_engines_within_their_intervals(demo, tmp_path):
    model, options = demo
    local = score(["--model-name-or-path", str(model), *options], tmp_path / "t")
    with vllm_server(
        os.environ["WATERDRUM_VLLM_PYTHON"], model, served_name="original", options=SERVE,
        environment={"VLLM_CPU_KVCACHE_SPACE": "1"}, log=tmp_path / "server.log",
    ) as url:  # fmt: skip
        served = score([
            "--engine", "openai", "--base-url", url, "--model-name-or-path", "original",
            "--tokenizer", str(model), *options,
        ], tmp_path / "o")  # fmt: skip
    for name in ("forget", "retain"):
        low = max(local[f"{name}_ci_low"], served[f"{name}_ci_low"])
        high = min(local[f"{name}_ci_high"], served[f"{name}_ci_high"])
        assert low <= high, (name, local, served)  # the intervals overlap
    assert served["num_queries"] == local["num_queries"] > 0
    # The model learned its owners' watermarks, whichever engine samples it.
    assert all(v["forget"] > 0.3 and v["retain"] > 0.3 for v in (local, served)), (local, served)
