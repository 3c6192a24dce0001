"""``protoqa-eval``, the installed command: the metric's commands plus the language-model ones.

protoqa-eval TARGETS PREDICTIONS [...]                 (protoqa_metric.cli)
protoqa-eval compare TARGETS PREDICTIONS_A PREDICTIONS_B [...]
protoqa-eval generate MODEL -o ANSWERS.json [--dataset protoqa|cfc] [--split validation|test] ...
protoqa-eval score-generated ANSWERS.json [--json]     (protoqa_integrations.generate_cli)
protoqa-eval leaderboard TARGETS NAME=FILE [NAME=FILE ...] (protoqa_integrations.leaderboard_cli)
protoqa-eval convert HARNESS_OUTPUT -o ANSWERS.json
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Optional

from protoqa_core.cli_io import run_command
from protoqa_metric import cli as metric_cli

__all__ = ["main"]

MODEL_COMMANDS = ("generate", "score-generated")
BOARD_COMMANDS = ("leaderboard", "convert")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``protoqa-eval``; returns the exit status (0 ok, 2 bad input, output or set-up).

    >>> main(["generate", "--help"])  # doctest: +SKIP
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in MODEL_COMMANDS:
        # transformers is imported only for these commands
        from . import generate_cli

        command = generate_cli.main if args[0] == "generate" else generate_cli.score_main
        return run_command(f"protoqa-eval {args[0]}", lambda: command(args[1:]))
    if args and args[0] in BOARD_COMMANDS:
        from . import leaderboard_cli

        board = leaderboard_cli.leaderboard_main if args[0] == "leaderboard" else leaderboard_cli.convert_main
        return run_command(f"protoqa-eval {args[0]}", lambda: board(args[1:]))
    return metric_cli.main(args)
