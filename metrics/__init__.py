"""`evaluate` metric modules shipped with waterdrum-hf (importable as ``waterdrum_hf.metrics``).

Each sub-folder is a self-contained `evaluate` module (script + metric card) that can be loaded
by absolute path, e.g. through :func:`waterdrum_hf.load_metric`.
"""
