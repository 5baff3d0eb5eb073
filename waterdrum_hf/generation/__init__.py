"""Prompting and generation, the first step of the flow: queries from owners' data
(:mod:`.prompting`), how to sample (:mod:`.sampling`) and transformers' ``generate`` under it
(:mod:`.engine`)."""
