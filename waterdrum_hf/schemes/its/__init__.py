"""ITS (Kuditipudi et al., 2023), a model owner's watermark: its one-key test and processor."""
