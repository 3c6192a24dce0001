"""Tests of the studies (``studies/``)."""
