"""Tests of ``cfc_probeval``."""
