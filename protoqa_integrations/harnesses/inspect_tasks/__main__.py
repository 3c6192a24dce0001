"""``python -m protoqa_integrations.harnesses.inspect_tasks``: print the task file for ``inspect eval FILE@protoqa``;
``... model-config``: print the ``--model-config`` file that sends a base model the prompt unchanged.
"""

from __future__ import annotations

import sys

from . import model_config_file, tasks_file

USAGE = (
    "usage: python -m protoqa_integrations.harnesses.inspect_tasks [model-config] (without arguments: print the task file "
    "for inspect eval FILE@protoqa; model-config: print the --model-config file for a base model)"
)


def main(argv: list[str]) -> int:
    if not argv:
        print(tasks_file())
        return 0
    if argv == ["model-config"]:
        print(model_config_file())
        return 0
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
