"""Tests of ``protoqa_eval``."""
