"""``python -m protoqa_metric``: the installed ``protoqa-eval`` command, with every one of its sub-commands.

The command joins sub-commands of the packages above this one, so it is found as installed (its entry point)
rather than imported from here.
"""

import sys
from importlib.metadata import entry_points

scripts = entry_points(group="console_scripts", name="protoqa-eval")
if not scripts:
    sys.exit("python -m protoqa_metric: error: protoqa-eval is not installed (pip install protoqa-eval)")
sys.exit(next(iter(scripts)).load()())
