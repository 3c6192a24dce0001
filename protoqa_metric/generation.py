"""Moved to :mod:`protoqa_integrations.generation`; this name is kept for one release."""

from protoqa_core.moved import alias_module

alias_module(__name__, "protoqa_integrations.generation")
