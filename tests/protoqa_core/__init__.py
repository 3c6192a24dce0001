"""Tests of ``protoqa_core``."""
