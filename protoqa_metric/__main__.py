"""``python -m protoqa_metric``: the ``protoqa-eval`` command, with every one of its sub-commands.

The command joins sub-commands of the packages above this one, so its table is run by the name of
the module that holds it (the command's entry point in setup.cfg) rather than imported from here,
and without looking the entry point up among the installed distributions' metadata on every run.
"""

import importlib
import sys

sys.exit(importlib.import_module("protoqa_integrations.cli").main())
