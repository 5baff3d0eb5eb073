"""The GPU measurements (``benchmarks/gpu``) in their smoke mode on the CPU, and what only a GPU
can show (skipped without CUDA).

The smoke run is the suite a lent GPU will run, at a tiny shape: every step must finish and
report finite, positive numbers, and the things that break on a GPU show here already: the
losses and log-probabilities of KL and NPO are float32 while the model runs in bf16, the
reference model sits on the policy's device, the watermark processor's output follows the
scores' device and dtype ("meta" scores), and a WaterDrumCallback evaluation gives back the
tensors it made.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def gpu(module: str) -> Any:
    """``benchmarks.gpu.<module>`` (the repository root is not on ``sys.path`` under a bare
    ``pytest``)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module(f"benchmarks.gpu.{module}")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    out = tmp_path_factory.mktemp("gpu-smoke")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.gpu", "--smoke", "--output-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ.copy(),
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return json.loads((out / "results.json").read_text()), (out / "results.md").read_text()


def numbers(value: Any) -> list[float]:
    """Every number inside a row value (lists included; booleans are not numbers)."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, list):
        return [n for item in value for n in numbers(item)]
    return []


@pytest.mark.end_to_end
def test_smoke_runs_every_step_with_finite_positive_numbers(smoke):
    report, table = smoke
    assert list(report["steps"]) == list(gpu("run").DEFAULT_STEPS)
    env = report["environment"]
    assert env["smoke"] is True and env["dtype"] == "torch.bfloat16"
    assert env["versions"]["torch"] == torch.__version__
    for name, step in report["steps"].items():
        assert step["status"] == "ok", (name, step.get("error"))
        assert step["rows"], name
        for row in step["rows"]:
            assert "skipped" not in row, (name, row)
            for key, value in row.items():
                for number in numbers(value):
                    assert math.isfinite(number), (name, key, value)
                    if key.endswith(("_s", "_per_s", "_gbs")) or key == "seconds":
                        assert number > 0, (name, key, value)
        assert f"| {name} | ok |" in table
        assert f"\n## {name}\n" in table
    assert report["steps"]["generation"]["copy_bandwidth_gbs"] > 0


@pytest.mark.end_to_end
def test_smoke_losses_are_float32_and_reference_on_the_policy_device(smoke):
    rows = smoke[0]["steps"]["training"]["rows"]
    settings = {(r["method"], r["reference"], r["checkpointing"]) for r in rows}
    assert settings == {
        (m, ref, c)
        for m in ("kl", "npo")
        for ref in ("adapter_disabled", "frozen_copy")
        for c in (False, True)
    }
    for row in rows:
        assert row["logits_dtype"] == "torch.bfloat16"  # the model really ran in bf16
        assert row["loss_dtype"] == "torch.float32"
        assert row["term_dtypes"] == ["torch.float32"]
        assert row["log_prob_dtype"] == row["ref_log_prob_dtype"] == "torch.float32"
        assert row["reference_device"] == row["policy_device"]
        assert row["reference_is_copy"] == (row["reference"] == "frozen_copy")
        assert row["loss_finite"] is True


@pytest.mark.end_to_end
def test_smoke_callback_evaluations_give_their_tensors_back(smoke):
    rows = [r for r in smoke[0]["steps"]["callback"]["rows"] if "evaluations" in r]
    assert [r["max_queries_per_owner"] for r in rows] == [1, 2]
    for row in rows:
        before, after = row["live_tensors_before"], row["live_tensors_after"]
        assert row["evaluations"] == len(before) == len(after) >= 3
        # What an evaluation leaves alive is what was alive before it.
        assert all(a <= b for a, b in zip(after, before, strict=True)), (before, after)
        # After the first step (optimizer state made), evaluations leave the count flat.
        assert after[-1] <= after[1], after
        assert 0 < row["callback_share"] < 1
        assert row["queries"] == 2 * row["max_queries_per_owner"]


@pytest.mark.end_to_end
def test_smoke_generation_stays_under_the_bandwidth_limit(smoke):
    step = smoke[0]["steps"]["generation"]
    paths = ["waterdrum", "transformers", "static"]
    assert [(r["batch"], r["path"]) for r in step["rows"]] == [
        (batch, path) for batch in ("auto", "4") for path in paths
    ]
    for row in step["rows"]:
        # Warm: an untimed call, then the median of the timed ones, inside their range.
        assert row["repeats"] == 2 and row["first_seconds"] > 0
        low, high = row["seconds_range"]
        assert low <= row["seconds"] <= high
        compiled = [line for line in row["log"] if line.startswith("Static KV cache")]
        assert bool(compiled) == (row["path"] == "static")
        assert row["sequences"] == 2 * row["queries"]  # 2 samples per query
        assert 0 < row["tokens_per_s"] <= row["tokens_per_s_limit_weights"]
        assert row["tokens_per_s_limit_weights_kv"] <= row["tokens_per_s_limit_weights"]
        assert row["mean_new_tokens"] <= 6  # at most max_new_tokens per completion


@pytest.mark.end_to_end
def test_smoke_verification_reads_the_watermark_and_the_processor_follows_the_scores(smoke):
    end_to_end, *shuffles = smoke[0]["steps"]["verification"]["rows"]
    assert end_to_end["retain"] > end_to_end["forget"] + 0.3  # watermarked vs not
    assert end_to_end["separability_auroc"] == 1.0
    assert end_to_end["processor_meta_device"] == "meta"
    assert end_to_end["processor_meta_dtype"] == "torch.bfloat16"
    assert [row["stage"] for row in shuffles] == ["shuffle, toy corpus", "shuffle, Zipf words"]
    for row in shuffles:
        assert row["shuffle_cpu_exact"] is True
        # Two clocks, one run each: on a busy CPU the shuffles alone can read a little longer
        # than the whole verification that contains them (measured here: 0.38 to 1.07).
        assert 0 < row["shuffle_share_of_verify"] < 2
        assert row["groups"] <= row["pairs"]


@pytest.mark.end_to_end
def test_smoke_score_runs_the_command_on_an_adapter_and_splits_its_seconds(smoke):
    (row,) = smoke[0]["steps"]["score"]["rows"]
    sizes = gpu("common").SMOKE_SIZES
    assert row["exit_code"] == 0
    assert row["queries"] == sizes.score_owners * sizes.score_texts_per_owner
    assert row["new_tokens"] == row["queries"] * sizes.num_samples * sizes.new_tokens
    # The stages are timed inside the command's own seconds.
    assert row["load_model_s"] + row["sample_s"] + row["rest_s"] == pytest.approx(row["command_s"])
    assert row["sample_tokens_per_s"] == pytest.approx(row["new_tokens"] / row["sample_s"])
    assert -1 <= row["forget"] <= 1 and -1 <= row["retain"] <= 1


def test_a_stage_timer_gives_the_functions_back_and_counts_their_seconds():
    import types

    module = types.SimpleNamespace(wait=lambda seconds: __import__("time").sleep(seconds) or 7)
    original = module.wait
    with gpu("score").stage_seconds(module, ("wait",)) as seconds:
        assert module.wait(0.02) == 7 and module.wait(0.01) == 7
    assert module.wait is original
    assert 0.03 <= seconds["wait"] < 1


def test_processor_output_follows_meta_scores_in_every_float_dtype():
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        checks = gpu("verification").processor_checks(64, dtype)
        assert checks == {"processor_meta_device": "meta", "processor_meta_dtype": str(dtype)}


def test_selecting_steps_by_name_and_refusing_unknown_ones(tmp_path):
    parse_args = gpu("run").parse_args
    args = parse_args(["--only", "generation, training", "--output-dir", str(tmp_path)])
    assert args.steps == ["generation", "training"]
    with pytest.raises(SystemExit):
        parse_args(["--only", "trainng", "--output-dir", str(tmp_path)])


def test_batches_and_queries_per_owner_narrow_a_run_in_the_order_given(tmp_path):
    parse_args = gpu("run").parse_args
    out = ["--output-dir", str(tmp_path)]
    args = parse_args(["--batches", "160, auto,32", "--queries-per-owner", "16", *out])
    assert args.sizes == {"batches": (160, "auto", 32), "queries_per_owner": (16,)}
    assert parse_args(out).sizes == {}
    for bad in (["--batches", "0"], ["--batches", "big"], ["--queries-per-owner", "auto"]):
        with pytest.raises(SystemExit):
            parse_args([*bad, *out])


# ---- what only a GPU shows (skipped without CUDA) -------------------------------------------


def cuda_setup() -> Any:
    common = gpu("common")
    return common.Setup(common.SMOKE_SHAPE, common.SMOKE_SIZES, torch.device("cuda"))


@pytest.mark.cuda
@needs_cuda
@pytest.mark.parametrize("reference", ["adapter_disabled", "frozen_copy"])
def test_cuda_training_losses_float32_reference_on_gpu_memory_freed(reference):
    common = gpu("common")
    setup = cuda_setup()
    common.warm_up(setup.device)  # cuBLAS's workspace is the process's, not the setting's
    before = common.allocated_gib(setup.device)
    row = gpu("training").train_once(setup, "kl", reference, checkpointing=True)
    assert row["policy_device"] == row["reference_device"] == "cuda:0"
    assert row["loss_dtype"] == row["log_prob_dtype"] == "torch.float32"
    assert row["logits_dtype"] == "torch.bfloat16"
    assert row["peak_gib"] > 0
    assert common.allocated_gib(setup.device) <= before + 1e-3  # the setting freed its model


@pytest.mark.cuda
@needs_cuda
def test_cuda_processor_matches_cpu_on_gpu_scores():
    from waterdrum_hf import WaterfallLogitsProcessor

    input_ids = torch.tensor([[3, 4], [5, 6]])
    scores = torch.randn(2, 300)
    outputs = {}
    for device in ("cpu", "cuda"):
        processor = WaterfallLogitsProcessor(256, 12345)
        processor.reset(prompt_length=1)
        out = processor(input_ids.to(device), scores.to(device, torch.bfloat16))
        assert out.device.type == device and out.dtype == torch.bfloat16
        outputs[device] = out.float().cpu()
    torch.testing.assert_close(outputs["cuda"], outputs["cpu"])


@pytest.mark.cuda
@needs_cuda
def test_cuda_generate_gives_its_memory_back_and_auto_batch_fits():
    from waterdrum_hf import auto_batch_size, generate

    common = gpu("common")
    setup = cuda_setup()
    model = common.build_model(setup).eval()
    tokenizer = common.word_tokenizer(setup.shape.vocab_size)
    assert auto_batch_size(model, 50, 200) > 1
    common.release(setup.device)
    before = torch.cuda.memory_allocated()
    for _ in range(2):
        generate(model, tokenizer, ["w5 w6 w7"] * 4, num_samples=3, max_new_tokens=8, seed=0)
        common.release(setup.device)
        assert torch.cuda.memory_allocated() == before
