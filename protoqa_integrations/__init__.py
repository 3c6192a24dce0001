"""Integrations of both metrics with the Hugging Face stack: Trainer hooks, prompts, sampling from
language models (``protoqa-eval generate``), lm-evaluation-harness tasks and Hub folders.

This layer sits above :mod:`protoqa_metric`, :mod:`cfc_probeval` and :mod:`protoqa_dataset`
and may import them; nothing below imports it (ARCHITECTURE.md).
"""
