"""TRL-style unlearning trainers (importable as ``waterdrum_hf.trainers``)."""
