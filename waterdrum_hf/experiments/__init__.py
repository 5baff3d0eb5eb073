"""Experiment machinery, not API: the stage cache, the cached pipeline, the demo, the baselines
and the paper's reproduction. Nothing in the library imports this package; ``cli`` and the
benchmarks do.
"""
