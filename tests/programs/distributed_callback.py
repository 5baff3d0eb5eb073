"""Run under `torchrun --nproc_per_node 2`: a Trainer with WaterDrumCallback on two processes.

Each process writes its log_history to <argv[1]>/rank<r>.json.
"""

import json
import sys
from pathlib import Path

import torch.distributed
from datasets import Dataset
from transformers import DataCollatorForLanguageModeling, Trainer, TrainingArguments

from waterdrum_hf import CallbackPlan, SamplingConfig, WaterDrumCallback, tiny
from waterdrum_hf.data import toy_corpus

out = Path(sys.argv[1])
model, tokenizer = tiny.load(show_progress=False)
rows = toy_corpus(3, max_passages_per_owner=2)
keys = [2_876_543_219, 3_456_789_011, 4_012_345_677]
corpus = Dataset.from_dict({"text": rows["text"], "owner_id": [keys[o] for o in rows["owner_id"]]})
train = corpus.map(
    lambda b: tokenizer(
        [t + tokenizer.eos_token for t in b["text"]], truncation=True, max_length=64
    ),
    batched=True,
    remove_columns=corpus.column_names,
)
callback = WaterDrumCallback.from_dataset(
    corpus,
    [keys[2]],
    tokenizer,
    tokenizer,
    plan=CallbackPlan(eval_steps=1),
    sampling=SamplingConfig(num_samples=1, max_new_tokens=6, seed=0),
    prefix_tokens=6,
)
trainer = Trainer(
    model=model.train(),
    args=TrainingArguments(
        output_dir=str(out / "run"),
        max_steps=2,
        per_device_train_batch_size=2,
        use_cpu=True,
        report_to="none",
        save_strategy="no",
        logging_steps=1,
        disable_tqdm=True,
    ),
    train_dataset=train,
    data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
    processing_class=tokenizer,
    callbacks=[callback],
)
callback.bind(trainer)  # a plain Trainer does not bind it
trainer.train()
rank = trainer.accelerator.process_index
report = {"processes": trainer.accelerator.num_processes, "log_history": trainer.state.log_history}
(out / f"rank{rank}.json").write_text(json.dumps(report))
trainer.accelerator.wait_for_everyone()
torch.distributed.destroy_process_group()  # a clean exit (see distributed_generate.py)
