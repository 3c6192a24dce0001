"""Tests of the checkout as a whole: layers, documentation links, tooling, extras, and hostile inputs to every command."""
