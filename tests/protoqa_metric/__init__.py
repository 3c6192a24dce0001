"""Tests of ``protoqa_metric``."""
