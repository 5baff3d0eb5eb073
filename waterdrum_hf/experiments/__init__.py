"""Experiment machinery, not API: the stage cache, the cached pipeline, the demo and the
paper's reproduction (the baseline metrics it compares with are
:mod:`waterdrum_hf.baselines`). Nothing in the library imports this package; ``cli`` and the
benchmarks do.
"""
