"""``protoqa-eval``, the installed command: one parser for every sub-command.

    protoqa-eval TARGETS PREDICTIONS [...]                     (evaluate, the default)
    protoqa-eval compare TARGETS PREDICTIONS_A PREDICTIONS_B [...]
    protoqa-eval generate MODEL -o ANSWERS.json [--dataset protoqa|cfc] [--split validation|test] ...
    protoqa-eval score-generated ANSWERS.json [--json]

The sub-commands are the entries of :data:`COMMANDS`, each a
:class:`~protoqa_core.cli_io.Subcommand` (its arguments and what it runs) defined next to
its code: :data:`protoqa_metric.cli.COMMANDS` and :data:`protoqa_integrations.generate_cli.COMMANDS`.
A new sub-command is one more entry.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Optional

from protoqa_core import __version__
from protoqa_core.cli_io import Subcommand, run_subcommands
from protoqa_metric import cli as metric_cli
from protoqa_metric.metric_set import ProtoQAWarning

from . import generate_cli

__all__ = ["COMMANDS", "main"]

COMMANDS: dict[str, Subcommand] = {**metric_cli.COMMANDS, **generate_cli.COMMANDS}
"""Every ``protoqa-eval`` sub-command, in the order ``--help`` lists them.

>>> list(COMMANDS)
['evaluate', 'compare', 'generate', 'score-generated']
"""

DESCRIPTION = (
    f"{metric_cli.DESCRIPTION} 'generate' samples a language model's answers into an answers file; "
    "'score-generated' scores one."
)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``protoqa-eval``; returns the exit status (0 ok, 2 bad input, output or set-up).

    >>> main(["generate", "--help"])  # doctest: +SKIP
    """
    return run_subcommands(
        "protoqa-eval",
        DESCRIPTION,
        COMMANDS,
        list(sys.argv[1:] if argv is None else argv),
        version=__version__,
        default="evaluate",
        always_show=(ProtoQAWarning,),
    )
