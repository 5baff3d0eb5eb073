"""Neutral helpers below the reader and the writer: argument checks, dataclass fields, local
files, digests, progress bars, torch plumbing, backend logs and warnings aimed at the caller."""
