"""Waterfall (Lau et al., 2024): its function, logits processor and scheme."""
