"""Sampling a language model's answers: the settings and prompts (:mod:`.settings`, :mod:`.prompts`), the
seeded nucleus draw (:mod:`.nucleus`), batched sampling from a causal language model (:mod:`.sampling`), the
engines ``hf``, ``vllm`` and ``openai`` behind one interface (:mod:`.engines`), the answers file with its
resume journal (:mod:`.answers_file`, :mod:`.answers_journal`), what an answers file records of its provenance
(:mod:`.provenance`) and ``protoqa-eval generate`` (:mod:`.cli`)."""
