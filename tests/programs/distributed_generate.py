"""Run under `torchrun --nproc_per_node 2` (gloo on CPU): distributed `generate`.

Writes, from the main process, what every process got back to the JSON file named by argv[1].
"""

import json
import sys

import torch.distributed
from accelerate import Accelerator
from accelerate.utils import gather_object

from waterdrum_hf import generate, tiny

QUERIES = ["The class", "A lambda", "The import", "Exceptions are", "A module"]

accelerator = Accelerator(cpu=True)
model, tokenizer = tiny.load(show_progress=False)
prepared = accelerator.prepare(model)
kwargs = {"num_samples": 2, "max_new_tokens": 6, "seed": 0}
together = generate(prepared, tokenizer, QUERIES, accelerator=accelerator, **kwargs)
# A wrapped model without an accelerator: unwrapped, every query on every process.
everything = generate(prepared, tokenizer, QUERIES, **kwargs)
seen = gather_object([{"together": together, "everything": everything}])
if accelerator.is_main_process:
    with open(sys.argv[1], "w") as handle:
        json.dump({"processes": accelerator.num_processes, "seen": seen}, handle)
accelerator.wait_for_everyone()
# An exit with the process group alive can abort ("terminate called without an active
# exception") while C++ threads shut down: end it as a distributed program should.
torch.distributed.destroy_process_group()
