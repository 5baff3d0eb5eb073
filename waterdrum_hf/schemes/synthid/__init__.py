"""Adapted Synth-ID: its scheme (g-values, the null) and its logits processor."""
