"""Tests of the demo Space (``space/``)."""
