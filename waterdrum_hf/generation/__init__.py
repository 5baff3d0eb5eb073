"""Prompting and generation, the first step of the flow: queries from owners' data
(:mod:`.prompting`), how to sample (:mod:`.sampling`), transformers' ``generate`` under it
(:mod:`.engine`), vLLM and OpenAI-compatible servers (:mod:`.vllm_engine`, :mod:`.server`), and
paraphrasing by diverse beam search or sampling (:mod:`.paraphraser`)."""
