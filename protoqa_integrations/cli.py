"""``protoqa-eval``, the installed command: one parser for every sub-command.

The sub-commands are the entries of :data:`COMMANDS`, each a :class:`~protoqa_core.cli.Subcommand`
defined next to its code; a new sub-command is one more entry.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Optional

from protoqa_core import __version__
from protoqa_core.cli import Subcommand, run_subcommands
from protoqa_core.io.files import ProtoQAWarning
from protoqa_integrations.generation import cli as generate_cli
from protoqa_integrations.leaderboard import cli as leaderboard_cli
from protoqa_metric import cli as metric_cli

__all__ = ["COMMANDS", "main"]

COMMANDS: dict[str, Subcommand] = {**metric_cli.COMMANDS, **generate_cli.COMMANDS, **leaderboard_cli.COMMANDS}
"""Every ``protoqa-eval`` sub-command, in the order ``--help`` lists them."""

DESCRIPTION = (
    f"{metric_cli.DESCRIPTION} 'generate' samples a language model's answers into an answers file; "
    "'score-generated' scores one; 'leaderboard' ranks several systems; 'convert' writes lm-eval, lighteval or Inspect "
    "outputs as an answers file."
)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``protoqa-eval``; returns the exit status (0 ok, 2 bad input, output or set-up).

    The sub-commands are those of :data:`COMMANDS`:

    >>> list(COMMANDS)
    ['evaluate', 'compare', 'prepare', 'generate', 'score-generated', 'leaderboard', 'convert']
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
