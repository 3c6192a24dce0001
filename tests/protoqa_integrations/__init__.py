"""Tests of ``protoqa_integrations``."""
