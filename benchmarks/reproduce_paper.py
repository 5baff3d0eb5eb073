"""Reproduce the WaterDrum paper's claims at small scale: ``waterdrum reproduce`` as a script.

    python benchmarks/reproduce_paper.py --output-dir benchmarks/results/reproduction   # default, about 54 min on 2 cores from an empty cache
    python benchmarks/reproduce_paper.py --quick --output-dir /tmp/reproduction         # ~5 minutes
    python benchmarks/reproduce_paper.py --dataset-name toy-qa --fractions 0 0.2 0.4 0.6 0.8 1 \
        --methods graddiff kl npo taskvector --output-dir benchmarks/results/reproduction_qa  # questions
    python benchmarks/reproduce_paper.py --dataset-name waterdrum-ax --model-name-or-path meta-llama/Llama-2-7b-hf \\
        --watermark-tokenizer meta-llama/Llama-3.1-8B-Instruct --output-dir ax-run      # the published setting, GPU

Every option: ``python benchmarks/reproduce_paper.py --help`` (the same as ``waterdrum reproduce``).
"""

import sys

from waterdrum_hf.scripts import main

if __name__ == "__main__":
    sys.exit(main(["reproduce", *sys.argv[1:]]))
