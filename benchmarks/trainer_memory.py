"""Peak memory of KL unlearning with a LoRA model: adapter-disabled reference vs a frozen copy.

Both runs train the same LoRA adapter (r 8, alpha 32, dropout 0.05, all linear layers but
lm_head, as in the paper) on a randomly initialised ``LlamaForCausalLM`` whose weights dominate
memory (about 120M parameters, 456 MiB in float32, by default). ``adapter_disabled`` lets
:class:`waterdrum_hf.trainers.KLTrainer` run the reference as the same model with its adapter
disabled; ``frozen_copy`` passes a separate frozen copy of the base model as ``ref_model``
(what a trainer without adapter toggling keeps). Each run is its own subprocess, so its peak
resident memory (``ru_maxrss``) belongs to it alone; the peak above the interpreter with torch,
transformers and the data loaded is what the trainer costs. The runs set glibc's
``MALLOC_MMAP_THRESHOLD_`` to 128 KiB: otherwise glibc raises that threshold as tensors are
freed and keeps later activations in its heap after they are freed, and ``ru_maxrss`` counts
that retention on top of the live peak. The last line prints the ratio (goal: <= 0.6).

    python benchmarks/trainer_memory.py
    python benchmarks/trainer_memory.py --hidden-size 1536 --max-length 128
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import subprocess
import sys
import tempfile

VARIANTS = ("adapter_disabled", "frozen_copy")


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def measure(args: argparse.Namespace) -> dict[str, float]:
    """One KL run (``args.worker``) in this process; returns its memory figures."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    import waterdrum_hf.tiny as tiny
    from waterdrum_hf.data import split_by_owner, toy_corpus
    from waterdrum_hf.trainers import KLConfig, KLTrainer

    _, tokenizer = tiny.load(show_progress=False)
    forget, retain = split_by_owner(toy_corpus(4, max_passages_per_owner=8), [3])
    baseline = peak_rss_mib()
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=args.vocab_size,
        hidden_size=args.hidden_size,
        intermediate_size=int(2.75 * args.hidden_size),
        num_hidden_layers=args.layers,
        num_attention_heads=8,
        num_key_value_heads=8,
        pad_token_id=tokenizer.pad_token_id,
    )
    base = LlamaForCausalLM(config)
    num_parameters = base.num_parameters()
    ref_model = copy.deepcopy(base).eval() if args.worker == "frozen_copy" else None
    lora = LoraConfig(r=8, lora_alpha=32, lora_dropout=0.05, target_modules="all-linear")
    trainer = KLTrainer(
        model=get_peft_model(base, lora),
        ref_model=ref_model,
        args=KLConfig(
            output_dir=args.output_dir,
            use_cpu=True,
            report_to="none",
            save_strategy="no",
            disable_tqdm=True,
            per_device_train_batch_size=args.batch_size,
            max_steps=args.steps,
            max_length=args.max_length,
            logging_steps=args.steps,
        ),
        forget_dataset=forget,
        retain_dataset=retain,
        processing_class=tokenizer,
    )
    trainer.train()
    peak = peak_rss_mib()
    return {
        "parameters": num_parameters,
        "weights_mib": num_parameters * 4 / 2**20,
        "baseline_mib": baseline,
        "peak_mib": peak,
        "trainer_mib": peak - baseline,
    }


def spawn(args: argparse.Namespace, variant: str, output_dir: str) -> dict[str, float]:
    command = [
        sys.executable, __file__, "--worker", variant, "--output-dir", output_dir,
        "--vocab-size", str(args.vocab_size), "--hidden-size", str(args.hidden_size),
        "--layers", str(args.layers), "--batch-size", str(args.batch_size),
        "--max-length", str(args.max_length), "--steps", str(args.steps),
    ]  # fmt: skip
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "MALLOC_MMAP_THRESHOLD_": "131072"}
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{variant} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab-size", type=int, default=8192)
    parser.add_argument("--hidden-size", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--max-length", type=int, default=64, help="tokens per example")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--worker", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--output-dir", help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if args.worker:
        print(json.dumps(measure(args)))
        return
    with tempfile.TemporaryDirectory() as workdir:
        results = {variant: spawn(args, variant, workdir) for variant in VARIANTS}
    first = results[VARIANTS[0]]
    print(
        f"KL unlearning, LoRA r 8 on LlamaForCausalLM with {first['parameters'] / 1e6:.1f}M "
        f"parameters ({first['weights_mib']:.0f} MiB of float32 weights), batch "
        f"{args.batch_size} x {args.max_length} tokens, {args.steps} steps, CPU"
    )
    for variant, result in results.items():
        print(
            f"  {variant:16s} peak RSS {result['peak_mib']:7.0f} MiB, above the imports "
            f"{result['trainer_mib']:7.0f} MiB"
        )
    saved = results["frozen_copy"]["trainer_mib"] - results["adapter_disabled"]["trainer_mib"]
    print(f"  saved by disabling the adapter: {saved:.0f} MiB")
    ratio = results["adapter_disabled"]["trainer_mib"] / results["frozen_copy"]["trainer_mib"]
    peak_ratio = results["adapter_disabled"]["peak_mib"] / results["frozen_copy"]["peak_mib"]
    print(
        f"ratio adapter_disabled/frozen_copy: {ratio:.2f} above the imports "
        f"({peak_ratio:.2f} of the whole process peak)"
    )


if __name__ == "__main__":
    main()
