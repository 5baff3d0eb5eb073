"""EXP-edit: its scheme (the edit-distance reader), logits processor and compiled kernel."""
