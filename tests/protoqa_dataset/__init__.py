"""Tests of ``protoqa_dataset``."""
