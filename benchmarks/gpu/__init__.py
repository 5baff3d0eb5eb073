"""GPU measurements of waterdrum-hf at the paper's shapes (issue 34), with a CPU smoke mode.

``python -m benchmarks.gpu --only training,generation --output-dir DIR`` runs the named steps
(:data:`benchmarks.gpu.run.STEPS`) and writes ``results.json`` and ``results.md`` to ``DIR``;
``--smoke`` runs every step on the CPU at a tiny shape in about a minute. ``run.sh`` installs
the carried wheels first (see ``README.md`` here).
"""
