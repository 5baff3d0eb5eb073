"""Watch WaterDrum forget/retain curves while a model unlearns, in TensorBoard and a PNG.

Offline, on a CPU, in about two minutes: the built-in tiny model paraphrases (watermarks) the
built-in corpus, each owner under its own secret key; the model is fine-tuned on all of it;
then the KL trainer unlearns one owner while ``WaterDrumCallback`` samples completions every
few steps, verifies them with the owners' keys and logs ``waterdrum/forget``,
``waterdrum/retain``, ... through the trainer, next to the loss.

    python examples/monitor_unlearning.py --output-dir monitor_run
    tensorboard --logdir monitor_run/runs        # train/waterdrum/forget, train/loss, ...

The rule ``--stop-forget-ratio`` stops unlearning once the forget value has fallen to that
share of its step-0 value (while the retain value keeps 80 % of its own), and saves that model.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from datasets import Dataset

import waterdrum_hf
from waterdrum_hf import (
    CallbackPlan,
    SamplingConfig,
    WaterDrumCallback,
    WatermarkedDataset,
    key_from_secret,
)
from waterdrum_hf.data import split_by_owner, toy_corpus
from waterdrum_hf.experiments.training import TrainingSettings, finetune
from waterdrum_hf.report import plot_curves
from waterdrum_hf.trainers import KLConfig, KLTrainer


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--output-dir",
        default="monitor_run",
        help="folder of TensorBoard logs, the plot and the model",
    )
    parser.add_argument(
        "--owners", type=int, default=4, help="data owners; the last one is forgotten"
    )
    parser.add_argument("--passages-per-owner", type=int, default=6, help="passages per owner")
    parser.add_argument("--steps", type=int, default=24, help="unlearning steps")
    parser.add_argument(
        "--eval-steps", type=int, default=4, help="WaterDrum evaluation every this many steps"
    )
    parser.add_argument(
        "--stop-forget-ratio", type=float, help="stop once forget falls to this share of its start"
    )
    parser.add_argument(
        "--secret", default="demo secret: keep yours private", help="derives each owner's key"
    )
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)  # the tiny model gains nothing from more threads
    out = Path(args.out)
    model, tokenizer = waterdrum_hf.tiny.load()

    # Data owners: each derives its private key from a secret and its name, then watermarks.
    corpus = toy_corpus(args.owners, max_passages_per_owner=args.passages_per_owner)
    names = [f"owner-{i + 1}" for i in range(args.owners)]
    keys = [key_from_secret(args.secret, name) for name in names]
    corpus = corpus.map(lambda row: {"owner_id": keys[row["owner_id"]]})
    watermarker = WatermarkedDataset(model, tokenizer, seed=0, no_repeat_ngram_size=3)
    watermarked = corpus.map(watermarker, batched=True, batch_size=64)
    print(
        f"Watermarked {len(watermarked)} passages (self-check q = "
        f"{sum(watermarked['watermark_score']) / len(watermarked):.2f})"
    )

    # The model owner trains on everything, then is asked to forget the last owner.
    original = finetune(
        model,
        tokenizer,
        watermarked["text"],
        out / "finetune",
        epochs=30,
        training=TrainingSettings(batch_size=4, learning_rate=2e-3, seed=0),
    )
    forget, retain = split_by_owner(watermarked, [keys[-1]])
    callback = WaterDrumCallback.from_dataset(
        watermarked,
        [keys[-1]],
        tokenizer,
        tokenizer,
        prefix_tokens=24,
        owner_names=dict(zip(keys, names, strict=True)),
        sampling=SamplingConfig(num_samples=1, max_new_tokens=48, seed=0),
        plan=CallbackPlan(
            eval_steps=args.eval_steps,
            stop_when={"max_forget_ratio": args.stop_forget_ratio, "min_retain_ratio": 0.8}
            if args.stop_forget_ratio is not None
            else None,
            save_on_stop=args.stop_forget_ratio is not None,
        ),
    )
    trainer = KLTrainer(
        model=original.train(),
        args=KLConfig(
            output_dir=str(out),
            max_steps=args.steps,
            per_device_train_batch_size=4,
            learning_rate=5e-4,
            logging_steps=2,
            report_to=["tensorboard"],
            use_cpu=True,
            save_strategy="no",
            seed=0,
        ),
        forget_dataset=Dataset.from_dict({"text": forget["text"]}),
        retain_dataset=Dataset.from_dict({"text": retain["text"]}),
        processing_class=tokenizer,
        callbacks=[callback],  # bound to this trainer (a plain Trainer needs callback.bind)
    )
    trainer.train()

    plot = plot_curves({"kl": callback.history}, out / "waterdrum_curves.png")
    for point in callback.history:
        print(
            f"step {point['step']:>3}: forget {point['forget']:+.3f}  retain {point['retain']:+.3f}"
        )
    if callback.stopped_at is not None:
        print(f"Stopped at step {callback.stopped_at}: {callback.stop_reason}")
    print(f"Curves: {plot}; TensorBoard: tensorboard --logdir {out / 'runs'}")


if __name__ == "__main__":
    main()
