"""Unigram (Zhao et al., 2023), a model owner's watermark: its green list and processor."""
